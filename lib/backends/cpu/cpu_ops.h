// CPU element-wise and row operators, following ggml's CPU semantics so logits match
// llama.cpp: float math, reductions in double where ggml uses ggml_float. All rows are
// independent (a row's result never depends on the batch it came in).
#pragma once
#include <cstdint>

namespace uaii::backends::cpu {

// y[r] = x[r] * (1 / sqrtf(mean(x[r]^2) + eps)) [* w]   (ggml_rms_norm, then ggml_mul)
// x, y: [rows, n]; w: [n] or null. y may alias x.
void RmsNorm(const float* x, const float* w, int64_t rows, int64_t n, float eps, float* y);

// LayerNorm as ggml_norm, then ggml_mul (w) and ggml_add (b):
//   mean = f32(sum_i x_i in double) / n;  y_i = x_i - mean;
//   var = f32(sum_i y_i^2 in double / n);  y_i *= 1 / sqrtf(var + eps);  y_i = y_i * w_i + b_i
// x, y: [rows, n]; w, b: [n] or null. y may alias x.
void LayerNorm(const float* x, const float* w, const float* b, int64_t rows, int64_t n, float eps, float* y);

// Rotary embedding in place on x [T, heads, dim]; the first n_dims of each head rotate.
// theta_i = pos * freq_scale * base^(-2i/n_dims) / factor_i, computed as ggml does
// (theta multiplied by powf(base, -2/n_dims) per pair, in float).
//   neox = false ("norm"): pairs (2i, 2i+1);  neox = true: pairs (i, i + n_dims/2).
// YaRN (ggml_rope_ext's ext_factor path): with ext_factor != 0, pair i's angle mixes
// interpolated and extrapolated theta by ramp(i) * ext_factor, where the ramp runs over
// ggml_rope_yarn_corr_dims(n_dims, n_ctx_orig, freq_base, beta_fast, beta_slow), and
// cos/sin are multiplied by attn_factor * (1 + 0.1 ln(1 / freq_scale)). With
// ext_factor = 0 only attn_factor multiplies cos/sin.
struct RopeYarn {
  float ext_factor = 0.0f;
  float attn_factor = 1.0f;
  float beta_fast = 32.0f;
  float beta_slow = 1.0f;
  int64_t n_ctx_orig = 0;
};
void Rope(float* x, const int32_t* pos, int64_t T, int64_t heads, int64_t dim, int64_t n_dims,
          float freq_base, float freq_scale, const float* factors, bool neox, const RopeYarn& yarn = {});

// GELU (tanh form) through ggml's f16 table: x rounded to f16, gelu in float, result
// rounded to f16 (GGML_GELU_FP16); |x| >= 10 short-cuts as ggml does.
float GeluF16Table(float x);
float Silu(float x);  // x / (1 + ExpGgml(-x)), as ggml_v_silu
// exp(x) the way ggml's AVX-512 ggml_v_expf computes it (what llama.cpp's CPU softmax
// and SiLU use): n = round(x / ln2), b = x - n ln2 (ln2 split hi + lo),
// p(b) = 1 + c1 b + b^2 ((c2 + c3 b) + b^2 (c4 + c5 b)) with fused multiply-adds,
// result p * 2^n; |n| > 192 saturates to 0 / inf. Max error ~1.5 ulp.
float ExpGgml(float x);
// y[i] = ExpGgml(x[i]) (x == y allowed); 8 lanes at a time with AVX2+FMA where the
// CPU has them: the same fused operations, and 2^n made in the exponent bits while
// |n| <= 126 (an exact power of two, so p * 2^n rounds once, as ldexp does); lanes
// outside that range go through the scalar code. Bit-identical to ExpGgml.
void ExpGgmlRow(const float* x, float* y, int64_t n);
// Softmax in place as llama.cpp's CPU soft_max (ggml_vec_soft_max_f32, AVX-512
// build), then the scale by 1 / sum: v[i] = ExpGgml(v[i] - max) (-inf gives 0), the
// sum taken per group of 16 in _mm512_reduce_add_ps order and the groups added in
// double; a tail of n % 16 goes through libm's expf, added in double. Used by
// attention and the MoE router.
// AVX2 lanes where the CPU has them, bit-identical to SoftmaxGgmlScalar (tests).
void SoftmaxGgml(float* v, int64_t n);
void SoftmaxGgmlScalar(float* v, int64_t n);

void Swiglu(const float* gate, const float* up, int64_t n, float* y);  // silu(gate) * up
void Geglu(const float* gate, const float* up, int64_t n, float* y);   // gelu(gate) * up
// Fused SwiGLU on [rows, 2n] -> [rows, n]: silu(x[:, :n]) * x[:, n:] (ggml_swiglu).
void SwigluFused(const float* x, int64_t rows, int64_t n, float* y);
void Softcap(float* x, int64_t n, float cap);                          // cap * tanhf(x / cap)

}  // namespace uaii::backends::cpu
