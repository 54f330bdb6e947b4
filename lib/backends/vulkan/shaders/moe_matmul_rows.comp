// moe_matmul_rows: moe_matmul.comp for CPU implementations of Vulkan (as
// matmul_rows.comp): one invocation a row r of expert ids[s] (64 rows a group), z the
// slot. Buffers and p as moe_matmul.comp.
#version 450
#include "common.glsl"
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer BW { uint W[]; };
layout(set = 0, binding = 1) readonly buffer BX { float X[]; };
layout(set = 0, binding = 2) writeonly buffer BY { float y[]; };
layout(set = 0, binding = 3) readonly buffer BI { uint ids[]; };
#include "quant.glsl"
void main() {
  const uint K = U(0), N = U(3), s = U(7) + gl_WorkGroupID.z;
  const uint r = GroupIndex() * 64u + gl_LocalInvocationID.x;
  if (r >= N || s >= U(4)) return;
  const uint g = ids[pc.o[3] + s] * N + r;
  if (g < U(2) || g - U(2) >= U(1)) return;
  const uint base = pc.o[0] + (g - U(2)) * U(5), xo = pc.o[1] + (s / U(6)) * K;
  float acc = 0.0;
  for (uint blk = 0u; blk < K / kBlock; ++blk) acc += BlockDot(base, blk, xo + blk * kBlock);
  y[pc.o[2] + s * N + r] = acc;
}
