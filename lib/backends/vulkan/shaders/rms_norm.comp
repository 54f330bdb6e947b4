// rms_norm: y = x / sqrt(mean(x^2) + eps) * w, a group of 256 per row.
// Buffers: x, w (unused when p3 = 0), y. p: n, rows, eps, has_w.
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer BX { float x[]; };
layout(set = 0, binding = 1) readonly buffer BW { float w[]; };
layout(set = 0, binding = 2) writeonly buffer BY { float y[]; };
shared float partial[256];
void main() {
  const uint n = U(0), row = GroupIndex(), tid = gl_LocalInvocationID.x;
  if (row >= U(1)) return;
  const uint xo = pc.o[0] + row * n;
  float s = 0.0;
  for (uint i = tid; i < n; i += 256u) s += x[xo + i] * x[xo + i];
  partial[tid] = s;
  barrier();
  for (uint h = 128u; h > 0u; h >>= 1) {
    if (tid < h) partial[tid] += partial[tid + h];
    barrier();
  }
  const float inv = inversesqrt(partial[0] / float(n) + F(2));
  for (uint i = tid; i < n; i += 256u) y[pc.o[2] + row * n + i] = x[xo + i] * inv * (U(3) != 0u ? w[pc.o[1] + i] : 1.0);
}
