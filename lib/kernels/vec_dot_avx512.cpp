// AVX-512F row kernels for the plain float formats (F32, F16, BF16), bit-identical to
// vec_dot_ref.cpp. The quantized types keep their AVX2 row kernels at this level (the
// AVX-512 gain there is in the VNNI register tiles, gemm_avx512.cpp).
//
// The reference's 4 x 8 accumulators acc[k][l] (element 32s + 8k + l) live in two
// 16-lane registers: A = acc[0] | acc[1] (elements 32s + 0..15), B = acc[2] | acc[3]
// (32s + 16..31), each step one fused multiply-add per register, exactly
// fma(w, x, acc) per lane. Reduction: A + B gives (acc0 + acc2) | (acc1 + acc3), the
// sum of its two halves is s_l = (acc0_l + acc2_l) + (acc1_l + acc3_l), then
// GGML_F32x8_REDUCE's last steps as in vec_dot_avx2.cpp.
//
// Why not AVX512_BF16's vdpbf16ps for BF16: it adds two products per lane per
// instruction (src[2i+1] first, then src[2i]) with DAZ and FTZ forced. The pairing
// could be matched to the reference's order by interleaving steps s and s+1, and in
// the normal range each of its adds rounds like fma (measured on this machine: 0 of
// 1.6M lanes differ), but products or partial sums below 2^-126 are flushed to zero
// where the reference keeps them (1.6M of 1.6M lanes differ on tiny inputs). So it
// cannot be bit-identical; AVX-512F widens bf16 by a 16-bit shift and uses fma.
//
// Speed note: the fixed order allows 32 independent accumulator chains, i.e. at most
// 32 lanes per FMA latency at any vector width, so AVX-512 only saves instructions
// (one load + conversion per 16 elements instead of per 8), not FMA latency.
#include <cstring>

#include "formats/fp16.h"
#include "kernels/dispatch.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define UAII_HAVE_AVX512_KERNELS 1
#define UAII_AVX512 __attribute__((target("avx512f,avx2,fma,f16c")))
#endif

namespace uaii::kernels {

#ifdef UAII_HAVE_AVX512_KERNELS
// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which -Wuninitialized
// reports at every inlining site (GCC bug 105593, fixed in GCC 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
namespace {

UAII_AVX512 inline __m512 LoadF32x16(const uint8_t* p) { return _mm512_loadu_ps(p); }
// F16 -> f32 through vcvtph2ps (F16C's conversion, exact for every non-NaN half).
UAII_AVX512 inline __m512 LoadF16x16(const uint8_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
UAII_AVX512 inline __m512 LoadBF16x16(const uint8_t* p) {
  const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}

inline float ScalarF32(const uint8_t* p) { float v; std::memcpy(&v, p, 4); return v; }
inline float ScalarF16(const uint8_t* p) { uint16_t v; std::memcpy(&v, p, 2); return Fp16ToFp32(v); }
inline float ScalarBF16(const uint8_t* p) { uint16_t v; std::memcpy(&v, p, 2); return Bf16ToFp32(v); }

// kSize: bytes per element; Load widens 16 elements, Scalar one.
template <int kSize, __m512 (*Load)(const uint8_t*), float (*Scalar)(const uint8_t*)>
UAII_AVX512 inline float DotFloat(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const uint8_t*>(wv);
  const auto* x = static_cast<const uint8_t*>(xv);
  __m512 a = _mm512_setzero_ps(), b = _mm512_setzero_ps();
  const int64_t np = n & ~int64_t{31};
  for (int64_t i = 0; i < np; i += 32) {
    a = _mm512_fmadd_ps(Load(w + kSize * i), Load(x + kSize * i), a);
    b = _mm512_fmadd_ps(Load(w + kSize * (i + 16)), Load(x + kSize * (i + 16)), b);
  }
  const __m512 u = _mm512_add_ps(a, b);  // (acc0 + acc2) | (acc1 + acc3)
  const __m256 s = _mm256_add_ps(_mm512_castps512_ps256(u),
                                 _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(u), 1)));
  const __m128 t = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
  const __m128 h = _mm_hadd_ps(t, t);
  float r = _mm_cvtss_f32(_mm_hadd_ps(h, h));
  for (int64_t i = np; i < n; ++i) {
    const float p = Scalar(w + kSize * i) * Scalar(x + kSize * i);
    r += p;
  }
  return r;
}

UAII_AVX512 float DotF32(const void* w, const void* x, int64_t n) {
  return DotFloat<4, LoadF32x16, ScalarF32>(w, x, n);
}
UAII_AVX512 float DotF16(const void* w, const void* x, int64_t n) {
  return DotFloat<2, LoadF16x16, ScalarF16>(w, x, n);
}
UAII_AVX512 float DotBF16(const void* w, const void* x, int64_t n) {
  return DotFloat<2, LoadBF16x16, ScalarBF16>(w, x, n);
}

}  // namespace
#pragma GCC diagnostic pop
#endif  // UAII_HAVE_AVX512_KERNELS

VecDotFn VecDotAvx512(TensorType type) {
#ifdef UAII_HAVE_AVX512_KERNELS
  switch (type) {
    case TensorType::F32: return DotF32;
    case TensorType::F16: return DotF16;
    case TensorType::BF16: return DotBF16;
    default: return nullptr;
  }
#else
  (void)type;
  return nullptr;
#endif
}

}  // namespace uaii::kernels
