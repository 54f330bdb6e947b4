// SSE4.2-level (x86-64-v2: SSSE3's pshufb / pmaddubsw / psignb; no AVX, FMA or F16C)
// row kernels, bit-identical to vec_dot_ref.cpp (see vec_dot.h):
//
//  * 32-block types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0): the block's integer dot in two
//    16-byte halves (exact: maddubs pairs stay below 32767, bounds as in
//    vec_dot_avx2.cpp), then the reference's scalar f32 term, added to sumf block by
//    block. Scales convert with the scalar Fp16ToFp32 (no F16C at this level).
//  * Q2_K: the reference's plain integer sum, then its f32 step.
//  * Q3_K, Q4_K, Q5_K, Q6_K: the reference's one int32 per super-block from maddubs
//    per sub-block and one madd with its scale (below), then its scalar f32 steps.
//  * F16: both sides widen to f32 with an integer-only conversion (exactly
//    Fp16ToFp32, NaN payloads included, independent of MXCSR); the reference's
//    fma(w, x, acc) becomes mul + add, which is the same operation here because the
//    product of two halves (11-bit significands, exponents within 2^-48..2^32) is
//    exact in f32, so fma and mul + add round the same exact sum once.
//  * F32 and BF16 stay on the reference: their products are not always exact in f32
//    (BF16: underflow to subnormals), and without FMA hardware mul + add would round
//    twice.
// Functions carry target attributes so no SSE4.2 code leaks into shared inlines.
#include <cstring>

#include "formats/fp16.h"
#include "formats/quant_blocks.h"
#include "kernels/kquant_scales.h"
#include "kernels/dispatch.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define UAII_HAVE_SSE42_KERNELS 1
#define UAII_SSE42 __attribute__((target("sse4.2")))
#endif

namespace uaii::kernels {

#ifdef UAII_HAVE_SSE42_KERNELS
namespace {
using namespace uaii::quant;

UAII_SSE42 inline __m128i Load128(const void* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

// 4 int32 partial sums of the 16 products a * b, a signed with |a| <= 128, b signed
// with |b| <= 127 (sign trick: maddubs pairs <= 2 * 128 * 127 < 32767).
UAII_SSE42 inline __m128i DotI8(__m128i a, __m128i b) {
  return _mm_madd_epi16(_mm_maddubs_epi16(_mm_sign_epi8(a, a), _mm_sign_epi8(b, a)),
                        _mm_set1_epi16(1));
}
// Same for unsigned u <= 31 (pairs <= 2 * 31 * 128).
UAII_SSE42 inline __m128i DotU8(__m128i u, __m128i s) {
  return _mm_madd_epi16(_mm_maddubs_epi16(u, s), _mm_set1_epi16(1));
}
UAII_SSE42 inline int Hsum(__m128i v) {
  v = _mm_add_epi32(v, _mm_shuffle_epi32(v, 0x4E));
  v = _mm_add_epi32(v, _mm_shuffle_epi32(v, 0xB1));
  return _mm_cvtsi128_si32(v);
}

// Elements 0..15 (low nibbles) and 16..31 (high nibbles) of a Q4/Q5 block.
UAII_SSE42 inline void Nibbles(const uint8_t* qs, __m128i* lo, __m128i* hi) {
  const __m128i q = Load128(qs), m = _mm_set1_epi8(0x0F);
  *lo = _mm_and_si128(q, m);
  *hi = _mm_and_si128(_mm_srli_epi16(q, 4), m);
}

// Byte j = 0x10 when bit 16 * half + j of the little-endian u32 at p is set.
UAII_SSE42 inline __m128i Bit4(const uint8_t* p, int half) {
  uint32_t bits;
  std::memcpy(&bits, p, 4);
  const char b0 = static_cast<char>(2 * half), b1 = static_cast<char>(2 * half + 1);
  const __m128i spread = _mm_shuffle_epi8(
      _mm_set1_epi32(static_cast<int>(bits)),
      _mm_setr_epi8(b0, b0, b0, b0, b0, b0, b0, b0, b1, b1, b1, b1, b1, b1, b1, b1));
  const __m128i mask = _mm_set1_epi64x(static_cast<long long>(0x8040201008040201ULL));
  const __m128i set = _mm_cmpeq_epi8(_mm_and_si128(spread, mask), mask);
  return _mm_and_si128(set, _mm_set1_epi8(0x10));
}

UAII_SSE42 float DotQ4_0(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const BlockQ4_0*>(wv);
  const auto* x = static_cast<const BlockQ8_0*>(xv);
  const __m128i eight = _mm_set1_epi8(8);
  float sumf = 0;
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    __m128i lo, hi;
    Nibbles(w[ib].qs, &lo, &hi);
    const int sumi = Hsum(_mm_add_epi32(DotI8(_mm_sub_epi8(lo, eight), Load128(x[ib].qs)),
                                        DotI8(_mm_sub_epi8(hi, eight), Load128(x[ib].qs + 16))));
    sumf += static_cast<float>(sumi) * Fp16ToFp32(w[ib].d) * Fp16ToFp32(x[ib].d);
  }
  return sumf;
}

UAII_SSE42 float DotQ5_0(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const BlockQ5_0*>(wv);
  const auto* x = static_cast<const BlockQ8_0*>(xv);
  const __m128i sixteen = _mm_set1_epi8(16);
  float sumf = 0;
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    __m128i lo, hi;
    Nibbles(w[ib].qs, &lo, &hi);
    lo = _mm_sub_epi8(_mm_or_si128(lo, Bit4(w[ib].qh, 0)), sixteen);
    hi = _mm_sub_epi8(_mm_or_si128(hi, Bit4(w[ib].qh, 1)), sixteen);
    const int sumi = Hsum(_mm_add_epi32(DotI8(lo, Load128(x[ib].qs)), DotI8(hi, Load128(x[ib].qs + 16))));
    sumf += (Fp16ToFp32(w[ib].d) * Fp16ToFp32(x[ib].d)) * static_cast<float>(sumi);
  }
  return sumf;
}

// Weights may be -128; Q8_0 activations are within [-127, 127] (DotI8's bound).
UAII_SSE42 float DotQ8_0(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const BlockQ8_0*>(wv);
  const auto* x = static_cast<const BlockQ8_0*>(xv);
  float sumf = 0;
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    const int sumi = Hsum(_mm_add_epi32(DotI8(Load128(w[ib].qs), Load128(x[ib].qs)),
                                        DotI8(Load128(w[ib].qs + 16), Load128(x[ib].qs + 16))));
    sumf += static_cast<float>(sumi) * (Fp16ToFp32(w[ib].d) * Fp16ToFp32(x[ib].d));
  }
  return sumf;
}

template <bool kFive, typename Block>
UAII_SSE42 inline float DotQ_1(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const Block*>(wv);
  const auto* x = static_cast<const BlockQ8_1*>(xv);
  float sumf = 0;
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    __m128i lo, hi;
    Nibbles(w[ib].qs, &lo, &hi);
    if constexpr (kFive) {
      lo = _mm_or_si128(lo, Bit4(reinterpret_cast<const BlockQ5_1&>(w[ib]).qh, 0));
      hi = _mm_or_si128(hi, Bit4(reinterpret_cast<const BlockQ5_1&>(w[ib]).qh, 1));
    }
    const int sumi = Hsum(_mm_add_epi32(DotU8(lo, Load128(x[ib].qs)), DotU8(hi, Load128(x[ib].qs + 16))));
    sumf += (Fp16ToFp32(w[ib].d) * Fp16ToFp32(x[ib].d)) * static_cast<float>(sumi) +
            Fp16ToFp32(w[ib].m) * Fp16ToFp32(x[ib].s);
  }
  return sumf;
}

UAII_SSE42 float DotQ4_1(const void* w, const void* x, int64_t n) { return DotQ_1<false, BlockQ4_1>(w, x, n); }
UAII_SSE42 float DotQ5_1(const void* w, const void* x, int64_t n) { return DotQ_1<true, BlockQ5_1>(w, x, n); }

// --- K-quants (Q3_K, Q4_K, Q5_K, Q6_K) ---
//
// The reference's one exact int32 per super-block (any order, vec_dot.h): maddubs
// int16 pair sums of one sub-block (unsigned weights; a 32-element sub-block's two
// halves added in int16, bounds per kernel), one madd with the sub-block's scale into
// int32 lanes, one horizontal sum per block; then the reference's scalar f32 steps.
// Q3_K / Q6_K take u = q + 4 / q + 32 and subtract offset * sum_j sc_j bsums[j]
// (bsums[j]: the activation sum of the 16-element sub-block j).

// Sub-block s (elements 32s + l): nibble s % 2 of qs[32 (s / 2) + l], Q5_K adds bit s of
// qh[l] as bit 4; q <= 31, so the int16 sum of the two halves' maddubs pairs stays
// <= 4 * 31 * 128 and madd with the 6-bit scale is exact. summins: the 8 sub-block
// sums bsums[2s] + bsums[2s + 1] (one hadd) times the mins (one madd).
template <bool kFive, typename Block>
UAII_SSE42 inline float DotQ45K(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const Block*>(wv);
  const auto* x = static_cast<const BlockQ8_K*>(xv);
  float sumf = 0;
  const __m128i m4 = _mm_set1_epi8(0x0F), h16 = _mm_set1_epi8(0x10);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    alignas(16) uint8_t sm[16];
    UnpackScalesMinsK4(w[i].scales, sm);
    const __m128i mins = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sm + 8)));
    const __m128i bs = _mm_hadd_epi16(Load128(x[i].bsums), Load128(x[i].bsums + 8));
    const int summins = Hsum(_mm_madd_epi16(bs, mins));
    __m128i qh0 = _mm_setzero_si128(), qh1 = qh0;
    if constexpr (kFive) {
      qh0 = Load128(reinterpret_cast<const BlockQ5_K&>(w[i]).qh);
      qh1 = Load128(reinterpret_cast<const BlockQ5_K&>(w[i]).qh + 16);
    }
    __m128i acc = _mm_setzero_si128();
    for (int s = 0; s < 8; ++s) {
      const uint8_t* qs = w[i].qs + 32 * (s / 2);
      __m128i q0 = Load128(qs), q1 = Load128(qs + 16);
      if (s % 2) {
        q0 = _mm_srli_epi16(q0, 4);
        q1 = _mm_srli_epi16(q1, 4);
      }
      q0 = _mm_and_si128(q0, m4);
      q1 = _mm_and_si128(q1, m4);
      if constexpr (kFive) {
        // qh >> s holds bit s of every byte in bit 0 (16-bit shifts: the neighbour
        // byte's bits are masked off by 0x10).
        q0 = _mm_or_si128(q0, _mm_and_si128(_mm_slli_epi16(qh0, 4), h16));
        q1 = _mm_or_si128(q1, _mm_and_si128(_mm_slli_epi16(qh1, 4), h16));
        qh0 = _mm_srli_epi16(qh0, 1);
        qh1 = _mm_srli_epi16(qh1, 1);
      }
      const int8_t* xq = x[i].qs + 32 * s;
      const __m128i p = _mm_add_epi16(_mm_maddubs_epi16(q0, Load128(xq)), _mm_maddubs_epi16(q1, Load128(xq + 16)));
      acc = _mm_add_epi32(acc, _mm_madd_epi16(p, _mm_set1_epi16(sm[s])));
    }
    const int isum = Hsum(acc);
    const float d = Fp16ToFp32(w[i].d) * x[i].d;
    sumf += d * static_cast<float>(isum);
    const float dmin = Fp16ToFp32(w[i].dmin) * x[i].d;
    sumf -= dmin * static_cast<float>(summins);
  }
  return sumf;
}

UAII_SSE42 float DotQ4_K(const void* w, const void* x, int64_t n) { return DotQ45K<false, BlockQ4_K>(w, x, n); }
UAII_SSE42 float DotQ5_K(const void* w, const void* x, int64_t n) { return DotQ45K<true, BlockQ5_K>(w, x, n); }

// Q3_K / Q6_K: the 16 int16 scales s16[0] (scales 0..7), s16[1] (8..15); Scale16(j)
// broadcasts scale j by a byte shuffle.
struct Scales16 {
  __m128i s16[2];
  UAII_SSE42 __m128i Scale(int j) const {
    const char b = static_cast<char>(2 * (j % 8));
    return _mm_shuffle_epi8(s16[j / 8], _mm_setr_epi8(b, b + 1, b, b + 1, b, b + 1, b, b + 1, b, b + 1, b,
                                                      b + 1, b, b + 1, b, b + 1));
  }
  // -2^log2_offset * sum_j sc_j bsums[j] as 4 int32 lanes (offset * |sc| <= 4096).
  UAII_SSE42 __m128i OffsetTerm(const BlockQ8_K& x, int log2_offset) const {
    const __m128i cnt = _mm_cvtsi32_si128(log2_offset), z = _mm_setzero_si128();
    return _mm_add_epi32(_mm_madd_epi16(Load128(x.bsums), _mm_sub_epi16(z, _mm_sll_epi16(s16[0], cnt))),
                         _mm_madd_epi16(Load128(x.bsums + 8), _mm_sub_epi16(z, _mm_sll_epi16(s16[1], cnt))));
  }
};

// Window (h, k, half): elements 128h + 32k + 16 half + j, low nibble k / 2 of
// ql[64h + 32 (k % 2) + 16 half + j], high bits (qh[32h + 16 half + j] >> 2k) & 3,
// scale scales[8h + 2k + half]; u = 0..63 (maddubs pairs <= 2 * 63 * 128), q = u - 32.
UAII_SSE42 float DotQ6_K(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const BlockQ6_K*>(wv);
  const auto* x = static_cast<const BlockQ8_K*>(xv);
  const __m128i m4 = _mm_set1_epi8(0x0F), m3 = _mm_set1_epi8(0x03);
  float sumf = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    Scales16 sc;
    sc.s16[0] = _mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(w[i].scales)));
    sc.s16[1] = _mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(w[i].scales + 8)));
    __m128i acc = sc.OffsetTerm(x[i], 5);
    for (int h = 0; h < 2; ++h) {
      for (int half = 0; half < 2; ++half) {
        const __m128i ql0 = Load128(w[i].ql + 64 * h + 16 * half), ql1 = Load128(w[i].ql + 64 * h + 32 + 16 * half);
        __m128i hb = Load128(w[i].qh + 32 * h + 16 * half);
        const __m128i lo[4] = {_mm_and_si128(ql0, m4), _mm_and_si128(ql1, m4),
                               _mm_and_si128(_mm_srli_epi16(ql0, 4), m4), _mm_and_si128(_mm_srli_epi16(ql1, 4), m4)};
        for (int k = 0; k < 4; ++k) {
          const __m128i u = _mm_or_si128(lo[k], _mm_slli_epi16(_mm_and_si128(hb, m3), 4));
          hb = _mm_srli_epi16(hb, 2);
          const __m128i p = _mm_maddubs_epi16(u, Load128(x[i].qs + 128 * h + 32 * k + 16 * half));
          acc = _mm_add_epi32(acc, _mm_madd_epi16(p, sc.Scale(8 * h + 2 * k + half)));
        }
      }
    }
    const float d = Fp16ToFp32(w[i].d) * x[i].d;
    sumf += d * static_cast<float>(Hsum(acc));
  }
  return sumf;
}

// Q2_K as the reference (no lanes: the integer sum is exact in any order). Window
// (k, j, half): elements 128k + 32j + 16 half + l, q = (qs[32k + 16 half + l] >> 2j) & 3
// (maddubs pairs <= 2 * 3 * 127), scale nibble of byte 8k + 2j + half.
UAII_SSE42 float DotQ2_K(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const BlockQ2_K*>(wv);
  const auto* x = static_cast<const BlockQ8_K*>(xv);
  const __m128i m2 = _mm_set1_epi8(0x03);
  float sumf = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int summs = 0;
    for (int j = 0; j < 16; ++j) summs += x[i].bsums[j] * (w[i].scales[j] >> 4);
    const float dall = x[i].d * Fp16ToFp32(w[i].d);
    const float dmin = x[i].d * Fp16ToFp32(w[i].dmin);
    __m128i acc = _mm_setzero_si128();
    for (int k = 0; k < 2; ++k) {
      for (int half = 0; half < 2; ++half) {
        const __m128i bits = Load128(w[i].qs + 32 * k + 16 * half);
        for (int j = 0; j < 4; ++j) {
          const __m128i q = _mm_and_si128(_mm_srl_epi16(bits, _mm_cvtsi32_si128(2 * j)), m2);
          const __m128i p = _mm_maddubs_epi16(q, Load128(x[i].qs + 128 * k + 32 * j + 16 * half));
          const __m128i sc = _mm_set1_epi16(static_cast<int16_t>(w[i].scales[8 * k + 2 * j + half] & 0xF));
          acc = _mm_add_epi32(acc, _mm_madd_epi16(p, sc));
        }
      }
    }
    const int isum = Hsum(acc);
    sumf += dall * static_cast<float>(isum) - dmin * static_cast<float>(summs);
  }
  return sumf;
}

// Q3_K: window (h, k, half): elements 128h + 32k + 16 half + j, low bits
// (qs[32h + 16 half + j] >> 2k) & 3, bit 4h + k of hmask[16 half + j] as bit 2: u = 0..7
// (maddubs pairs <= 2 * 7 * 128), q = u - 4; signed scale ScaleQ3K(8h + 2k + half).
UAII_SSE42 float DotQ3_K(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const BlockQ3_K*>(wv);
  const auto* x = static_cast<const BlockQ8_K*>(xv);
  const __m128i m3 = _mm_set1_epi8(0x03), m4 = _mm_set1_epi8(0x04), b32 = _mm_set1_epi8(32);
  float sumf = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    alignas(16) uint8_t biased[16];
    UnpackScalesQ3K(w[i].scales, biased);
    const __m128i s8 = _mm_sub_epi8(_mm_load_si128(reinterpret_cast<const __m128i*>(biased)), b32);
    Scales16 sc;
    sc.s16[0] = _mm_cvtepi8_epi16(s8);
    sc.s16[1] = _mm_cvtepi8_epi16(_mm_srli_si128(s8, 8));
    __m128i acc = sc.OffsetTerm(x[i], 2);
    for (int half = 0; half < 2; ++half) {
      // hm >> (4h + k) holds bit 4h + k of every byte in bit 0 (16-bit shifts; the
      // neighbour byte's bits are masked off).
      __m128i hm = Load128(w[i].hmask + 16 * half);
      for (int h = 0; h < 2; ++h) {
        __m128i bits = Load128(w[i].qs + 32 * h + 16 * half);
        for (int k = 0; k < 4; ++k) {
          const __m128i u = _mm_or_si128(_mm_and_si128(bits, m3), _mm_and_si128(_mm_slli_epi16(hm, 2), m4));
          bits = _mm_srli_epi16(bits, 2);
          hm = _mm_srli_epi16(hm, 1);
          const __m128i p = _mm_maddubs_epi16(u, Load128(x[i].qs + 128 * h + 32 * k + 16 * half));
          acc = _mm_add_epi32(acc, _mm_madd_epi16(p, sc.Scale(8 * h + 2 * k + half)));
        }
      }
    }
    const float d = Fp16ToFp32(w[i].d) * x[i].d;
    sumf += d * static_cast<float>(Hsum(acc));
  }
  return sumf;
}

// Four halves (low 16 bits of each int32 lane) -> f32, exactly Fp16ToFp32: normals
// rebias by integer add, subnormals as int(mantissa) * 2^-24 (exact, the result is a
// normal f32), inf/NaN keep their payload.
UAII_SSE42 inline __m128 Halves(__m128i h) {
  const __m128i exp = _mm_and_si128(h, _mm_set1_epi32(0x7C00));
  const __m128i mant = _mm_and_si128(h, _mm_set1_epi32(0x03FF));
  const __m128i sign = _mm_slli_epi32(_mm_and_si128(h, _mm_set1_epi32(0x8000)), 16);
  const __m128i normal = _mm_add_epi32(_mm_slli_epi32(_mm_and_si128(h, _mm_set1_epi32(0x7FFF)), 13),
                                       _mm_set1_epi32(112 << 23));
  const __m128i special = _mm_or_si128(_mm_slli_epi32(mant, 13), _mm_set1_epi32(0x7F800000));
  const __m128i sub = _mm_castps_si128(
      _mm_mul_ps(_mm_cvtepi32_ps(mant), _mm_castsi128_ps(_mm_set1_epi32((127 - 24) << 23))));
  __m128i r = _mm_blendv_epi8(normal, special, _mm_cmpeq_epi32(exp, _mm_set1_epi32(0x7C00)));
  r = _mm_blendv_epi8(r, sub, _mm_cmpeq_epi32(exp, _mm_setzero_si128()));
  return _mm_castsi128_ps(_mm_or_si128(r, sign));
}

// 8 halves -> lanes 0..3 and 4..7.
UAII_SSE42 inline void Load8Halves(const uint8_t* p, __m128* lo, __m128* hi) {
  const __m128i v = Load128(p);
  *lo = Halves(_mm_cvtepu16_epi32(v));
  *hi = Halves(_mm_unpackhi_epi16(v, _mm_setzero_si128()));
}

// The reference's 4 x 8 accumulators as 8 vectors: a[2k] holds acc[k][0..3], a[2k+1]
// holds acc[k][4..7]; the reduction is GGML_F32x8_REDUCE written per lane.
UAII_SSE42 float DotF16(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const uint8_t*>(wv);
  const auto* x = static_cast<const uint8_t*>(xv);
  __m128 a[8];
  for (auto& v : a) v = _mm_setzero_ps();
  const int64_t np = n & ~int64_t{31};
  for (int64_t i = 0; i < np; i += 32) {
    for (int k = 0; k < 4; ++k) {
      __m128 wl, wh, xl, xh;
      Load8Halves(w + 2 * (i + 8 * k), &wl, &wh);
      Load8Halves(x + 2 * (i + 8 * k), &xl, &xh);
      a[2 * k] = _mm_add_ps(a[2 * k], _mm_mul_ps(wl, xl));  // == fma: exact product
      a[2 * k + 1] = _mm_add_ps(a[2 * k + 1], _mm_mul_ps(wh, xh));
    }
  }
  // s_l = (acc0_l + acc2_l) + (acc1_l + acc3_l); t_k = s_k + s_{k+4}; (t0 + t1) + (t2 + t3).
  const __m128 s_lo = _mm_add_ps(_mm_add_ps(a[0], a[4]), _mm_add_ps(a[2], a[6]));
  const __m128 s_hi = _mm_add_ps(_mm_add_ps(a[1], a[5]), _mm_add_ps(a[3], a[7]));
  const __m128 t = _mm_add_ps(s_lo, s_hi);
  const __m128 u = _mm_hadd_ps(t, t);
  float r = _mm_cvtss_f32(_mm_hadd_ps(u, u));
  for (int64_t i = np; i < n; ++i) {
    uint16_t hw, hx;
    std::memcpy(&hw, w + 2 * i, 2);
    std::memcpy(&hx, x + 2 * i, 2);
    const float p = Fp16ToFp32(hw) * Fp16ToFp32(hx);
    r += p;
  }
  return r;
}

}  // namespace
#endif  // UAII_HAVE_SSE42_KERNELS

VecDotFn VecDotSse42(TensorType type) {
#ifdef UAII_HAVE_SSE42_KERNELS
  switch (type) {
    case TensorType::F16: return DotF16;
    case TensorType::Q4_0: return DotQ4_0;
    case TensorType::Q4_1: return DotQ4_1;
    case TensorType::Q5_0: return DotQ5_0;
    case TensorType::Q5_1: return DotQ5_1;
    case TensorType::Q8_0: return DotQ8_0;
    case TensorType::Q2_K: return DotQ2_K;
    case TensorType::Q3_K: return DotQ3_K;
    case TensorType::Q4_K: return DotQ4_K;
    case TensorType::Q5_K: return DotQ5_K;
    case TensorType::Q6_K: return DotQ6_K;
    default: return nullptr;
  }
#else
  (void)type;
  return nullptr;
#endif
}

}  // namespace uaii::kernels
