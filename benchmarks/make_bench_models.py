#!/usr/bin/env python3
"""Writes TinyLlama-shaped random GGUF files for the speed benchmarks (never committed).

Shape: 2048 wide, 22 layers, 5632 FFN, 32 heads, 4 KV heads, 32000 vocab (TinyLlama
1.1B). Types: Q4_0, Q8_0, and a Q4_K_M-like mix (Q4_K, with Q6_K for attn_v, ffn_down
and the output head, as llama.cpp's Q4_K_M does for those tensors). Weights are random
bytes with finite, realistically scaled f16 scales, so every kernel does its real work.
Idempotent: existing files are kept.

usage: make_bench_models.py OUT_DIR [q4_0 q8_0 q4_k_m ...]
"""
import os
import sys

import numpy as np
import gguf

T = gguf.GGMLQuantizationType
N_VOCAB, N_EMBD, N_FF, N_LAYER, N_HEAD, N_KV = 32000, 2048, 5632, 22, 32, 4
HEAD_DIM = N_EMBD // N_HEAD

# Byte offsets of the f16 scale fields inside each block type (ggml-common.h).
SCALE_FIELDS = {T.Q4_0: [0], T.Q8_0: [0], T.Q4_K: [0, 2], T.Q6_K: [208]}


def random_blocks(rng, ttype, rows, cols):
    block, size = gguf.GGML_QUANT_SIZES[ttype]
    nb = rows * cols // block
    data = rng.integers(0, 256, size=(nb, size), dtype=np.uint8)
    scale = (rng.uniform(0.5, 1.5, nb) / np.sqrt(cols) / 8).astype(np.float16).view(np.uint8).reshape(nb, 2)
    for off in SCALE_FIELDS[ttype]:
        data[:, off:off + 2] = scale
    return data.reshape(rows, -1)


def write(path, mix):
    rng = np.random.default_rng(1234)
    w = gguf.GGUFWriter(path, "llama")
    w.add_name(f"bench-tinyllama-{os.path.basename(path)}")
    w.add_context_length(2048)
    w.add_embedding_length(N_EMBD)
    w.add_block_count(N_LAYER)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_KV)
    w.add_rope_dimension_count(HEAD_DIM)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    tokens += [f"t{i}" for i in range(N_VOCAB - len(tokens))]
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([0.0] * N_VOCAB)
    w.add_token_types([2, 3, 3] + [6] * 256 + [1] * (N_VOCAB - 259))
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)

    def weight(name, rows, cols, kind="default"):
        w.add_tensor(name, random_blocks(rng, mix[kind], rows, cols), raw_dtype=mix[kind])

    def norm(name):
        w.add_tensor(name, np.ones(N_EMBD, dtype=np.float32))

    weight("token_embd.weight", N_VOCAB, N_EMBD)
    norm("output_norm.weight")
    weight("output.weight", N_VOCAB, N_EMBD, "heavy")
    for il in range(N_LAYER):
        p = f"blk.{il}."
        norm(p + "attn_norm.weight")
        norm(p + "ffn_norm.weight")
        weight(p + "attn_q.weight", N_EMBD, N_EMBD)
        weight(p + "attn_k.weight", N_KV * HEAD_DIM, N_EMBD)
        weight(p + "attn_v.weight", N_KV * HEAD_DIM, N_EMBD, "heavy")
        weight(p + "attn_output.weight", N_EMBD, N_EMBD)
        weight(p + "ffn_gate.weight", N_FF, N_EMBD)
        weight(p + "ffn_up.weight", N_FF, N_EMBD)
        weight(p + "ffn_down.weight", N_EMBD, N_FF, "heavy")
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


MIXES = {
    "q4_0": {"default": T.Q4_0, "heavy": T.Q4_0},
    "q8_0": {"default": T.Q8_0, "heavy": T.Q8_0},
    "q4_k_m": {"default": T.Q4_K, "heavy": T.Q6_K},
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "bench-models"
    names = sys.argv[2:] or list(MIXES)
    os.makedirs(out, exist_ok=True)
    for name in names:
        path = os.path.join(out, f"tinyllama-{name}.gguf")
        if not os.path.exists(path):
            write(path + ".partial", MIXES[name])
            os.replace(path + ".partial", path)
        print(path)


if __name__ == "__main__":
    main()
