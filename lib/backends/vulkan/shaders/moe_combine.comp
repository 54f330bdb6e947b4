// moe_combine: moe_ffn's sum, y[t, c] = sum over j < k in selection order of
// w[t, j] * D[t * k + j, c], plus the shared expert's S[t, c] (times sigmoid(g[t]) when
// gated). Buffers: D [T * k, E], route (weights [T, k] at word w_at, gate logits [T] at
// word g_at), S [T, E] (unused unless has_shared), y [T, E].
// p: n = T * E, E, k, w_at, has_shared, has_gate, g_at.
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer BD { float D[]; };
layout(set = 0, binding = 1) readonly buffer BR { uint route[]; };
layout(set = 0, binding = 2) readonly buffer BS { float S[]; };
layout(set = 0, binding = 3) writeonly buffer BY { float y[]; };

void main() {
  const uint i = Index();
  if (i >= U(0)) return;
  const uint E = U(1), k = U(2), t = i / E, c = i % E;
  float acc = 0.0;
  for (uint j = 0u; j < k; ++j) {
    const float o = D[pc.o[0] + (t * k + j) * E + c] * uintBitsToFloat(route[pc.o[1] + U(3) + t * k + j]);
    acc = j == 0u ? o : acc + o;
  }
  if (U(4) != 0u) {
    float s = S[pc.o[2] + i];
    if (U(5) != 0u) s *= 1.0 / (1.0 + exp(-uintBitsToFloat(route[pc.o[1] + U(6) + t])));
    acc = acc + s;
  }
  y[pc.o[3] + i] = acc;
}
