"""The models of bench_speculative.py, written from the default model with the `gguf`
package (never committed; the script keeps them under a cache directory):

  dense_copy(src, dst, "f32"|"f16")  every tensor of src dequantized (gguf.quants.dequantize)
      and stored dense, the metadata (tokenizer, hyper-parameters) copied: the same
      weights as src up to its quantization, a target 4-8x as heavy to decode — so src
      is a realistic drafter for it (self-speculation);
  random_tiny(src, dst)  a 1-layer gemma3 with src's vocabulary and tokenizer and random
      weights (n_embd 64): a drafter that costs little and agrees with nothing.
"""
import numpy as np
import gguf

T = gguf.GGMLQuantizationType
V = gguf.GGUFValueType


def _copy_metadata(reader, writer, override=None):
    override = override or {}
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture":
            continue
        vtype = field.types[0]
        if key in override:
            value = override[key]
        else:
            value = field.contents()
        if vtype == V.ARRAY:
            writer.add_key_value(key, value, vtype, field.types[1] if len(field.types) > 1 else None)
        else:
            writer.add_key_value(key, value, vtype)


def dense_copy(src, dst, dtype="f32"):
    r = gguf.GGUFReader(str(src))
    arch = r.fields["general.architecture"].contents()
    w = gguf.GGUFWriter(str(dst), arch)
    ftype = gguf.LlamaFileType.ALL_F32 if dtype == "f32" else gguf.LlamaFileType.MOSTLY_F16
    _copy_metadata(r, w, {"general.file_type": int(ftype)})
    for t in r.tensors:
        x = gguf.quants.dequantize(t.data, t.tensor_type)  # numpy shape: rows, cols (reversed GGUF dims)
        x = np.ascontiguousarray(x.reshape([int(d) for d in reversed(t.shape)]), dtype=np.float32)
        if dtype == "f16" and x.ndim == 2:  # norms stay F32, as converters write them
            x = x.astype(np.float16)
        w.add_tensor(t.name, x)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def random_tiny(src, dst, n_embd=64, n_ff=128, n_head=1, head_dim=64, seed=7):
    r = gguf.GGUFReader(str(src))
    arch = r.fields["general.architecture"].contents()
    assert arch == "gemma3", f"random_tiny writes a gemma3 drafter, the default model is {arch}"
    n_vocab = len(r.fields["tokenizer.ggml.tokens"].data)
    w = gguf.GGUFWriter(str(dst), arch)
    hp = {f"{arch}.embedding_length": n_embd, f"{arch}.block_count": 1, f"{arch}.feed_forward_length": n_ff,
          f"{arch}.attention.head_count": n_head, f"{arch}.attention.head_count_kv": n_head,
          f"{arch}.attention.key_length": head_dim, f"{arch}.attention.value_length": head_dim,
          "general.file_type": int(gguf.LlamaFileType.MOSTLY_F16), "general.name": "random tiny drafter"}
    _copy_metadata(r, w, hp)
    rng = np.random.default_rng(seed)

    def weight(name, rows, cols):
        w.add_tensor(name, (rng.standard_normal((rows, cols)) / np.sqrt(cols)).astype(np.float16))

    def norm(name, n):
        w.add_tensor(name, (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float32))

    weight("token_embd.weight", n_vocab, n_embd)
    norm("output_norm.weight", n_embd)
    p = "blk.0."
    norm(p + "attn_norm.weight", n_embd)
    weight(p + "attn_q.weight", n_head * head_dim, n_embd)
    weight(p + "attn_k.weight", n_head * head_dim, n_embd)
    weight(p + "attn_v.weight", n_head * head_dim, n_embd)
    norm(p + "attn_q_norm.weight", head_dim)
    norm(p + "attn_k_norm.weight", head_dim)
    weight(p + "attn_output.weight", n_embd, n_head * head_dim)
    norm(p + "post_attention_norm.weight", n_embd)
    norm(p + "ffn_norm.weight", n_embd)
    weight(p + "ffn_gate.weight", n_ff, n_embd)
    weight(p + "ffn_up.weight", n_ff, n_embd)
    weight(p + "ffn_down.weight", n_embd, n_ff)
    norm(p + "post_ffw_norm.weight", n_embd)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
