// matmul: y[t, row_begin + r] = x[t, :] . W[r, :] for the rows r of one chunk of the
// weight, one group of 64 per (row, token), the blocks split over its invocations and
// summed in shared memory. Buffers: W words, x [T, K], y [T, N]. p: K, rows in the
// chunk, row_begin, N, T, row words.
#version 450
#include "common.glsl"
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer BW { uint W[]; };
layout(set = 0, binding = 1) readonly buffer BX { float X[]; };
layout(set = 0, binding = 2) writeonly buffer BY { float y[]; };
#include "quant.glsl"
shared float partial[64];
void main() {
  const uint K = U(0), rows = U(1), N = U(3), r = GroupIndex(), t = gl_WorkGroupID.z;
  if (r >= rows) return;
  const uint base = pc.o[0] + r * U(5), xo = pc.o[1] + t * K;
  float s = 0.0;
  for (uint blk = gl_LocalInvocationID.x; blk < K / kBlock; blk += 64u) s += BlockDot(base, blk, xo + blk * kBlock);
  partial[gl_LocalInvocationID.x] = s;
  barrier();
  for (uint half_ = 32u; half_ > 0u; half_ >>= 1) {
    if (gl_LocalInvocationID.x < half_) partial[gl_LocalInvocationID.x] += partial[gl_LocalInvocationID.x + half_];
    barrier();
  }
  if (gl_LocalInvocationID.x == 0u) y[pc.o[2] + t * N + U(2) + r] = partial[0];
}
