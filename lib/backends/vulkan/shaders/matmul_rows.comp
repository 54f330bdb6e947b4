// matmul_rows: matmul.comp for CPU implementations of Vulkan (lavapipe), which run an
// invocation's loop as native code and pay for each group: y[t, row_begin + r] = x[t, :] . W[r, :], one
// invocation a row (64 rows a group), z the token.
#version 450
#include "common.glsl"
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer BW { uint W[]; };
layout(set = 0, binding = 1) readonly buffer BX { float X[]; };
layout(set = 0, binding = 2) writeonly buffer BY { float y[]; };
#include "quant.glsl"
void main() {
  const uint K = U(0), rows = U(1), N = U(3), t = gl_WorkGroupID.z;
  const uint r = GroupIndex() * 64u + gl_LocalInvocationID.x;
  if (r >= rows) return;
  const uint base = pc.o[0] + r * U(5), xo = pc.o[1] + t * K;
  float s = 0.0;
  for (uint blk = 0u; blk < K / kBlock; ++blk) s += BlockDot(base, blk, xo + blk * kBlock);
  y[pc.o[2] + t * N + U(2) + r] = s;
}
