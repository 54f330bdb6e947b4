// add: y = a + b. Buffers: a, b, y. p: n, nb (b is [nb], repeated over a's rows, or like a).
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer BA { float a[]; };
layout(set = 0, binding = 1) readonly buffer BB { float b[]; };
layout(set = 0, binding = 2) writeonly buffer BY { float y[]; };

void main() {
  const uint i = Index();
  if (i >= U(0)) return;
  const float g = a[pc.o[0] + i], u = b[pc.o[1] + i % U(1)];
  y[pc.o[2] + i] = g + u;
}
