// moe_route: moe_ffn's routing (docs/moe.md), one invocation per row t: the router's
// logits [T, n] through softmax or sigmoid, the k experts of the highest score
// (probability + the optional selection bias, which affects the choice only; ties to
// the lower index, NaN as -inf) in descending order, and their weights (the
// probabilities; norm_w: over their sum, floored at 2^-14; times w_scale unless 0 or 1;
// times scale[e] when has_scale: Gemma 4's per-expert output scale, moved onto the weight).
// Buffers: logits [T, n], bias [n] (unused unless has_bias), route: ids [T, k] (uint)
// then weights [T, k] (float bits) at word T * k, scale [n] (unused unless has_scale).
// p: T, n, k, sigmoid, has_bias, norm_w, w_scale, has_scale.
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer BL { float L[]; };
layout(set = 0, binding = 1) readonly buffer BB { float bias[]; };
layout(set = 0, binding = 2) buffer BR { uint route[]; };
layout(set = 0, binding = 3) readonly buffer BS { float scale[]; };

void main() {
  const float kInf = uintBitsToFloat(0x7F800000u);
  const uint t = Index(), T = U(0), n = U(1), k = U(2);
  if (t >= T) return;
  const bool sigmoid = U(3) != 0u, has_bias = U(4) != 0u;
  const uint lo = pc.o[0] + t * n;
  float mx = -kInf, sum = 0.0;
  if (!sigmoid) {
    for (uint i = 0u; i < n; ++i)
      if (L[lo + i] > mx) mx = L[lo + i];
    for (uint i = 0u; i < n; ++i) sum += exp(L[lo + i] - mx);
  }
  const float inv = 1.0 / sum;
  const uint ids = pc.o[2] + t * k, wts = pc.o[2] + T * k + t * k;
  // The j-th pick: the best by (score descending, index ascending) strictly after the
  // previous pick in that order (no array of taken experts).
  float prev_s = kInf, wsum = 0.0;
  int prev_i = -1;
  for (uint j = 0u; j < k; ++j) {
    int best = -1;
    float best_s = -kInf, best_p = 0.0;
    for (uint i = 0u; i < n; ++i) {
      const float l = L[lo + i];
      const float p = sigmoid ? 1.0 / (1.0 + exp(-l)) : exp(l - mx) * inv;
      float s = has_bias ? p + bias[pc.o[1] + i] : p;
      if (isnan(s)) s = -kInf;
      const bool after = s < prev_s || (s == prev_s && int(i) > prev_i);
      if (after && (best < 0 || s > best_s)) {
        best = int(i);
        best_s = s;
        best_p = p;
      }
    }
    if (best < 0) best = 0;  // k > n: never (the program checks k <= n)
    prev_s = best_s;
    prev_i = best;
    route[ids + j] = uint(best);
    route[wts + j] = floatBitsToUint(best_p);
    wsum += best_p;
  }
  const float ws = F(6);
  const float norm = max(wsum, 6.103515625e-5);
  for (uint j = 0u; j < k; ++j) {
    float w = uintBitsToFloat(route[wts + j]);
    if (U(5) != 0u) w = w / norm;
    if (ws != 0.0 && ws != 1.0) w *= ws;
    if (U(7) != 0u) w *= scale[pc.o[3] + route[ids + j]];
    route[wts + j] = floatBitsToUint(w);
  }
}
