#include "backends/cpu/cpu_ops.h"

#include <cmath>
#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "formats/fp16.h"
#include "kernels/vec_dot.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define UAII_OPS_AVX2 __attribute__((target("avx2,fma,f16c")))
#endif

namespace uaii::backends::cpu {

void RmsNorm(const float* x, const float* w, int64_t rows, int64_t n, float eps, float* y) {
  // Each row's sum of squares is ggml's: one double added in element order, a chain of
  // n dependent adds (~4 cycles each). Rows are independent, so four rows' chains run
  // side by side (Gemma 3's per-head norms: 4 heads of 256 per decode step); each
  // chain still adds in its own order, so every row's bits are unchanged.
  thread_local std::vector<double> sums;
  sums.assign(static_cast<size_t>(rows), 0.0);
  int64_t r4 = 0;
  for (; r4 + 4 <= rows; r4 += 4) {
    const float* x0 = x + r4 * n;
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (int64_t i = 0; i < n; ++i) {
      s0 += static_cast<double>(x0[i] * x0[i]);
      s1 += static_cast<double>(x0[n + i] * x0[n + i]);
      s2 += static_cast<double>(x0[2 * n + i] * x0[2 * n + i]);
      s3 += static_cast<double>(x0[3 * n + i] * x0[3 * n + i]);
    }
    sums[r4] = s0;
    sums[r4 + 1] = s1;
    sums[r4 + 2] = s2;
    sums[r4 + 3] = s3;
  }
  for (; r4 < rows; ++r4) {
    const float* xr = x + r4 * n;
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(xr[i] * xr[i]);
    sums[r4] = sum;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    const double sum = sums[r];
    const float mean = static_cast<float>(sum / static_cast<double>(n));
    const float scale = 1.0f / std::sqrt(mean + eps);
    for (int64_t i = 0; i < n; ++i) yr[i] = xr[i] * scale;
    if (w)
      for (int64_t i = 0; i < n; ++i) yr[i] = yr[i] * w[i];
  }
}

void LayerNorm(const float* x, const float* w, const float* b, int64_t rows, int64_t n, float eps, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(xr[i]);
    const float mean = static_cast<float>(sum) / static_cast<float>(n);
    double sum2 = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      const float v = xr[i] - mean;
      yr[i] = v;
      sum2 += static_cast<double>(v * v);
    }
    const float var = static_cast<float>(sum2 / static_cast<double>(n));
    const float scale = 1.0f / std::sqrt(var + eps);
    for (int64_t i = 0; i < n; ++i) yr[i] *= scale;
    if (w)
      for (int64_t i = 0; i < n; ++i) yr[i] = yr[i] * w[i];
    if (b)
      for (int64_t i = 0; i < n; ++i) yr[i] = yr[i] + b[i];
  }
}

namespace {

// The cos / sin table of RoPE for some positions: T rows of n_dims (cos, sin * mscale
// pairs), computed exactly as ggml's rope does (ggml_rope_yarn).
void RopeTable(const int32_t* pos, int64_t T, int64_t n_dims, float freq_base, float freq_scale,
               const float* factors, const RopeYarn& yarn, float* cs) {
  const float theta_scale = std::pow(freq_base, -2.0f / static_cast<float>(n_dims));
  // ggml_rope_yarn_corr_dims
  float corr0 = 0, corr1 = 0;
  if (yarn.ext_factor != 0.0f) {
    constexpr float kPi = 3.14159265358979323846f;
    const float nd = static_cast<float>(n_dims), orig = static_cast<float>(yarn.n_ctx_orig);
    const float start = std::floor(nd * std::log(orig / (yarn.beta_fast * 2 * kPi)) / (2 * std::log(freq_base)));
    const float end = std::ceil(nd * std::log(orig / (yarn.beta_slow * 2 * kPi)) / (2 * std::log(freq_base)));
    corr0 = std::max(0.0f, start);
    corr1 = std::min(nd - 1, end);
  }
  float mscale = yarn.attn_factor;
  if (yarn.ext_factor != 0.0f) mscale *= 1.0f + 0.1f * std::log(1.0f / freq_scale);
  for (int64_t t = 0; t < T; ++t, cs += n_dims) {
    float theta = static_cast<float>(pos[t]);
    for (int64_t i0 = 0; i0 < n_dims; i0 += 2) {
      const float ff = factors ? factors[i0 / 2] : 1.0f;
      const float extrap = theta / ff;
      float th = freq_scale * extrap;
      if (yarn.ext_factor != 0.0f) {
        const float y = (static_cast<float>(i0 / 2) - corr0) / std::max(0.001f, corr1 - corr0);
        const float ramp = (1 - std::min(1.0f, std::max(0.0f, y))) * yarn.ext_factor;
        th = th * (1 - ramp) + extrap * ramp;
      }
      cs[i0] = std::cos(th) * mscale;
      cs[i0 + 1] = std::sin(th) * mscale;
      theta *= theta_scale;
    }
  }
}

// The last few tables per thread. A layer's Q and K rotate at the same positions, and
// layers of one RoPE base share them too (Gemma 3: 18 layers, two bases), so a decode
// step computes each table once instead of twice per layer (a head dimension's sincos each).
// The key holds everything the table depends on, the factors by value (a pointer
// could be a later model's tensor at the same address). No allocation once warm.
class RopeTables {
 public:
  const float* Get(const int32_t* pos, int64_t T, int64_t n_dims, float freq_base, float freq_scale,
                   const float* factors, const RopeYarn& yarn) {
    for (Entry& e : entries_)
      if (e.Matches(pos, T, n_dims, freq_base, freq_scale, factors, yarn)) return e.cs.data();
    Entry& e = entries_[next_];
    next_ = (next_ + 1) % kEntries;
    e.n_dims = n_dims;
    e.freq_base = freq_base;
    e.freq_scale = freq_scale;
    e.yarn = yarn;
    e.has_factors = factors != nullptr;
    if (factors) e.factors.assign(factors, factors + n_dims / 2);
    else e.factors.clear();
    e.pos.assign(pos, pos + T);
    e.cs.resize(static_cast<size_t>(T * n_dims));
    RopeTable(pos, T, n_dims, freq_base, freq_scale, factors, yarn, e.cs.data());
    return e.cs.data();
  }

 private:
  static constexpr int kEntries = 4;
  struct Entry {
    int64_t n_dims = -1;
    float freq_base = 0, freq_scale = 0;
    RopeYarn yarn;
    bool has_factors = false;
    std::vector<float> factors;
    std::vector<int32_t> pos;
    std::vector<float> cs;
    bool Matches(const int32_t* p, int64_t T, int64_t nd, float base, float scale, const float* f,
                 const RopeYarn& y) const {
      return n_dims == nd && freq_base == base && freq_scale == scale && y.ext_factor == yarn.ext_factor &&
             y.attn_factor == yarn.attn_factor && y.beta_fast == yarn.beta_fast && y.beta_slow == yarn.beta_slow &&
             y.n_ctx_orig == yarn.n_ctx_orig && has_factors == (f != nullptr) &&
             static_cast<int64_t>(pos.size()) == T && std::memcmp(pos.data(), p, T * sizeof(int32_t)) == 0 &&
             (f == nullptr || std::memcmp(factors.data(), f, factors.size() * sizeof(float)) == 0);
    }
  };
  Entry entries_[kEntries];
  int next_ = 0;
};

}  // namespace

void Rope(float* x, const int32_t* pos, int64_t T, int64_t heads, int64_t dim, int64_t n_dims,
          float freq_base, float freq_scale, const float* factors, bool neox, const RopeYarn& yarn) {
  if (n_dims <= 0 || T <= 0) return;
  thread_local RopeTables tables;
  // Tables of at most ~1 MiB (a 512-token chunk of Gemma 3's 256 dims is 512 KiB), so
  // that a long prefill chunk does not leave tens of MiB cached per thread.
  constexpr int64_t kMaxTableBytes = int64_t{1} << 20;
  const int64_t rows_per_table = std::max<int64_t>(1, kMaxTableBytes / (n_dims * int64_t{sizeof(float)}));
  const float* table = nullptr;
  for (int64_t t = 0; t < T; ++t) {
    if (t % rows_per_table == 0)
      table = tables.Get(pos + t, std::min(rows_per_table, T - t), n_dims, freq_base, freq_scale, factors, yarn);
    const float* cs = table + (t % rows_per_table) * n_dims;
    for (int64_t h = 0; h < heads; ++h) {
      float* v = x + (t * heads + h) * dim;
      for (int64_t i0 = 0; i0 < n_dims; i0 += 2) {
        const float c = cs[i0], s = cs[i0 + 1];
        const int64_t a = neox ? i0 / 2 : i0;
        const int64_t b = neox ? i0 / 2 + n_dims / 2 : i0 + 1;
        const float x0 = v[a], x1 = v[b];
        v[a] = x0 * c - x1 * s;
        v[b] = x0 * s + x1 * c;
      }
    }
  }
}

namespace {
float GeluTanh(float x) {
  constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
  constexpr float kCoefA = 0.044715f;
  return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + kCoefA * x * x)));
}

// gelu over every f16 value, rounded back to f16: ggml's GGML_GELU_FP16 table.
const std::vector<uint16_t>& GeluTable() {
  static const std::vector<uint16_t> table = [] {
    // One spare entry: the vector path gathers 4 bytes at entry i (the high 2 unused).
    std::vector<uint16_t> t((1 << 16) + 1, 0);
    for (uint32_t i = 0; i < (1u << 16); ++i) t[i] = Fp32ToFp16(GeluTanh(Fp16ToFp32(static_cast<uint16_t>(i))));
    return t;
  }();
  return table;
}
}  // namespace

float GeluF16Table(float x) {
  if (x <= -10.0f) return 0.0f;
  if (x >= 10.0f) return x;
  return Fp16ToFp32(GeluTable()[Fp32ToFp16(x)]);
}

float ExpGgml(float x) {
  // Polynomial coefficients of the Arm optimized-routines expf that ggml adapts.
  constexpr float kShift = 0x1.8p23f, kLog2e = 0x1.715476p+0f;
  constexpr float kLn2Hi = 0x1.62e4p-1f, kLn2Lo = 0x1.7f7d1cp-20f;
  constexpr float c1 = 0x1.ffffecp-1f, c2 = 0x1.fffdb6p-2f, c3 = 0x1.555e66p-3f, c4 = 0x1.573e2ep-5f,
                  c5 = 0x1.0e4020p-7f;
  const float z = std::fma(x, kLog2e, kShift);
  const float n = z - kShift;
  const float b = std::fma(-n, kLn2Lo, std::fma(-n, kLn2Hi, x));
  // Written as !(<=) so NaN takes this branch too: converting it to int is undefined.
  if (!(std::fabs(n) <= 192.0f)) return std::isnan(n) ? x : n > 0 ? INFINITY : 0.0f;
  const float u = b * b;
  const float j = std::fma(std::fma(std::fma(c5, b, c4), u, std::fma(c3, b, c2)), u, std::fma(c1, b, 1.0f));
  return std::ldexp(j, static_cast<int>(n));
}

#ifdef UAII_OPS_AVX2
namespace {
// ExpGgml on 8 lanes; false (nothing written) when a lane needs the scalar code.
UAII_OPS_AVX2 inline bool Exp8(__m256 x, __m256* out) {
  const __m256 shift = _mm256_set1_ps(0x1.8p23f);
  const __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(0x1.715476p+0f), shift);
  const __m256 n = _mm256_sub_ps(z, shift);
  const __m256 an = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), n);
  const __m256 ok = _mm256_cmp_ps(an, _mm256_set1_ps(126.0f), _CMP_LE_OQ);
  const __m256 big = _mm256_cmp_ps(n, _mm256_set1_ps(192.0f), _CMP_GT_OQ);
  const __m256 small = _mm256_cmp_ps(n, _mm256_set1_ps(-192.0f), _CMP_LT_OQ);
  if (_mm256_movemask_ps(_mm256_or_ps(ok, _mm256_or_ps(big, small))) != 0xFF) return false;
  const __m256 nn = _mm256_sub_ps(_mm256_setzero_ps(), n);
  const __m256 b = _mm256_fmadd_ps(nn, _mm256_set1_ps(0x1.7f7d1cp-20f),
                                   _mm256_fmadd_ps(nn, _mm256_set1_ps(0x1.62e4p-1f), x));
  const __m256 u = _mm256_mul_ps(b, b);
  const __m256 j = _mm256_fmadd_ps(
      _mm256_fmadd_ps(_mm256_fmadd_ps(_mm256_set1_ps(0x1.0e4020p-7f), b, _mm256_set1_ps(0x1.573e2ep-5f)), u,
                      _mm256_fmadd_ps(_mm256_set1_ps(0x1.555e66p-3f), b, _mm256_set1_ps(0x1.fffdb6p-2f))),
      u, _mm256_fmadd_ps(_mm256_set1_ps(0x1.ffffecp-1f), b, _mm256_set1_ps(1.0f)));
  // 2^n for the in-range lanes (others are replaced below).
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(_mm256_and_ps(n, ok)), _mm256_set1_epi32(127)), 23);
  __m256 r = _mm256_mul_ps(j, _mm256_castsi256_ps(e));
  r = _mm256_blendv_ps(r, _mm256_set1_ps(INFINITY), big);
  r = _mm256_blendv_ps(r, _mm256_setzero_ps(), small);
  *out = r;
  return true;
}

// ExpGgml on 8 lanes, always: Exp8, or the scalar code for every lane when one needs it.
UAII_OPS_AVX2 inline __m256 Exp8Exact(__m256 x) {
  __m256 r;
  if (Exp8(x, &r)) return r;
  alignas(32) float t[8];
  _mm256_store_ps(t, x);
  for (float& l : t) l = ExpGgml(l);
  return _mm256_load_ps(t);
}

UAII_OPS_AVX2 void ExpRowAvx2(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, Exp8Exact(_mm256_loadu_ps(x + i)));
  for (; i < n; ++i) y[i] = ExpGgml(x[i]);
}

// silu(g) * u = (g / (1 + ExpGgml(-g))) * u, 8 lanes at a time.
UAII_OPS_AVX2 void SwigluAvx2(const float* gate, const float* up, int64_t n, float* y) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(gate + i);
    __m256 e;
    if (!Exp8(_mm256_sub_ps(_mm256_setzero_ps(), g), &e)) {
      for (int l = 0; l < 8; ++l) y[i + l] = Silu(gate[i + l]) * up[i + l];
      continue;
    }
    const __m256 s = _mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
    _mm256_storeu_ps(y + i, _mm256_mul_ps(s, _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) y[i] = Silu(gate[i]) * up[i];
}
}  // namespace
#endif

void ExpGgmlRow(const float* x, float* y, int64_t n) {
#ifdef UAII_OPS_AVX2
  if (kernels::CpuHasAvx2()) return ExpRowAvx2(x, y, n);
#endif
  for (int64_t i = 0; i < n; ++i) y[i] = ExpGgml(x[i]);
}

#ifdef UAII_OPS_AVX2
namespace {
// SoftmaxGgmlScalar 8 lanes at a time: the max is order-free (NaN lanes ignored, as
// std::max(mx, v) does); each group of 16 is Exp8Exact twice and the group's sum is the
// same tree ((l, l + 8) pairs, then (l, l + 4), then (0 + 2) + (1 + 3)) as vector adds;
// the groups, the tail and the final scale are the scalar code's. It was a third of a
// TinyLlama decode step's attention in L2 as scalar code.
UAII_OPS_AVX2 void SoftmaxAvx2(float* v, int64_t n) {
  const float ninf = -std::numeric_limits<float>::infinity();
  __m256 m8 = _mm256_set1_ps(ninf);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) m8 = _mm256_max_ps(_mm256_loadu_ps(v + i), m8);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, m8);
  float mx = ninf;
  for (float l : lanes) mx = std::max(mx, l);
  for (; i < n; ++i) mx = std::max(mx, v[i]);
  const __m256 mxv = _mm256_set1_ps(mx), ninfv = _mm256_set1_ps(ninf);
  double sum = 0.0;
  for (i = 0; i + 16 <= n; i += 16) {
    __m256 h[2];
    for (int k = 0; k < 2; ++k) {
      const __m256 x = _mm256_loadu_ps(v + i + 8 * k);
      const __m256 e = Exp8Exact(_mm256_sub_ps(x, mxv));
      h[k] = _mm256_blendv_ps(e, _mm256_setzero_ps(), _mm256_cmp_ps(x, ninfv, _CMP_EQ_OQ));
      _mm256_storeu_ps(v + i + 8 * k, h[k]);
    }
    const __m256 a = _mm256_add_ps(h[0], h[1]);
    const __m128 b = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    const __m128 c = _mm_add_ps(b, _mm_movehl_ps(b, b));  // (b0 + b2, b1 + b3)
    sum += static_cast<double>(_mm_cvtss_f32(_mm_add_ss(c, _mm_shuffle_ps(c, c, 1))));
  }
  for (; i < n; ++i) {  // leftovers: libm expf
    v[i] = std::exp(v[i] - mx);
    sum += static_cast<double>(v[i]);
  }
  const __m256 inv = _mm256_set1_ps(static_cast<float>(1.0 / sum));
  for (i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(v + i, _mm256_mul_ps(_mm256_loadu_ps(v + i), inv));
  for (; i < n; ++i) v[i] = v[i] * _mm256_cvtss_f32(inv);
}
}  // namespace
#endif

void SoftmaxGgml(float* v, int64_t n) {
#ifdef UAII_OPS_AVX2
  if (kernels::CpuHasAvx2()) return SoftmaxAvx2(v, n);
#endif
  SoftmaxGgmlScalar(v, n);
}

void SoftmaxGgmlScalar(float* v, int64_t n) {
  float mx = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) mx = std::max(mx, v[i]);
  double sum = 0.0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    float e[16];
    for (int l = 0; l < 16; ++l) e[l] = v[i + l] - mx;
    ExpGgmlRow(e, e, 16);
    for (int l = 0; l < 16; ++l) v[i + l] = v[i + l] == -std::numeric_limits<float>::infinity() ? 0.0f : e[l];
    float a[8], b4[4];
    for (int l = 0; l < 8; ++l) a[l] = v[i + l] + v[i + l + 8];
    for (int l = 0; l < 4; ++l) b4[l] = a[l] + a[l + 4];
    sum += static_cast<double>((b4[0] + b4[2]) + (b4[1] + b4[3]));
  }
  for (; i < n; ++i) {  // leftovers: libm expf
    v[i] = std::exp(v[i] - mx);
    sum += static_cast<double>(v[i]);
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t j = 0; j < n; ++j) v[j] = v[j] * inv;
}

float Silu(float x) { return x / (1.0f + ExpGgml(-x)); }

void Swiglu(const float* gate, const float* up, int64_t n, float* y) {
#ifdef UAII_OPS_AVX2
  if (kernels::CpuHasAvx2()) return SwigluAvx2(gate, up, n, y);
#endif
  for (int64_t i = 0; i < n; ++i) y[i] = Silu(gate[i]) * up[i];
}

#ifdef UAII_OPS_AVX2
namespace {
// Geglu's table lookup 8 lanes at a time: F16C's round-to-nearest-even conversion is
// Fp32ToFp16 for every non-NaN float, a 32-bit gather reads the table entry, and the
// |g| >= 10 short-cuts are blends; NaN lanes go through the scalar code.
UAII_OPS_AVX2 void GegluAvx2(const uint16_t* table, const float* gate, const float* up, int64_t n, float* y) {
  int64_t i = 0;
  const __m256 lo = _mm256_set1_ps(-10.0f), hi = _mm256_set1_ps(10.0f);
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(gate + i), u = _mm256_loadu_ps(up + i);
    if (_mm256_movemask_ps(_mm256_cmp_ps(g, g, _CMP_UNORD_Q)) != 0) {
      for (int l = 0; l < 8; ++l) y[i + l] = GeluF16Table(gate[i + l]) * up[i + l];
      continue;
    }
    const __m256i idx = _mm256_cvtepu16_epi32(_mm256_cvtps_ph(g, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    const __m256i t = _mm256_and_si256(_mm256_i32gather_epi32(reinterpret_cast<const int*>(table), idx, 2),
                                       _mm256_set1_epi32(0xFFFF));
    const __m128i h = _mm_packus_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
    __m256 r = _mm256_mul_ps(_mm256_cvtph_ps(h), u);
    r = _mm256_blendv_ps(r, _mm256_mul_ps(g, u), _mm256_cmp_ps(g, hi, _CMP_GE_OQ));
    r = _mm256_blendv_ps(r, _mm256_setzero_ps(), _mm256_cmp_ps(g, lo, _CMP_LE_OQ));
    _mm256_storeu_ps(y + i, r);
  }
  for (; i < n; ++i) y[i] = GeluF16Table(gate[i]) * up[i];
}
}  // namespace
#endif

void Geglu(const float* gate, const float* up, int64_t n, float* y) {
  const auto& table = GeluTable();
#ifdef UAII_OPS_AVX2
  if (kernels::CpuHasAvx2()) return GegluAvx2(table.data(), gate, up, n, y);
#endif
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    if (g <= -10.0f) y[i] = 0.0f;
    else if (g >= 10.0f) y[i] = g * up[i];
    else y[i] = Fp16ToFp32(table[Fp32ToFp16(g)]) * up[i];
  }
}

void SwigluFused(const float* x, int64_t rows, int64_t n, float* y) {
  for (int64_t r = 0; r < rows; ++r) Swiglu(x + r * 2 * n, x + r * 2 * n + n, n, y + r * n);
}

void Softcap(float* x, int64_t n, float cap) {
  for (int64_t i = 0; i < n; ++i) x[i] = cap * std::tanh(x[i] / cap);
}

}  // namespace uaii::backends::cpu
