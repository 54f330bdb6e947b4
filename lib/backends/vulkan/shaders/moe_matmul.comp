// moe_matmul: the selected experts' products of moe_ffn. Slot s = t * k + j (slot_base
// + z) uses expert e = ids[s]: y[s, r] = x[s / x_div, :] . W[e * N + r, :] for r < N,
// computed by the dispatch of the chunk holding bank row e * N + r (rows
// [row_begin, row_begin + rows); the other chunks' dispatches skip it). One group of 64
// per (row, slot), the blocks split over its invocations as matmul.comp.
// Buffers: W words (one chunk of the bank), x, y [slots, N], ids [slots] (uint).
// p: K, rows in the chunk, row_begin, N (rows per expert), slots, row words, x_div, slot_base.
#version 450
#include "common.glsl"
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer BW { uint W[]; };
layout(set = 0, binding = 1) readonly buffer BX { float X[]; };
layout(set = 0, binding = 2) writeonly buffer BY { float y[]; };
layout(set = 0, binding = 3) readonly buffer BI { uint ids[]; };
#include "quant.glsl"
shared float partial[64];
void main() {
  const uint K = U(0), N = U(3), r = GroupIndex(), s = U(7) + gl_WorkGroupID.z;
  if (r >= N || s >= U(4)) return;
  const uint g = ids[pc.o[3] + s] * N + r;
  if (g < U(2) || g - U(2) >= U(1)) return;
  const uint base = pc.o[0] + (g - U(2)) * U(5), xo = pc.o[1] + (s / U(6)) * K;
  float acc = 0.0;
  for (uint blk = gl_LocalInvocationID.x; blk < K / kBlock; blk += 64u) acc += BlockDot(base, blk, xo + blk * kBlock);
  partial[gl_LocalInvocationID.x] = acc;
  barrier();
  for (uint half_ = 32u; half_ > 0u; half_ >>= 1) {
    if (gl_LocalInvocationID.x < half_) partial[gl_LocalInvocationID.x] += partial[gl_LocalInvocationID.x + half_];
    barrier();
  }
  if (gl_LocalInvocationID.x == 0u) y[pc.o[2] + s * N + r] = partial[0];
}
