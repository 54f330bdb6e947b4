#!/usr/bin/env python3
"""Writes a random-weight Mixtral-shaped mixture-of-experts Q4_0 GGUF (architecture
`llama` with experts: packed banks blk.N.ffn_{gate,up,down}_exps, an F32 router
blk.N.ffn_gate_inp) for the MoE storage benchmark and tests (docs/moe.md).

    python3 benchmarks/make_moe_gguf.py OUT.gguf [--layers 24] [--embd 2048] [--ff 5632]
                                        [--experts 8] [--top-k 2] [--vocab 32000] [--heads 16]

The defaults give about 3.9 GiB, 3.66 GiB of it experts (19.5 MiB per expert); the
tests use small dimensions. Seeded and deterministic. Tensor data is streamed to disk
tensor by tensor (never the whole file in memory): quantized blocks come from a pool
of random Q4_0 blocks with small f16 scales, taken at a rotating offset per tensor, so
activations stay finite; router rows have std 2 / sqrt(n_embd) so routing is not flat.
The vocabulary is byte-fallback SentencePiece-style (as benchmarks/make_7b_q4_0.py)."""
import argparse
import pathlib
import sys

import gguf
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from random_q4_0_gguf import BLOCK, add_llama_vocab, tile_q4_0  # noqa: E402

T = gguf.GGMLQuantizationType


def block_pool(rng, n_blocks, scale):
    d = (rng.uniform(0.5, 1.5, n_blocks) * scale / 4.6).astype(np.float16).view(np.uint8).reshape(-1, 2)
    # Nibbles 1..15 (values -7..7): zero-mean weights, so no constant direction builds
    # up in the residual stream and the random model's next token depends on its input.
    lo = rng.integers(1, 16, size=(n_blocks, 16), dtype=np.uint8)
    hi = rng.integers(1, 16, size=(n_blocks, 16), dtype=np.uint8)
    q = lo | (hi << 4)
    return np.ascontiguousarray(np.concatenate([d, q], axis=1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=pathlib.Path)
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--embd", type=int, default=2048)
    ap.add_argument("--ff", type=int, default=5632, help="rows of one expert's gate/up")
    ap.add_argument("--experts", type=int, default=8)
    ap.add_argument("--top-k", type=int, default=2)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--scale", type=float, default=0.05, help="typical weight magnitude")
    a = ap.parse_args()
    E, F, n_exp, hd = a.embd, a.ff, a.experts, a.embd // a.heads
    assert E % 32 == 0 and F % 32 == 0 and a.vocab >= 300
    rng = np.random.default_rng(12)
    pool = block_pool(rng, 1 << 20, a.scale)
    w = gguf.GGUFWriter(str(a.out), "llama")
    w.add_name("random-moe-q4_0")
    w.add_context_length(4096)
    w.add_embedding_length(E)
    w.add_block_count(a.layers)
    w.add_feed_forward_length(F)
    w.add_head_count(a.heads)
    w.add_head_count_kv(a.kv_heads)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    w.add_rope_dimension_count(hd)
    w.add_expert_count(n_exp)
    w.add_expert_used_count(a.top_k)
    w.add_file_type(2)  # MOSTLY_Q4_0
    add_llama_vocab(w, a.vocab)
    nkv = a.kv_heads * hd
    # (name, kind, numpy shape): q = Q4_0, n = F32 norm, r = F32 router
    plan = [("token_embd.weight", "q", (a.vocab, E)), ("output_norm.weight", "n", (E,)),
            ("output.weight", "q", (a.vocab, E))]
    for l in range(a.layers):
        p = f"blk.{l}."
        plan += [(p + "attn_norm.weight", "n", (E,)), (p + "attn_q.weight", "q", (E, E)),
                 (p + "attn_k.weight", "q", (nkv, E)), (p + "attn_v.weight", "q", (nkv, E)),
                 (p + "attn_output.weight", "q", (E, E)), (p + "ffn_norm.weight", "n", (E,)),
                 (p + "ffn_gate_inp.weight", "r", (n_exp, E)),
                 (p + "ffn_gate_exps.weight", "q", (n_exp, F, E)), (p + "ffn_up_exps.weight", "q", (n_exp, F, E)),
                 (p + "ffn_down_exps.weight", "q", (n_exp, E, F))]
    for name, kind, shape in plan:
        if kind in "nr":
            w.add_tensor_info(name, shape, np.dtype(np.float32), int(np.prod(shape)) * 4)
        else:
            byte_shape = (*shape[:-1], shape[-1] // 32 * BLOCK)
            w.add_tensor_info(name, byte_shape, np.dtype(np.uint8), int(np.prod(byte_shape)), raw_dtype=T.Q4_0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    for salt, (name, kind, shape) in enumerate(plan):
        if kind == "n":
            w.write_tensor_data(rng.uniform(0.8, 1.2, shape).astype(np.float32))
        elif kind == "r":
            w.write_tensor_data((rng.standard_normal(shape) * 2.0 / np.sqrt(E)).astype(np.float32))
        else:
            w.write_tensor_data(tile_q4_0(pool, shape, salt))
    w.close()


if __name__ == "__main__":
    main()
