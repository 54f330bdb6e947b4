// The pieces every x86 float dot shares (F32, F16, BF16 weights against activations
// of the same type; vec_dot.h's fixed order): loading 8 or 16 elements widened to f32
// (exact for every type), one element for the n % 32 tail, and the reference's
// reduction of the 4 x 8 lane accumulators. Used by the row kernels
// (vec_dot_avx2.cpp, vec_dot_avx512.cpp) and the float tiles (gemm_float_avx2.cpp,
// gemm_float_avx512.cpp), so all of them end a dot with the same operations.
//
// Functions carry target attributes (as the rest of lib/kernels): include this only
// from files whose callers check the CPU first.
#pragma once
#include <cstdint>
#include <cstring>

#include "formats/fp16.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define UAII_FD_AVX2 __attribute__((target("avx2,fma,f16c")))
#define UAII_FD_AVX512 __attribute__((target("avx2,fma,f16c,avx512f")))

namespace uaii::kernels::float_dot {

// Element types: E (what a row holds), Load8 / Load16 (widened to f32), One.
struct F32 {
  using E = float;
  UAII_FD_AVX2 static __m256 Load8(const E* p) { return _mm256_loadu_ps(p); }
  UAII_FD_AVX512 static __m512 Load16(const E* p) { return _mm512_loadu_ps(p); }
  static float One(const E* p) { return *p; }
};
struct F16 {
  using E = uint16_t;
  UAII_FD_AVX2 static __m256 Load8(const E* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  UAII_FD_AVX512 static __m512 Load16(const E* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static float One(const E* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return Fp16ToFp32(v);
  }
};
struct BF16 {
  using E = uint16_t;
  UAII_FD_AVX2 static __m256 Load8(const E* p) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
  }
  UAII_FD_AVX512 static __m512 Load16(const E* p) {
    const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
  }
  static float One(const E* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return Bf16ToFp32(v);
  }
};

// r from the 8-lane partial sums s_l = (acc0_l + acc2_l) + (acc1_l + acc3_l):
// t_k = s_k + s_{k+4}, r = (t0 + t1) + (t2 + t3) (GGML_F32x8_REDUCE's last steps),
// then the elements [np, n) as r += w_i * x_i, unfused.
template <typename T>
UAII_FD_AVX2 inline float ReduceWithTail(__m256 s, const typename T::E* w, const typename T::E* x, int64_t np,
                                         int64_t n) {
  const __m128 t = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
  const __m128 u = _mm_hadd_ps(t, t);
  float r = _mm_cvtss_f32(_mm_hadd_ps(u, u));
  for (int64_t i = np; i < n; ++i) {
    const float p = T::One(w + i) * T::One(x + i);
    r += p;
  }
  return r;
}

// The same from four ymm accumulators acc0..acc3.
template <typename T>
UAII_FD_AVX2 inline float Finish4(const __m256* acc, const typename T::E* w, const typename T::E* x, int64_t np,
                                  int64_t n) {
  return ReduceWithTail<T>(_mm256_add_ps(_mm256_add_ps(acc[0], acc[2]), _mm256_add_ps(acc[1], acc[3])), w, x, np, n);
}

// The same from two zmm accumulators a = acc0 | acc1, b = acc2 | acc3: a + b is
// (acc0 + acc2) | (acc1 + acc3), and the sum of its halves is s.
template <typename T>
UAII_FD_AVX512 inline float Finish2(__m512 a, __m512 b, const typename T::E* w, const typename T::E* x, int64_t np,
                                    int64_t n) {
  const __m512 ab = _mm512_add_ps(a, b);
  const __m256 s = _mm256_add_ps(_mm512_castps512_ps256(ab),
                                 _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(ab), 1)));
  return ReduceWithTail<T>(s, w, x, np, n);
}

}  // namespace uaii::kernels::float_dot

#undef UAII_FD_AVX2
#undef UAII_FD_AVX512
#endif
