// AVX-512F row kernel for BF16, bit-identical to vec_dot_ref.cpp. The other types
// keep their AVX2 row kernels at the avx512 level (dispatch.h): on Zen 4 class cores,
// where 512-bit operations run as two 256-bit halves, F16 through F16C's vcvtph2ps in
// ymm is faster than the zmm version of this body and F32 gains nothing from it
// (docs/performance.md, "Kernels"), and the quantized types' AVX-512 gain is in the
// VNNI register tiles (gemm_avx512.cpp).
//
// The reference's 4 x 8 accumulators acc[k][l] (element 32s + 8k + l) live in two
// 16-lane registers: A = acc[0] | acc[1] (elements 32s + 0..15), B = acc[2] | acc[3]
// (32s + 16..31), each step one fused multiply-add per register, exactly
// fma(w, x, acc) per lane. Reduction: A + B gives (acc0 + acc2) | (acc1 + acc3), the
// sum of its two halves is s_l = (acc0_l + acc2_l) + (acc1_l + acc3_l), then
// GGML_F32x8_REDUCE's last steps as in vec_dot_avx2.cpp.
//
// Why not AVX512_BF16's vdpbf16ps: it adds two products per lane per instruction
// (src[2i+1] first, then src[2i]) with DAZ and FTZ forced. The pairing could be
// matched to the reference's order by interleaving steps s and s+1, and in the
// normal range each of its adds rounds like fma, but products or partial sums below
// 2^-126 are flushed to zero where the reference keeps them (the lane counts are in
// docs/performance.md, "Kernels"). So it cannot be bit-identical; AVX-512F widens bf16
// by a 16-bit shift and uses fma.
//
// Speed note: the fixed order allows 32 independent accumulator chains, i.e. at most
// 32 lanes per FMA latency at any vector width, so zmm only saves instructions (one
// load + widening per 16 elements instead of per 8), not FMA latency: BF16 runs about
// as fast as the AVX2 row (docs/performance.md, "Kernels").
#include <cstring>

#include "kernels/dispatch.h"
#include "kernels/float_dot_x86.h"

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

// Generic over the element type (float_dot_x86.h), so that the F32 / F16 forms of this
// body can be compared with the AVX2 rows (see above).
template <typename T>
UAII_AVX512 inline float DotFloat(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const typename T::E*>(wv);
  const auto* x = static_cast<const typename T::E*>(xv);
  __m512 a = _mm512_setzero_ps(), b = _mm512_setzero_ps();
  const int64_t np = n & ~int64_t{31};
  for (int64_t i = 0; i < np; i += 32) {
    a = _mm512_fmadd_ps(T::Load16(w + i), T::Load16(x + i), a);
    b = _mm512_fmadd_ps(T::Load16(w + i + 16), T::Load16(x + i + 16), b);
  }
  return float_dot::Finish2<T>(a, b, w, x, np, n);
}

UAII_AVX512 float DotBF16(const void* w, const void* x, int64_t n) { return DotFloat<float_dot::BF16>(w, x, n); }

}  // namespace
#pragma GCC diagnostic pop
#endif  // UAII_HAVE_AVX512_KERNELS

VecDotFn VecDotAvx512(TensorType type) {
#ifdef UAII_HAVE_AVX512_KERNELS
  switch (type) {
    case TensorType::BF16: return DotBF16;
    default: return nullptr;
  }
#else
  (void)type;
  return nullptr;
#endif
}

}  // namespace uaii::kernels
