// slice: columns [begin, begin + size) of every row. Buffers: x [rows, cols], y [rows, size].
// p: n (= rows * size), cols, begin, size.
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer BX { float x[]; };
layout(set = 0, binding = 1) writeonly buffer BY { float y[]; };
void main() {
  const uint i = Index(), size = U(3);
  if (i >= U(0)) return;
  y[pc.o[1] + i] = x[pc.o[0] + (i / size) * U(1) + U(2) + i % size];
}
