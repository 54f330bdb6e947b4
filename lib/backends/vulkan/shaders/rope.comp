// rope: rotary embedding as ggml_rope_ext (and the CPU's op): per (token, head) the
// first n_dims dimensions rotated in pairs (norm: 2i, 2i+1; neox: i, i + n_dims/2) by
// theta_i = pos * theta_scale^i (the product taken step by step in float, as ggml),
// divided by freq_factors[i] where given, scaled by freq_scale, with YaRN's ramp
// between interpolated and extrapolated angles; the rest copied.
// Buffers: x [T, H, D], positions (int [T]), factors (float [n_dims/2]), y.
// p: T, H, D, n_dims, neox, theta_scale, freq_scale, ext_factor, mscale, corr0, corr1, has_factors.
#version 450
#include "common.glsl"
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer BX { float x[]; };
layout(set = 0, binding = 1) readonly buffer BP { int pos[]; };
layout(set = 0, binding = 2) readonly buffer BF { float factors[]; };
layout(set = 0, binding = 3) writeonly buffer BY { float y[]; };
void main() {
  const uint T = U(0), H = U(1), D = U(2), n_dims = U(3), half_d = D / 2u;
  const uint idx = Index();
  if (idx >= T * H * half_d) return;
  const uint i = idx % half_d, th = idx / half_d, t = th / H;
  const uint xo = pc.o[0] + th * D, yo = pc.o[3] + th * D;
  if (i >= n_dims / 2u) {  // unrotated pairs
    const uint j = n_dims + 2u * (i - n_dims / 2u);
    y[yo + j] = x[xo + j];
    y[yo + j + 1u] = x[xo + j + 1u];
    return;
  }
  float theta = float(pos[pc.o[1] + t]);
  for (uint k = 0u; k < i; ++k) theta *= F(5);
  const float extrap = U(11) != 0u ? theta / factors[pc.o[2] + i] : theta;
  float angle = F(6) * extrap;
  const float ext = F(7);
  if (ext != 0.0) {
    const float ramp = (1.0 - clamp((float(i) - F(9)) / max(0.001, F(10) - F(9)), 0.0, 1.0)) * ext;
    angle = angle * (1.0 - ramp) + extrap * ramp;
  }
  const float c = cos(angle) * F(8), s = sin(angle) * F(8);
  const uint a = U(4) != 0u ? i : 2u * i, b = U(4) != 0u ? i + n_dims / 2u : 2u * i + 1u;
  const float x0 = x[xo + a], x1 = x[xo + b];
  y[yo + a] = x0 * c - x1 * s;
  y[yo + b] = x0 * s + x1 * c;
}
