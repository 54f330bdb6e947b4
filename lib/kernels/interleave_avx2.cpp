// Interleaved group kernels (interleave.h) for AVX2 + F16C: a 16-row group is a pair
// of ymm int32 vectors; maddubs + madd do a lane's 4 byte products.
#include <cstring>
#include <utility>

#include "formats/fp16.h"
#include "formats/quant_blocks.h"
#include "kernels/interleave.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define UAII_IL_TARGET __attribute__((target("avx2,fma,f16c")))
#define UAII_IL_VNNI 0

namespace uaii::kernels {
namespace il_avx2 {

struct VI { __m256i lo, hi; };
struct VF { __m256 lo, hi; };
UAII_IL_TARGET inline VI LoadI(const uint8_t* p) {
  return {_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)),
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32))};
}
#define UAII_IL_BIN(name, op) \
  UAII_IL_TARGET inline VI name(VI a, VI b) { return {op(a.lo, b.lo), op(a.hi, b.hi)}; }
UAII_IL_BIN(AndI, _mm256_and_si256)
UAII_IL_BIN(OrI, _mm256_or_si256)
UAII_IL_BIN(XorI, _mm256_xor_si256)
UAII_IL_BIN(AddI, _mm256_add_epi32)
UAII_IL_BIN(SubI, _mm256_sub_epi32)
#undef UAII_IL_BIN
UAII_IL_TARGET inline VI SetI(int32_t v) { return {_mm256_set1_epi32(v), _mm256_set1_epi32(v)}; }
template <int n> UAII_IL_TARGET inline VI SllI(VI a) { return {_mm256_slli_epi32(a.lo, n), _mm256_slli_epi32(a.hi, n)}; }
template <int n> UAII_IL_TARGET inline VI SrlI(VI a) { return {_mm256_srli_epi32(a.lo, n), _mm256_srli_epi32(a.hi, n)}; }
template <int n> UAII_IL_TARGET inline VI SraI(VI a) { return {_mm256_srai_epi32(a.lo, n), _mm256_srai_epi32(a.hi, n)}; }
UAII_IL_TARGET inline VI MulLo(VI a, VI b) { return {_mm256_mullo_epi32(a.lo, b.lo), _mm256_mullo_epi32(a.hi, b.hi)}; }
UAII_IL_TARGET inline __m256i Bcast4Half(const void* x4) {
  int32_t v;
  std::memcpy(&v, x4, 4);
  return _mm256_set1_epi32(v);
}
// maddubs pairs stay below 32767: unsigned weights are at most 63 here (Q6_K + 32).
UAII_IL_TARGET inline __m256i Dot8(__m256i u, __m256i x) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), _mm256_set1_epi16(1));
}
UAII_IL_TARGET inline VI Bcast4(const void* x4) {
  const __m256i v = Bcast4Half(x4);
  return {v, v};
}
UAII_IL_TARGET inline VI DotU(VI acc, VI u, const int8_t* x4) {
  const __m256i x = Bcast4Half(x4);
  return {_mm256_add_epi32(acc.lo, Dot8(u.lo, x)), _mm256_add_epi32(acc.hi, Dot8(u.hi, x))};
}
// Signed weights: |w| * sign(x, w), pairs at most 2 * 128 * 127.
UAII_IL_TARGET inline VI DotS(VI acc, VI s, const int8_t* x4) {
  const __m256i x = Bcast4Half(x4);
  return {_mm256_add_epi32(acc.lo, Dot8(_mm256_sign_epi8(s.lo, s.lo), _mm256_sign_epi8(x, s.lo))),
          _mm256_add_epi32(acc.hi, Dot8(_mm256_sign_epi8(s.hi, s.hi), _mm256_sign_epi8(x, s.hi)))};
}
UAII_IL_TARGET inline VF CvtF(VI a) { return {_mm256_cvtepi32_ps(a.lo), _mm256_cvtepi32_ps(a.hi)}; }
UAII_IL_TARGET inline VF LoadHalves(const uint8_t* p) {
  return {_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))),
          _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16)))};
}
UAII_IL_TARGET inline VF MulF(VF a, VF b) { return {_mm256_mul_ps(a.lo, b.lo), _mm256_mul_ps(a.hi, b.hi)}; }
UAII_IL_TARGET inline VF AddF(VF a, VF b) { return {_mm256_add_ps(a.lo, b.lo), _mm256_add_ps(a.hi, b.hi)}; }
UAII_IL_TARGET inline VF SubF(VF a, VF b) { return {_mm256_sub_ps(a.lo, b.lo), _mm256_sub_ps(a.hi, b.hi)}; }
UAII_IL_TARGET inline VF SetF(float v) { return {_mm256_set1_ps(v), _mm256_set1_ps(v)}; }
UAII_IL_TARGET inline VF ZeroF() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
UAII_IL_TARGET inline void StoreF(float* p, VF v) { _mm256_store_ps(p, v.lo); _mm256_store_ps(p + 8, v.hi); }

#include "kernels/interleave_body.inc"
#include "kernels/interleave_k_body.inc"

}  // namespace il_avx2

GroupFn GroupKernelAvx2(TensorType type) {
  GroupFn f = il_avx2::Kernel(type);
  return f ? f : il_avx2::KernelK(type);
}

}  // namespace uaii::kernels
#else
namespace uaii::kernels {
GroupFn GroupKernelAvx2(TensorType) { return nullptr; }
}  // namespace uaii::kernels
#endif
