// gelu: the tanh form on f16 input and output (gelu.glsl). Buffers: x, y. p: n.
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer BX { float x[]; };
layout(set = 0, binding = 1) writeonly buffer BY { float y[]; };
#include "gelu.glsl"
void main() {
  const uint i = Index();
  if (i >= U(0)) return;
  const float v = x[pc.o[0] + i];
  y[pc.o[1] + i] = Gelu(v);
}
