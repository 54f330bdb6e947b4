// layer_norm: y = (x - mean) / sqrt(var + eps) * w + b, a group of 256 per row.
// Buffers: x, w, b, y. p: n, rows, eps, has_w, has_b.
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer BX { float x[]; };
layout(set = 0, binding = 1) readonly buffer BW { float w[]; };
layout(set = 0, binding = 2) readonly buffer BB { float b[]; };
layout(set = 0, binding = 3) writeonly buffer BY { float y[]; };
shared float partial[256];
float Sum(float v) {
  const uint tid = gl_LocalInvocationID.x;
  partial[tid] = v;
  barrier();
  for (uint h = 128u; h > 0u; h >>= 1) {
    if (tid < h) partial[tid] += partial[tid + h];
    barrier();
  }
  const float s = partial[0];
  barrier();
  return s;
}
void main() {
  const uint n = U(0), row = GroupIndex(), tid = gl_LocalInvocationID.x;
  if (row >= U(1)) return;
  const uint xo = pc.o[0] + row * n;
  float s = 0.0;
  for (uint i = tid; i < n; i += 256u) s += x[xo + i];
  const float mean = Sum(s) / float(n);
  s = 0.0;
  for (uint i = tid; i < n; i += 256u) s += (x[xo + i] - mean) * (x[xo + i] - mean);
  const float inv = inversesqrt(Sum(s) / float(n) + F(2));
  for (uint i = tid; i < n; i += 256u)
    y[pc.o[3] + row * n + i] = (x[xo + i] - mean) * inv * (U(3) != 0u ? w[pc.o[1] + i] : 1.0) + (U(4) != 0u ? b[pc.o[2] + i] : 0.0);
}
