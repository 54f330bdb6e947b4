// kv_store (the first half of attention): a batch's K and V rounded to f16 into their
// cells of the KV cache (runtime/kv_cache.h's layout: K [cell][kv_head][dim], V
// transposed [kv_head][dim][cell]). Two halves share a word, and neighbouring cells of
// V may belong to different tokens, so each half is set atomically: its half of the
// word cleared, then its bits or-ed in.
// Buffers: k [T, Hkv, D], v [T, Hkv, Dv], meta (int: the tokens' cells at p7), the
// cache's words for this layer. p: T, Hkv, D, Dv, k_base, v_base (halves), n_cells, cells_at.
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer BK { float k[]; };
layout(set = 0, binding = 1) readonly buffer BV { float v[]; };
layout(set = 0, binding = 2) readonly buffer BM { int meta[]; };
layout(set = 0, binding = 3) coherent buffer BC { uint cache[]; };
void StoreHalf(uint h, float value) {
  const uint word = pc.o[3] + h / 2u, shift = 16u * (h & 1u);
  atomicAnd(cache[word], ~(0xFFFFu << shift));
  atomicOr(cache[word], (packHalf2x16(vec2(value, 0.0)) & 0xFFFFu) << shift);
}
void main() {
  const uint T = U(0), Hkv = U(1), D = U(2), Dv = U(3), n_cells = U(6);
  const uint i = Index(), nk = T * Hkv * D, nv = T * Hkv * Dv;
  if (i < nk) {
    const uint t = i / (Hkv * D), e = i % (Hkv * D);
    const uint cell = uint(meta[pc.o[2] + U(7) + t]);
    StoreHalf(U(4) + cell * Hkv * D + e, k[pc.o[0] + i]);
  } else if (i < nk + nv) {
    const uint j = i - nk, t = j / (Hkv * Dv), e = j % (Hkv * Dv);  // e = kv_head * Dv + d
    const uint cell = uint(meta[pc.o[2] + U(7) + t]);
    StoreHalf(U(5) + e * n_cells + cell, v[pc.o[1] + j]);
  }
}
