// output_rows: the rows the caller asked for. Buffers: x [T, cols], rows (int [R]), y [R, cols].
// p: n (= R * cols), cols.
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer BX { float x[]; };
layout(set = 0, binding = 1) readonly buffer BR { int rows[]; };
layout(set = 0, binding = 2) writeonly buffer BY { float y[]; };
void main() {
  const uint i = Index(), cols = U(1);
  if (i >= U(0)) return;
  y[pc.o[2] + i] = x[pc.o[0] + uint(rows[pc.o[1] + i / cols]) * cols + i % cols];
}
