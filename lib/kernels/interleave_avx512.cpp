// Interleaved group kernels (interleave.h) for AVX-512F/BW + VNNI: a 16-row group is
// one zmm of int32 lanes and vpdpbusd does a lane's 4 byte products at once.
#include <cstring>
#include <utility>

#include "formats/fp16.h"
#include "formats/quant_blocks.h"
#include "kernels/interleave.h"

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12 flags its own avx512fintrin.h helpers (_mm512_undefined_*) as
// maybe-uninitialized when they inline here; a known false positive.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#define UAII_IL_TARGET __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")))
#define UAII_IL_VNNI 1

namespace uaii::kernels {
namespace il_avx512 {

using VI = __m512i;
using VF = __m512;
UAII_IL_TARGET inline VI LoadI(const uint8_t* p) { return _mm512_loadu_si512(p); }
UAII_IL_TARGET inline VI AndI(VI a, VI b) { return _mm512_and_si512(a, b); }
UAII_IL_TARGET inline VI OrI(VI a, VI b) { return _mm512_or_si512(a, b); }
UAII_IL_TARGET inline VI XorI(VI a, VI b) { return _mm512_xor_si512(a, b); }
UAII_IL_TARGET inline VI AddI(VI a, VI b) { return _mm512_add_epi32(a, b); }
UAII_IL_TARGET inline VI SubI(VI a, VI b) { return _mm512_sub_epi32(a, b); }
UAII_IL_TARGET inline VI SetI(int32_t v) { return _mm512_set1_epi32(v); }
template <int n> UAII_IL_TARGET inline VI SllI(VI a) { return _mm512_slli_epi32(a, n); }
template <int n> UAII_IL_TARGET inline VI SrlI(VI a) { return _mm512_srli_epi32(a, n); }
template <int n> UAII_IL_TARGET inline VI SraI(VI a) { return _mm512_srai_epi32(a, n); }
UAII_IL_TARGET inline VI MulLo(VI a, VI b) { return _mm512_mullo_epi32(a, b); }
UAII_IL_TARGET inline VI Bcast4(const void* x4) {
  int32_t v;
  std::memcpy(&v, x4, 4);
  return _mm512_set1_epi32(v);
}
UAII_IL_TARGET inline VI DotU(VI acc, VI u, const int8_t* x4) { return _mm512_dpbusd_epi32(acc, u, Bcast4(x4)); }
UAII_IL_TARGET inline VI DotS(VI acc, VI s, const int8_t* x4) {  // unused with VNNI (Q8_0 goes unsigned)
  const VI x = Bcast4(x4);
  const VI ax = _mm512_abs_epi8(x);
  const __mmask64 neg = _mm512_movepi8_mask(x);
  const VI sx = _mm512_mask_sub_epi8(s, neg, _mm512_setzero_si512(), s);
  return _mm512_dpbusd_epi32(acc, ax, sx);
}
UAII_IL_TARGET inline VF CvtF(VI a) { return _mm512_cvtepi32_ps(a); }
UAII_IL_TARGET inline VF LoadHalves(const uint8_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
UAII_IL_TARGET inline VF MulF(VF a, VF b) { return _mm512_mul_ps(a, b); }
UAII_IL_TARGET inline VF AddF(VF a, VF b) { return _mm512_add_ps(a, b); }
UAII_IL_TARGET inline VF SubF(VF a, VF b) { return _mm512_sub_ps(a, b); }
UAII_IL_TARGET inline VF SetF(float v) { return _mm512_set1_ps(v); }
UAII_IL_TARGET inline VF ZeroF() { return _mm512_setzero_ps(); }
UAII_IL_TARGET inline void StoreF(float* p, VF v) { _mm512_store_ps(p, v); }

#include "kernels/interleave_body.inc"
#include "kernels/interleave_k_body.inc"

}  // namespace il_avx512

GroupFn GroupKernelAvx512(TensorType type) {
  GroupFn f = il_avx512::Kernel(type);
  return f ? f : il_avx512::KernelK(type);
}

}  // namespace uaii::kernels
#else
namespace uaii::kernels {
GroupFn GroupKernelAvx512(TensorType) { return nullptr; }
}  // namespace uaii::kernels
#endif
