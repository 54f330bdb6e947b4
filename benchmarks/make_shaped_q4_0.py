#!/usr/bin/env python3
"""Writes a random-weight Q4_0 GGUF shaped like a real Llama-architecture model, for
the device benchmark (benchmarks/device/run_gpu.sh: decode tok/s against the memory
roofline needs the bytes a real model reads per token, not its weights' values):

    python3 benchmarks/make_shaped_q4_0.py {1b,8b} OUT.gguf [--layers N]

  1b: Llama-3.2-1B's dimensions (n_embd 2048, 16 layers, n_ff 8192, 32 heads, 8 KV
      heads, vocabulary 128256; its own output matrix): about 0.8 GiB.
  8b: Llama-3-8B's (4096, 32 layers, 14336, 32 heads, 8 KV heads, 128256): about 4.3 GiB.

Seeded and deterministic; streamed tensor by tensor, blocks tiled from a pool of random
Q4_0 blocks (make_7b_q4_0.py's), so writing takes seconds, not minutes. The vocabulary
is SentencePiece-style filler (random_q4_0_gguf.py)."""
import argparse
import pathlib
import sys

import gguf
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from make_7b_q4_0 import block_pool  # noqa: E402
from random_q4_0_gguf import BLOCK, add_llama_vocab, tile_q4_0  # noqa: E402

T = gguf.GGMLQuantizationType
SHAPES = {  # n_embd, layers, n_ff, heads, kv heads, vocabulary, rope base
    "1b": (2048, 16, 8192, 32, 8, 128256, 500000.0),
    "8b": (4096, 32, 14336, 32, 8, 128256, 500000.0),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("shape", choices=sorted(SHAPES))
    ap.add_argument("out", type=pathlib.Path)
    ap.add_argument("--layers", type=int, default=0, help="fewer layers (0: the shape's)")
    a = ap.parse_args()
    n_embd, layers, n_ff, n_head, n_kv, n_vocab, rope_base = SHAPES[a.shape]
    layers = a.layers or layers
    head_dim, kv_dim = n_embd // n_head, n_embd // n_head * n_kv
    rng = np.random.default_rng(11)
    pool = block_pool(rng, 1 << 20)
    w = gguf.GGUFWriter(str(a.out), "llama")
    w.add_name(f"random-{a.shape}-shaped-q4_0")
    w.add_context_length(8192)
    w.add_embedding_length(n_embd)
    w.add_block_count(layers)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(rope_base)
    w.add_rope_dimension_count(head_dim)
    w.add_file_type(2)  # MOSTLY_Q4_0
    add_llama_vocab(w, n_vocab)
    plan = [("token_embd.weight", "q", n_vocab, n_embd), ("output_norm.weight", "n", n_embd, 0),
            ("output.weight", "q", n_vocab, n_embd)]
    for l in range(layers):
        p = f"blk.{l}."
        plan += [(p + "attn_norm.weight", "n", n_embd, 0), (p + "attn_q.weight", "q", n_embd, n_embd),
                 (p + "attn_k.weight", "q", kv_dim, n_embd), (p + "attn_v.weight", "q", kv_dim, n_embd),
                 (p + "attn_output.weight", "q", n_embd, n_embd), (p + "ffn_norm.weight", "n", n_embd, 0),
                 (p + "ffn_gate.weight", "q", n_ff, n_embd), (p + "ffn_up.weight", "q", n_ff, n_embd),
                 (p + "ffn_down.weight", "q", n_embd, n_ff)]
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
