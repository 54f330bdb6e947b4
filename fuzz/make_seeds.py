#!/usr/bin/env python3
"""Writes the committed seed corpus of every fuzz target into fuzz/corpus/<target>/.

Each seed is small (well under 100 KB) and valid or nearly so, so that the fuzzer starts
from inputs that reach deep into the parser. Deterministic (no clock, fixed contents).
Sources: hand-written inputs below, tiny GGUF / safetensors files written here, the
chat templates of the real tokenizers in ../shared/data/tokenizers, and graphs that
`uaii compile` writes from the tiny GGUF (when BUILD_DIR/uaii exists).

usage: fuzz/make_seeds.py [BUILD_DIR]   (default build; run from the repository root)
"""
import json
import os
import struct
import subprocess
import sys

import numpy as np
import gguf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
SHARED = os.path.join(ROOT, "..", "shared", "data", "tokenizers")


def put(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    assert len(data) < 100_000, (target, name, len(data))
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# --- GGUF: tiny complete models (every hyperparameter, every tensor, a vocabulary) ----
def tiny_gguf(path, arch, vocab="llama"):
    n_vocab, n_embd, n_ff, n_head, n_kv, head_dim, n_layer = 24, 8, 16, 2, 1, 4, 1
    rng = np.random.default_rng(7)
    w = gguf.GGUFWriter(path, arch)
    w.add_context_length(64)
    w.add_embedding_length(n_embd)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_key_length(head_dim)
    w.add_value_length(head_dim)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    if arch == "gemma3":
        w.add_sliding_window(4)
    if vocab == "llama":
        tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(16)] + ["\u2581a", "\u2581b", "ab", "a", "b"]
        types = [2, 3, 3] + [6] * 16 + [1] * 5
        w.add_tokenizer_model("llama")
        w.add_token_scores([-float(i) for i in range(n_vocab)])
    else:
        tokens = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] + [chr(c) for c in range(ord("a"), ord("a") + 16)] + \
                 ["ab", "\u0120a", "\u0120", "cd", "abcd"]
        types = [3, 3, 3] + [1] * 21
        w.add_tokenizer_model("gpt2")
        w.add_tokenizer_pre("qwen2")
        w.add_token_merges(["a b", "\u0120 a", "c d", "ab cd"])
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_chat_template("{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}")

    def t(name, *shape):
        w.add_tensor(name, (rng.standard_normal(shape) * 0.1).astype(np.float32))

    t("token_embd.weight", n_vocab, n_embd)
    t("output_norm.weight", n_embd)
    t("output.weight", n_vocab, n_embd)
    for il in range(n_layer):
        p = f"blk.{il}."
        t(p + "attn_norm.weight", n_embd)
        t(p + "attn_q.weight", n_head * head_dim, n_embd)
        t(p + "attn_k.weight", n_kv * head_dim, n_embd)
        t(p + "attn_v.weight", n_kv * head_dim, n_embd)
        t(p + "attn_output.weight", n_embd, n_head * head_dim)
        t(p + "ffn_norm.weight", n_embd)
        t(p + "ffn_gate.weight", n_ff, n_embd)
        t(p + "ffn_up.weight", n_ff, n_embd)
        t(p + "ffn_down.weight", n_embd, n_ff)
        if arch in ("gemma3", "qwen3"):
            t(p + "attn_q_norm.weight", head_dim)
            t(p + "attn_k_norm.weight", head_dim)
        if arch == "gemma3":
            t(p + "post_attention_norm.weight", n_embd)
            t(p + "post_ffw_norm.weight", n_embd)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def gguf_seeds(tmp):
    out = {}
    for arch, vocab in [("llama", "llama"), ("qwen3", "gpt2"), ("gemma3", "llama"), ("qwen2", "gpt2")]:
        path = os.path.join(tmp, f"tiny-{arch}.gguf")
        tiny_gguf(path, arch, vocab)
        data = open(path, "rb").read()
        put("gguf", f"tiny-{arch}.gguf", data)
        out[arch] = path
    # The header alone, and one with a block count beyond the blocks.
    put("gguf", "header-only.gguf", b"GGUF" + struct.pack("<IQQ", 3, 0, 0))
    return out


# --- safetensors -----------------------------------------------------------------------
def safetensors_file(tensors, metadata=None):
    header, data = {}, b""
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    if metadata is not None:
        header["__metadata__"] = metadata
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data


def safetensors_seeds():
    f32 = np.arange(6, dtype=np.float32).tobytes()
    put("safetensors", "f32.safetensors", safetensors_file({"w": ("F32", [2, 3], f32)}, {"format": "pt"}))
    put("safetensors", "mixed.safetensors", safetensors_file({
        "a": ("BF16", [4], bytes(8)), "b": ("F16", [2, 2], bytes(8)), "c": ("I8", [3], b"\x01\xff\x7f"),
        "d": ("U8", [2], b"\x00\xff"), "e": ("BOOL", [1], b"\x01"), "f": ("F64", [1], bytes(8)),
        "g": ("I32", [0], b""), "h": ("F8_E4M3", [2], b"\x10\x20")}))
    put("safetensors", "empty.safetensors", safetensors_file({}))
    put("safetensors_index", "index.json", json.dumps({
        "metadata": {"total_size": 1234},
        "weight_map": {"model.embed_tokens.weight": "model-00001-of-00002.safetensors",
                       "lm_head.weight": "model-00002-of-00002.safetensors"}}))
    put("safetensors_index", "nested.json", json.dumps({"weight_map": {"a": "sub/dir/x.safetensors"}}))


# --- config.json -----------------------------------------------------------------------
def hf_config_seeds():
    base = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
            "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2,
            "num_hidden_layers": 2, "vocab_size": 320, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
            "max_position_embeddings": 256, "hidden_act": "silu", "tie_word_embeddings": False,
            "torch_dtype": "bfloat16", "bos_token_id": 1, "eos_token_id": [2, 3]}
    put("hf_config", "llama.json", json.dumps(base))
    put("hf_config", "llama3-rope.json", json.dumps({**base, "rope_scaling": {
        "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192}}))
    put("hf_config", "qwen2-yarn.json", json.dumps({**base, "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
        "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}}))
    put("hf_config", "gemma3.json", json.dumps({"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
        "text_config": {**base, "model_type": "gemma3_text", "head_dim": 16, "sliding_window": 8,
                        "query_pre_attn_scalar": 16, "rope_local_base_freq": 10000.0, "final_logit_softcapping": None,
                        "layer_types": ["sliding_attention", "full_attention"]}}))
    put("hf_config", "phi3-longrope.json", json.dumps({**base, "architectures": ["Phi3ForCausalLM"], "model_type": "phi3",
        "rope_scaling": {"type": "longrope", "long_factor": [1.0] * 8, "short_factor": [1.0] * 8},
        "original_max_position_embeddings": 128}))
    put("hf_config", "mixtral.json", json.dumps({**base, "architectures": ["MixtralForCausalLM"], "model_type": "mixtral",
        "num_local_experts": 4, "num_experts_per_tok": 2}))
    put("hf_config", "gpt2.json", json.dumps({"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": 64,
        "n_head": 4, "n_layer": 2, "n_positions": 128, "vocab_size": 320, "layer_norm_epsilon": 1e-5,
        "activation_function": "gelu_new"}))
    put("hf_config", "quantized.json", json.dumps({**base, "quantization_config": {"quant_method": "gptq", "bits": 4}}))


# --- tokenizer.json --------------------------------------------------------------------
def tokenizer_json_seeds():
    sep = "\n---tokenizer_config.json---\n"
    vocab = {c: i for i, c in enumerate(["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)])}
    for p in ["\u2581", "a", "b", "ab", "\u2581ab", "c"]:
        vocab[p] = len(vocab)
    spm = {"version": "1.0", "added_tokens": [
               {"id": 0, "content": "<unk>", "special": True, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False},
               {"id": 1, "content": "<s>", "special": True, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False},
               {"id": 2, "content": "</s>", "special": True, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False}],
           "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                                                              {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
           "pre_tokenizer": None,
           "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                                                       {"Sequence": {"id": "A", "type_id": 0}}],
                              "pair": [], "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
           "decoder": {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
                                                        {"type": "ByteFallback"}, {"type": "Fuse"},
                                                        {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
           "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                     "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True,
                     "vocab": vocab, "merges": ["a b", "\u2581 ab"]}}
    put("tokenizer_json", "spm-bpe.json", json.dumps(spm))
    put("tokenizer_json", "spm-bpe-config.json", json.dumps(spm) + sep +
        json.dumps({"add_bos_token": True, "add_eos_token": False, "bos_token": "<s>", "eos_token": "</s>"}))
    bl_vocab = {}
    for b in list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256)):
        bl_vocab[chr(b)] = len(bl_vocab)
    for n in range(0, 256):
        c = chr(256 + n)
        if len(bl_vocab) < 256:
            bl_vocab[c] = len(bl_vocab)
    for p in ["\u0120a", "ab", "\u0120ab"]:
        bl_vocab[p] = len(bl_vocab)
    byte_level = {"version": "1.0", "added_tokens": [
                      {"id": len(bl_vocab), "content": "<|im_start|>", "special": True, "single_word": False,
                       "lstrip": False, "rstrip": False, "normalized": False},
                      {"id": len(bl_vocab) + 1, "content": "<|im_end|>", "special": True, "single_word": False,
                       "lstrip": False, "rstrip": False, "normalized": False}],
                  "normalizer": {"type": "NFC"},
                  "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                      {"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
                       "behavior": "Isolated", "invert": False},
                      {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]},
                  "post_processor": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
                  "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
                  "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                            "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                            "vocab": bl_vocab, "merges": [["\u0120", "a"], ["a", "b"], ["\u0120a", "b"]]}}
    put("tokenizer_json", "byte-level-bpe.json", json.dumps(byte_level))
    put("tokenizer_json", "byte-level-config.json", json.dumps(byte_level) + sep + json.dumps({
        "add_bos_token": False, "eos_token": "<|im_end|>", "bos_token": None,
        "added_tokens_decoder": {str(len(bl_vocab)): {"content": "<|im_start|>", "special": True}}}))
    put("tokenizer_json", "unigram.json", json.dumps({"version": "1.0", "model": {"type": "Unigram", "vocab": [["a", -1.0]]}}))
    put("tokenizer_json", "wordpiece.json", json.dumps({"version": "1.0", "model": {"type": "WordPiece", "vocab": {"a": 0}}}))


# --- encode on arbitrary bytes: byte 0 picks the tokenizer, byte 1 the options ---------
def tokenize_seeds():
    texts = [b"Hello world", b" The capital of France is Paris.\n", b"<|im_start|>user\nhi<|im_end|>",
             "caf\u00e9 na\u00efve \u4f60\u597d \U0001f600 \u0645\u0631\u062d\u0628\u0627".encode(),
             b"\xff\xfe invalid \xc3\x28 utf8 \xe2\x82", b"   \t\t\n\n\n  x  ", b"12345678901234567890 3.14 1,000",
             b"<s></s><unk> <0x41>", b"don't I'll we've THEY'RE", b"a" * 300, b"\x00\x01\x02\x7f",
             "\u2581\u2581a\u2581b".encode()]
    for i, t in enumerate(texts):
        put("tokenize", f"text-{i:02d}", bytes([i % 12, i % 4]) + t)


# --- Jinja -------------------------------------------------------------------------------
def jinja_seeds():
    for name in ["llama3_1", "qwen3", "gemma3", "llama2", "llama3"]:
        p = os.path.join(SHARED, name, "tokenizer_config.json")
        if os.path.exists(p):
            t = json.load(open(p)).get("chat_template")
            if isinstance(t, str) and len(t.encode()) < 100_000:
                put("jinja", f"{name}.jinja", t)
    put("jinja", "loops.jinja", "{% for m in messages %}{{ loop.index }}:{{ m.role|upper }}{% if not loop.last %},{% endif %}"
        "{% endfor %}{% set ns = namespace(x=0) %}{% for i in range(10) %}{% set ns.x = ns.x + i %}{% endfor %}{{ ns.x }}")
    put("jinja", "macro.jinja", "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ n }}{% endif %}{% endmacro %}{{ f(5) }}"
        "{{ caller is defined }}{% call f(2) %}x{% endcall %}")
    put("jinja", "filters.jinja", "{{ messages|length }}{{ tools|tojson(indent=2) }}{{ 'a,b'.split(',')|join('-') }}"
        "{{ '  x '|trim }}{{ [3,1,2]|sort|list }}{{ {'b':1,'a':2}|dictsort }}{{ 'x' * 3 }}{{ 7 // 2 }}{{ 2 ** 10 }}"
        "{{ messages[0]['content'][:5] }}{{ 'abc'|replace('b','B') }}{{ none is none }}{{ raise_exception('e') if false }}")
    put("jinja", "strings.jinja", "{%- set x = 'Hi' ~ ' ' ~ bos_token -%}{{ x.startswith('Hi') }}{{ x.lower() }}"
        "{{ '%s=%d'|format('a', 1) }}{{ strftime_now('%Y-%m-%d') }}{# comment #}{% raw %}{{ raw }}{% endraw %}")
    put("jinja", "runaway.jinja", "{% for i in range(1000000) %}{% for j in range(1000000) %}x{% endfor %}{% endfor %}")
    put("jinja", "deep.jinja", "{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}")
    put("jinja", "output.jinja", "{% set s = 'x' * 1000 %}{% for i in range(100000) %}{{ s }}{% endfor %}")


# --- output parser: byte 0 = syntax (0..5) | flags << 3, byte 1 = split seed -------------
def output_parser_seeds():
    replies = [
        (1, b"<think>\nhmm\n</think>\n\nHello <tool_call>\n{\"name\": \"get\", \"arguments\": {\"x\": 1}}\n</tool_call>"),
        (2, b"<tool_call>\n<function=get>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call> done"),
        (3, b"<|channel>thought think<channel|>Sure <|tool_call>call:get{x:1,s:<|\"|>str<|\"|>}<tool_call|>"),
        (4, b"<|tool_call|>[{\"name\": \"get\", \"arguments\": {\"x\": [1, 2]}}]<|/tool_call|>"),
        (5, b"{\"name\": \"get\", \"parameters\": {\"x\": \"y\"}}; {\"name\": \"h\", \"parameters\": {}}"),
        (5, b"<|python_tag|>get.call(x=1)"),
        (0, "plain text with \xe2\x82\xac and a split \U0001f600 char".encode()),
        (1, b"<tool_call>{\"name\": broken</tool_call>text</think>more"),
    ]
    for i, (syntax, text) in enumerate(replies):
        flags = 1 | (2 if syntax == 3 else 0) | (4 if syntax == 4 else 0)
        put("output_parser", f"reply-{i:02d}", bytes([syntax | (flags << 3), i * 37 % 256]) + text)


# --- graphs ----------------------------------------------------------------------------
def ir_graph_seeds(build_dir, ggufs):
    uaii = os.path.join(build_dir, "uaii")
    if not os.path.exists(uaii):
        print(f"make_seeds: {uaii} not found: no graph seeds", file=sys.stderr)
        return
    tmp = os.path.dirname(ggufs["llama"])
    for arch in ["llama", "qwen3"]:
        for ext, form in [(".uaii", b"\x00"), (".uaii.json", b"\x01")]:
            out = os.path.join(tmp, arch + ext)
            subprocess.run([uaii, "compile", ggufs[arch], "-o", out], check=True, stdout=subprocess.DEVNULL)
            put("ir_graph", arch + ext, form + open(out, "rb").read())


# --- messages / tools JSON: the last byte picks the template and flags ------------------
def chat_request_seeds():
    sep = "\n---tools---\n"
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "Weather?"}]
    tools = [{"type": "function", "function": {"name": "weather", "description": "d",
              "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
    calls = msgs + [{"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": "weather", "arguments": {"city": "Paris"}}}]},
        {"role": "tool", "content": "sunny"}]
    for i, (m, t) in enumerate([(msgs, None), (calls, tools), ({"messages": msgs}, None), (msgs[1:2], tools)]):
        text = json.dumps(m) + (sep + json.dumps(t) if t is not None else "")
        for pick in (0x10, 0x31, 0x72):
            put("chat_request", f"req-{i}-{pick:02x}", text.encode() + bytes([pick]))
    put("chat_request", "content-parts", json.dumps([{"role": "user", "content": [{"type": "text", "text": "a"},
        {"type": "image"}]}]).encode() + b"\x12")


def sampling_seeds():
    def params(t, k, p, m, rp, pp, fp, last_n, seed, min_keep):
        # FuzzedDataProvider takes integers from the end: write the fields reversed.
        fields = [struct.pack("<f", t), struct.pack("<i", k), struct.pack("<f", p), struct.pack("<f", m),
                  struct.pack("<f", rp), struct.pack("<f", pp), struct.pack("<f", fp)]
        return fields, last_n, seed, min_keep
    for i, vals in enumerate([(0.0, 0, 1.0, 0.0, 1.0, 0.0, 0.0), (0.8, 40, 0.95, 0.05, 1.1, 0.5, 0.5),
                              (2.0, 1, 0.5, 0.5, 1.3, -1.0, 2.0)]):
        logits = np.linspace(-3, 3, 32, dtype=np.float32).tobytes()
        head = b"".join(reversed([struct.pack(">f", v) if j != 1 else struct.pack(">i", int(v))
                                  for j, v in enumerate(vals)]))
        put("sampling", f"params-{i}", logits + bytes([7, 3, 9]) + head)


# --- hub: strings from the front, integers from the end (FuzzedDataProvider) ------------
def hub_seeds():
    listing = {"sha": "0" * 40, "siblings": [
        {"rfilename": "config.json", "size": 600},
        {"rfilename": "model.safetensors", "size": 5000, "lfs": {"sha256": "ab" * 32, "size": 5000}},
        {"rfilename": "tokenizer.json", "size": 4000}, {"rfilename": "original/consolidated.pth", "size": 9},
        {"rfilename": "sub/dir/notes.md"}]}
    header = json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
    pre = struct.pack("<Q", len(header))
    for i, (body, tail) in enumerate([(json.dumps(listing).encode(), b"\x01\x00\x01\x00"),
                                      (json.dumps({"siblings": [{"rfilename": "../evil"}]}).encode(), b"\x01\x01"),
                                      (json.dumps(listing).encode(), b"\xff\x10\x00\x00\x00\x00\x00\x01\x05")]):
        put("hub", f"listing-{i}", pre.replace(b"\\", b"\\\\") + b"\\ " + header + b"\\ " + b"*.json\\ " + body + tail)


def main():
    build_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        ggufs = gguf_seeds(tmp)
        safetensors_seeds()
        hf_config_seeds()
        tokenizer_json_seeds()
        tokenize_seeds()
        jinja_seeds()
        output_parser_seeds()
        ir_graph_seeds(build_dir, ggufs)
        chat_request_seeds()
        sampling_seeds()
        hub_seeds()


if __name__ == "__main__":
    main()
