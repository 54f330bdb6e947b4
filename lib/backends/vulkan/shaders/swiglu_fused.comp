// swiglu_fused: y[r, c] = silu(x[r, c]) * x[r, cols + c] (gate | up in one row).
// Buffers: x [rows, 2 cols], y [rows, cols]. p: n (= rows * cols), cols.
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer BX { float x[]; };
layout(set = 0, binding = 1) writeonly buffer BY { float y[]; };
void main() {
  const uint i = Index(), cols = U(1);
  if (i >= U(0)) return;
  const uint r = i / cols, c = i % cols, at = pc.o[0] + r * 2u * cols + c;
  const float g = x[at];
  y[pc.o[1] + i] = g / (1.0 + exp(-g)) * x[at + cols];
}
