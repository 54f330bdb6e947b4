#include "kernels/quantize_act.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "formats/fp16.h"
#include "kernels/vec_dot.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define UAII_QUANT_AVX2 __attribute__((target("avx2,fma,f16c")))
#endif

namespace uaii::kernels {
namespace {
using namespace uaii::quant;

// ggml's nearest_int: round to nearest even by adding 1.5 * 2^23 (valid for
// |f| <= 2^22, which |iscale * x| <= 127 satisfies).
inline int NearestInt(float f) {
  const float v = f + 12582912.f;
  int32_t i;
  std::memcpy(&i, &v, sizeof(i));
  return (i & 0x007fffff) - 0x00400000;
}

// Shared body of the Q8_0 / Q8_1 reference quantizers; returns d and sum(q).
inline float QuantizeBlock32(const float* x, int8_t* qs, int* sum) {
  float amax = 0.0f;
  for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  int s = 0;
  for (int j = 0; j < kQK; ++j) {
    qs[j] = static_cast<int8_t>(std::roundf(x[j] * id));
    s += qs[j];
  }
  *sum = s;
  return d;
}

#ifdef UAII_QUANT_AVX2
// QuantizeBlock32 on 4 x 8 lanes: the same amax, d, id and x * id; roundf's
// half-away-from-zero as trunc(v) + sign(v) where |v - trunc(v)| >= 0.5 (v - trunc(v)
// is exact), so the bytes are identical.
UAII_QUANT_AVX2 void QuantizeRowQ8_0Avx2(const float* x, BlockQ8_0* y, int64_t n) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    __m256 v[4];
    __m256 mx = _mm256_setzero_ps();
    for (int k = 0; k < 4; ++k) {
      v[k] = _mm256_loadu_ps(x + 8 * k);
      mx = _mm256_max_ps(mx, _mm256_and_ps(v[k], abs_mask));
    }
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, mx);
    float amax = 0.0f;
    for (float l : lanes) amax = std::max(amax, l);
    const float d = amax / 127;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[i].d = Fp32ToFp16(d);
    const __m256 vid = _mm256_set1_ps(id), half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f);
    __m256i q[4];
    for (int k = 0; k < 4; ++k) {
      const __m256 p = _mm256_mul_ps(v[k], vid);
      const __m256 t = _mm256_round_ps(p, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
      const __m256 up = _mm256_cmp_ps(_mm256_and_ps(_mm256_sub_ps(p, t), abs_mask), half, _CMP_GE_OQ);
      const __m256 step = _mm256_or_ps(_mm256_and_ps(p, _mm256_set1_ps(-0.0f)), one);  // +-1 with p's sign
      q[k] = _mm256_cvttps_epi32(_mm256_add_ps(t, _mm256_and_ps(up, step)));
    }
    // int32 -> int8 keeping element order (packs interleave 128-bit halves).
    const __m256i w16a = _mm256_packs_epi32(q[0], q[1]), w16b = _mm256_packs_epi32(q[2], q[3]);
    __m256i b8 = _mm256_packs_epi16(w16a, w16b);
    b8 = _mm256_permutevar8x32_epi32(b8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[i].qs), b8);
  }
}
#endif

}  // namespace

void QuantizeRowQ8_0(const float* x, BlockQ8_0* y, int64_t n) {
#ifdef UAII_QUANT_AVX2
  if (CpuHasAvx2()) return QuantizeRowQ8_0Avx2(x, y, n);
#endif
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    int sum;
    y[i].d = Fp32ToFp16(QuantizeBlock32(x, y[i].qs, &sum));
  }
}

void QuantizeRowQ8_1(const float* x, BlockQ8_1* y, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    int sum;
    const float d = QuantizeBlock32(x, y[i].qs, &sum);
    y[i].d = Fp32ToFp16(d);
    y[i].s = Fp32ToFp16(static_cast<float>(sum) * d);
  }
}

void QuantizeRowQ8_K(const float* x, BlockQ8_K* y, int64_t n) {
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    float max = 0.0f, amax = 0.0f;
    for (int j = 0; j < kQK_K; ++j) {
      const float ax = std::fabs(x[j]);
      if (ax > amax) {
        amax = ax;
        max = x[j];
      }
    }
    BlockQ8_K& b = y[i];
    if (amax == 0.0f) {
      b.d = 0.0f;
      std::memset(b.qs, 0, sizeof(b.qs));
      std::memset(b.bsums, 0, sizeof(b.bsums));
      continue;
    }
    const float iscale = -127.f / max;
    for (int j = 0; j < kQK_K; ++j) {
      b.qs[j] = static_cast<int8_t>(std::min(127, NearestInt(iscale * x[j])));
    }
    for (int j = 0; j < kQK_K / 16; ++j) {
      int sum = 0;
      for (int l = 0; l < 16; ++l) sum += b.qs[16 * j + l];
      b.bsums[j] = static_cast<int16_t>(sum);
    }
    b.d = 1 / iscale;
  }
}

#ifdef UAII_QUANT_AVX2
namespace {
// F16C's round-to-nearest-even conversion is Fp32ToFp16 bit for bit, NaN payloads
// included (both set the quiet bit and keep the top 9 payload bits).
UAII_QUANT_AVX2 void ConvertRowF16Avx2(const float* x, uint16_t* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  for (; i < n; ++i) y[i] = Fp32ToFp16(x[i]);
}
}  // namespace
#endif

void ConvertRowF16(const float* x, uint16_t* y, int64_t n) {
#ifdef UAII_QUANT_AVX2
  if (CpuHasAvx2()) return ConvertRowF16Avx2(x, y, n);
#endif
  for (int64_t i = 0; i < n; ++i) y[i] = Fp32ToFp16(x[i]);
}

void ConvertRowBF16(const float* x, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = Fp32ToBf16(x[i]);
}

}  // namespace uaii::kernels
