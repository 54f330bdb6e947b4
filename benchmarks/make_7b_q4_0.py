#!/usr/bin/env python3
"""Writes a random-weight, 7B-shaped (Llama-2-7B dimensions) Q4_0 GGUF for the storage
benchmark and the slow storage test: n_embd 4096, 32 layers, n_ff 11008, 32 heads,
vocabulary 32000 (byte-fallback SentencePiece-style tokens). About 3.6 GiB.

    python3 benchmarks/make_7b_q4_0.py OUT.gguf [--layers N]

Seeded and deterministic. Tensor data is streamed to disk tensor by tensor (never the
whole file in memory): blocks come from a pool of random Q4_0 blocks with small f16
scales, taken at a rotating offset per tensor, so the activations stay finite."""
import argparse
import pathlib
import sys

import gguf
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from random_q4_0_gguf import BLOCK, add_llama_vocab, tile_q4_0  # noqa: E402

T = gguf.GGMLQuantizationType
N_EMBD, N_FF, N_HEAD, N_VOCAB = 4096, 11008, 32, 32000


def block_pool(rng, n_blocks):
    d = (rng.uniform(0.5, 1.5, n_blocks) * 0.02 / 4.6).astype(np.float16).view(np.uint8).reshape(-1, 2)
    q = rng.integers(0, 256, size=(n_blocks, 16), dtype=np.uint8)
    return np.ascontiguousarray(np.concatenate([d, q], axis=1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=pathlib.Path)
    ap.add_argument("--layers", type=int, default=32)
    a = ap.parse_args()
    rng = np.random.default_rng(7)
    pool = block_pool(rng, 1 << 20)
    w = gguf.GGUFWriter(str(a.out), "llama")
    w.add_name("random-7b-shaped-q4_0")
    w.add_context_length(4096)
    w.add_embedding_length(N_EMBD)
    w.add_block_count(a.layers)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_HEAD)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    w.add_rope_dimension_count(N_EMBD // N_HEAD)
    w.add_file_type(2)  # MOSTLY_Q4_0
    add_llama_vocab(w, N_VOCAB)
    plan = [("token_embd.weight", "q", N_VOCAB, N_EMBD), ("output_norm.weight", "n", N_EMBD, 0),
            ("output.weight", "q", N_VOCAB, N_EMBD)]
    for l in range(a.layers):
        p = f"blk.{l}."
        plan += [(p + "attn_norm.weight", "n", N_EMBD, 0), (p + "attn_q.weight", "q", N_EMBD, N_EMBD),
                 (p + "attn_k.weight", "q", N_EMBD, N_EMBD), (p + "attn_v.weight", "q", N_EMBD, N_EMBD),
                 (p + "attn_output.weight", "q", N_EMBD, N_EMBD), (p + "ffn_norm.weight", "n", N_EMBD, 0),
                 (p + "ffn_gate.weight", "q", N_FF, N_EMBD), (p + "ffn_up.weight", "q", N_FF, N_EMBD),
                 (p + "ffn_down.weight", "q", N_EMBD, N_FF)]
    for name, kind, rows, cols in plan:
        if kind == "n":
            w.add_tensor_info(name, (rows,), np.dtype(np.float32), rows * 4)
        else:
            w.add_tensor_info(name, (rows, cols // 32 * BLOCK), np.dtype(np.uint8), rows * cols // 32 * BLOCK,
                              raw_dtype=T.Q4_0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    for salt, (name, kind, rows, cols) in enumerate(plan):
        if kind == "n":
            w.write_tensor_data(rng.uniform(0.8, 1.2, rows).astype(np.float32))
        else:
            w.write_tensor_data(tile_q4_0(pool, (rows, cols), salt))
    w.close()


if __name__ == "__main__":
    main()
