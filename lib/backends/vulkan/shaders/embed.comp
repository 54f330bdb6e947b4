// embed: rows of a weight table (one chunk of its rows) for ids (tokens or positions).
// Buffers: W table words, ids, y [T, D]. p: D, T, row_begin, rows in the chunk, row words.
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer BW { uint W[]; };
layout(set = 0, binding = 1) readonly buffer BI { int ids[]; };
layout(set = 0, binding = 2) buffer BY { float y[]; };
#define X y  // quant.glsl's BlockDot names the activations; embed uses only Dequant
#include "quant.glsl"
void main() {
  const uint D = U(0), T = U(1), t = GroupIndex();
  if (t >= T) return;
  const int row = ids[pc.o[1] + t] - I(2);
  if (row < 0 || row >= I(3)) return;  // another chunk's row
  const uint base = pc.o[0] + uint(row) * U(4);
  for (uint j = gl_LocalInvocationID.x; j < D; j += 256u) y[pc.o[2] + t * D + j] = Dequant(base, j);
}
