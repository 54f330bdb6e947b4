// attention: one group of 64 per (query token, head) against the layer's f16 KV cache,
// after kv_store. The query is rounded to f16 (as the CPU's K.q dot); the cells are
// taken 64 at a time, each invocation scoring one (hidden: an empty cell, a later
// position, outside the cache's resident window or the sliding window), and the
// softmax runs online (running max and sum), each invocation keeping the output
// dimensions d = tid, tid + 64, ... GQA: head h reads kv head h / (Hq / Hkv).
// Buffers: q [T, Hq, D], the cache's words for this layer, meta (int: positions at p13,
// each cell's position at p14), out [T, Hq * Dv].
// p: T, Hq, Hkv, D, Dv, n_cells, k_base, v_base (halves), scale, softcap, window,
//    cache_window, cache_sinks, positions_at, cellpos_at, cells to scan.
#version 450
#include "common.glsl"
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer BQ { float q[]; };
layout(set = 0, binding = 1) readonly buffer BC { uint cache[]; };
layout(set = 0, binding = 2) readonly buffer BM { int meta[]; };
layout(set = 0, binding = 3) writeonly buffer BO { float o[]; };
const uint kMaxDim = 512u, kMaxOwn = kMaxDim / 64u;
shared float qs[kMaxDim];
shared float scores[64];
float Half(uint h) { return unpackHalf2x16(cache[pc.o[1] + h / 2u])[h & 1u]; }
void main() {
  const uint Hq = U(1), Hkv = U(2), D = U(3), Dv = U(4), n_cells = U(5), tid = gl_LocalInvocationID.x;
  const uint h = gl_WorkGroupID.x, t = gl_WorkGroupID.y, hk = h / (Hq / Hkv);
  const int qp = meta[pc.o[2] + U(13) + t];
  const float scale = F(8), softcap = F(9);
  const int window = I(10), cache_window = I(11), sinks = I(12);
  for (uint d = tid; d < D; d += 64u) qs[d] = RoundF16(q[pc.o[0] + (t * Hq + h) * D + d]);
  barrier();
  float m = -1.0 / 0.0, l = 0.0;
  float acc[kMaxOwn];
  for (uint j = 0u; j < kMaxOwn; ++j) acc[j] = 0.0;
  const uint k_row = U(6) + hk * D;
  for (uint c0 = 0u; c0 < U(15); c0 += 64u) {
    const uint c = c0 + tid;
    float s = -1.0 / 0.0;
    if (c < n_cells) {
      const int pj = meta[pc.o[2] + U(14) + c];
      const bool hidden = pj < 0 || pj > qp || (cache_window > 0 && pj >= sinks && qp - pj >= cache_window) ||
                          (window > 0 && qp - pj >= window);
      if (!hidden) {
        const uint kr = k_row + c * Hkv * D;
        float dot = 0.0;
        for (uint d = 0u; d < D; d += 2u) {
          const vec2 kk = unpackHalf2x16(cache[pc.o[1] + (kr + d) / 2u]);
          dot += qs[d] * kk.x + qs[d + 1u] * kk.y;
        }
        s = dot * scale;
        if (softcap > 0.0) s = softcap * tanh(s / softcap);
      }
    }
    scores[tid] = s;
    barrier();
    float tile_max = -1.0 / 0.0;
    for (uint j = 0u; j < 64u; ++j) tile_max = max(tile_max, scores[j]);
    const float m_new = max(m, tile_max);
    if (m_new > -1.0 / 0.0) {
      const float corr = exp(m - m_new);
      l *= corr;
      for (uint j = 0u; j < kMaxOwn; ++j) acc[j] *= corr;
      for (uint j = 0u; j < 64u; ++j) {
        const float sj = scores[j];
        if (sj == -1.0 / 0.0) continue;
        const float pj = exp(sj - m_new);
        l += pj;
        const uint cell = c0 + j;
        for (uint k = 0u; k < kMaxOwn; ++k) {
          const uint d = tid + 64u * k;
          if (d < Dv) acc[k] += pj * Half(U(7) + (hk * Dv + d) * n_cells + cell);
        }
      }
      m = m_new;
    }
    barrier();
  }
  for (uint k = 0u; k < kMaxOwn; ++k) {
    const uint d = tid + 64u * k;
    if (d < Dv) o[pc.o[3] + (t * Hq + h) * Dv + d] = acc[k] / l;
  }
}
