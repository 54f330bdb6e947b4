// AVX2 + FMA + F16C dot products, bit-identical to vec_dot_ref.cpp (see vec_dot.h).
// Integer parts use maddubs/madd (exact: no int16 saturation is reachable, bounds
// noted per kernel); the f32 parts perform the reference's operations in its order.
// Functions carry target attributes instead of compiling the file with -mavx2, so
// no AVX2 code can leak into inline functions shared with the rest of the program.
#include "kernels/vec_dot.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "formats/fp16.h"
#include "formats/quant_blocks.h"
#include "kernels/float_dot_x86.h"
#include "kernels/kquant_scales.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define UAII_HAVE_AVX2_KERNELS 1
#define UAII_AVX2 __attribute__((target("avx2,fma,f16c")))
#endif

namespace uaii::kernels {

bool CpuHasAvx2() {
#ifdef UAII_HAVE_AVX2_KERNELS
  // F16C from CPUID leaf 1 (ECX bit 29): clang 14's __builtin_cpu_supports does not know "f16c".
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && [] {
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
  }();
  return has;
#else
  return false;
#endif
}

#ifdef UAII_HAVE_AVX2_KERNELS
namespace {
using namespace uaii::quant;

// --- helpers ---

// Exact sum of the 32 products of signed bytes a * b (|a| <= 128, |b| <= 127:
// maddubs pairs stay below 2 * 128 * 127 < 32767).
UAII_AVX2 inline __m256i DotI8(__m256i a, __m256i b) {
  const __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(a, a), _mm256_sign_epi8(b, a));
  return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
}

// 32 nibbles of 16 bytes: low nibbles then high nibbles (elements 0..31 of Q4/Q5).
UAII_AVX2 inline __m256i Nibbles16(const uint8_t* p) {
  const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i m = _mm_set1_epi8(0x0F);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(q, 4), m), _mm_and_si128(q, m));
}

// Byte j = 0x10 when bit j of the little-endian u32 at p is set, else 0.
UAII_AVX2 inline __m256i Bit4FromBits32(const uint8_t* p) {
  uint32_t bits;
  std::memcpy(&bits, p, 4);
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int>(bits)),
      _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                       2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  const __m256i mask = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ULL));
  const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, mask), mask);
  return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
}

UAII_AVX2 inline __m256i LoadU256(const void* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// --- plain float formats ---

// Shared body (float_dot_x86.h: loads, reduction, tail).
template <typename T>
UAII_AVX2 inline float DotFloat(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const typename T::E*>(wv);
  const auto* x = static_cast<const typename T::E*>(xv);
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  const int64_t np = n & ~int64_t{31};
  for (int64_t i = 0; i < np; i += 32)
    for (int k = 0; k < 4; ++k) acc[k] = _mm256_fmadd_ps(T::Load8(w + i + 8 * k), T::Load8(x + i + 8 * k), acc[k]);
  return float_dot::Finish4<T>(acc, w, x, np, n);
}

UAII_AVX2 float DotF32(const void* w, const void* x, int64_t n) { return DotFloat<float_dot::F32>(w, x, n); }
UAII_AVX2 float DotF16(const void* w, const void* x, int64_t n) { return DotFloat<float_dot::F16>(w, x, n); }
UAII_AVX2 float DotBF16(const void* w, const void* x, int64_t n) { return DotFloat<float_dot::BF16>(w, x, n); }

// --- 32-element blocks ---
//
// Four blocks per step: their exact int32 sums come out of one hadd tree, the f32
// terms are computed lane-wise (each lane performs the reference's multiplications
// in the reference's order), and then added to sumf one block at a time, in block
// order, exactly as the reference does. Scales go through F16C, which converts
// every non-NaN half exactly like Fp16ToFp32.

// Lanes k = 0..3: sum of the 8 int32 lanes of v_k.
UAII_AVX2 inline __m128i Hsum4(__m256i v0, __m256i v1, __m256i v2, __m256i v3) {
  const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(v0, v1), _mm256_hadd_epi32(v2, v3));
  return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

// Four halves (missing ones zero) -> f32 lanes.
UAII_AVX2 inline __m128 Halves4(uint16_t a, uint16_t b, uint16_t c, uint16_t d) {
  return _mm_cvtph_ps(_mm_setr_epi16(static_cast<short>(a), static_cast<short>(b),
                                     static_cast<short>(c), static_cast<short>(d), 0, 0, 0, 0));
}

// Unsigned weights (<= 31) times signed activations: maddubs pairs <= 2 * 31 * 128.
UAII_AVX2 inline __m256i DotU8I8(__m256i u, __m256i s) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}

// Per-type pieces: Dot() gives the block's int32 partial sums; Terms() the f32 value
// each block adds to sumf, from the 4 int sums and the 4 blocks' scales.
struct KQ4_0 {
  using W = BlockQ4_0; using X = BlockQ8_0;
  UAII_AVX2 static __m256i Dot(const W& w, const X& x) {
    return DotI8(_mm256_sub_epi8(Nibbles16(w.qs), _mm256_set1_epi8(8)), LoadU256(x.qs));
  }
  // (sumi * d_w) * d_x
  UAII_AVX2 static __m128 Terms(__m128 sumi, __m128 dw, __m128 dx, const W*, const X*, int) {
    return _mm_mul_ps(_mm_mul_ps(sumi, dw), dx);
  }
};
struct KQ5_0 {
  using W = BlockQ5_0; using X = BlockQ8_0;
  UAII_AVX2 static __m256i Dot(const W& w, const X& x) {
    const __m256i q = _mm256_sub_epi8(_mm256_or_si256(Nibbles16(w.qs), Bit4FromBits32(w.qh)),
                                      _mm256_set1_epi8(16));
    return DotI8(q, LoadU256(x.qs));
  }
  // (d_w * d_x) * sumi
  UAII_AVX2 static __m128 Terms(__m128 sumi, __m128 dw, __m128 dx, const W*, const X*, int) {
    return _mm_mul_ps(_mm_mul_ps(dw, dx), sumi);
  }
};
// Weights may be -128 (|w| = 128); activations from the Q8_0 reference are within
// [-127, 127], so DotI8's bound holds.
struct KQ8_0 {
  using W = BlockQ8_0; using X = BlockQ8_0;
  UAII_AVX2 static __m256i Dot(const W& w, const X& x) { return DotI8(LoadU256(w.qs), LoadU256(x.qs)); }
  // sumi * (d_w * d_x)
  UAII_AVX2 static __m128 Terms(__m128 sumi, __m128 dw, __m128 dx, const W*, const X*, int) {
    return _mm_mul_ps(sumi, _mm_mul_ps(dw, dx));
  }
};
// (d_w * d_x) * sumi + m_w * s_x
template <typename Block>
UAII_AVX2 inline __m128 TermsQ_1(__m128 sumi, __m128 dw, __m128 dx, const Block* w,
                                 const BlockQ8_1* x, int r) {
  uint16_t m[4] = {}, s[4] = {};
  for (int k = 0; k < r; ++k) { m[k] = w[k].m; s[k] = x[k].s; }
  return _mm_add_ps(_mm_mul_ps(_mm_mul_ps(dw, dx), sumi),
                    _mm_mul_ps(Halves4(m[0], m[1], m[2], m[3]), Halves4(s[0], s[1], s[2], s[3])));
}
struct KQ4_1 {
  using W = BlockQ4_1; using X = BlockQ8_1;
  UAII_AVX2 static __m256i Dot(const W& w, const X& x) { return DotU8I8(Nibbles16(w.qs), LoadU256(x.qs)); }
  UAII_AVX2 static __m128 Terms(__m128 sumi, __m128 dw, __m128 dx, const W* w, const X* x, int r) {
    return TermsQ_1(sumi, dw, dx, w, x, r);
  }
};
struct KQ5_1 {
  using W = BlockQ5_1; using X = BlockQ8_1;
  UAII_AVX2 static __m256i Dot(const W& w, const X& x) {
    return DotU8I8(_mm256_or_si256(Nibbles16(w.qs), Bit4FromBits32(w.qh)), LoadU256(x.qs));
  }
  UAII_AVX2 static __m128 Terms(__m128 sumi, __m128 dw, __m128 dx, const W* w, const X* x, int r) {
    return TermsQ_1(sumi, dw, dx, w, x, r);
  }
};

template <typename K>
UAII_AVX2 inline float DotBlocks32(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const typename K::W*>(wv);
  const auto* x = static_cast<const typename K::X*>(xv);
  const int64_t nb = n / kQK;
  float sumf = 0;
  for (int64_t ib = 0; ib < nb; ib += 4) {
    const int r = static_cast<int>(std::min<int64_t>(4, nb - ib));  // blocks in this step
    __m256i v[4];
    uint16_t dw[4] = {}, dx[4] = {};
    for (int k = 0; k < 4; ++k) {
      if (k < r) {
        v[k] = K::Dot(w[ib + k], x[ib + k]);
        dw[k] = w[ib + k].d;
        dx[k] = x[ib + k].d;
      } else {
        v[k] = _mm256_setzero_si256();
      }
    }
    const __m128 sumi = _mm_cvtepi32_ps(Hsum4(v[0], v[1], v[2], v[3]));
    alignas(16) float t[4];
    _mm_store_ps(t, K::Terms(sumi, Halves4(dw[0], dw[1], dw[2], dw[3]),
                             Halves4(dx[0], dx[1], dx[2], dx[3]), w + ib, x + ib, r));
    for (int k = 0; k < r; ++k) sumf += t[k];
  }
  return sumf;
}

UAII_AVX2 float DotQ4_0(const void* w, const void* x, int64_t n) { return DotBlocks32<KQ4_0>(w, x, n); }
UAII_AVX2 float DotQ4_1(const void* w, const void* x, int64_t n) { return DotBlocks32<KQ4_1>(w, x, n); }
UAII_AVX2 float DotQ5_0(const void* w, const void* x, int64_t n) { return DotBlocks32<KQ5_0>(w, x, n); }
UAII_AVX2 float DotQ5_1(const void* w, const void* x, int64_t n) { return DotBlocks32<KQ5_1>(w, x, n); }
UAII_AVX2 float DotQ8_0(const void* w, const void* x, int64_t n) { return DotBlocks32<KQ8_0>(w, x, n); }

// --- K-quants ---
//
// The reference's one exact int32 per super-block, isum = sum_p scale(p) q_p x_p, in
// any order: maddubs gives int16 pair sums of one sub-block's products (unsigned
// weights, bounds per kernel), one madd with the sub-block's scale adds them into
// int32 lanes, one horizontal sum per block. Then the reference's f32 steps in its
// order: sumf += d * isum (Q4_K / Q5_K then sumf -= dmin * summins), mul then add.
// Q3_K / Q6_K are stored with an offset (q = u - 4, u - 32); their kernels take u
// and subtract offset * sum_j sc_j bsums[j] (bsums[j]: the activation sum of the
// 16-element sub-block j, as QuantizeRowQ8_K writes it).

// Sum of the 8 int32 lanes of v and of the 4 of m (exact): {sum(v), sum(m)}.
UAII_AVX2 inline void Hsum2(__m256i v, __m128i m, int* sv, int* sm) {
  const __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  const __m128i h = _mm_hadd_epi32(s, m);        // v01 v23 m01 m23
  const __m128i t = _mm_hadd_epi32(h, h);        // sum(v) sum(m) ..
  *sv = _mm_cvtsi128_si32(t);
  *sm = _mm_extract_epi32(t, 1);
}

// Broadcast of int16 lane s (0..7) of both 128-bit halves of v (one byte shuffle).
UAII_AVX2 inline __m256i Lane16(__m256i v, int s) {
  const char b = static_cast<char>(2 * s), b1 = static_cast<char>(2 * s + 1);
  return _mm256_shuffle_epi8(v, _mm256_setr_epi8(b, b1, b, b1, b, b1, b, b1, b, b1, b, b1, b, b1, b, b1,
                                                 b, b1, b, b1, b, b1, b, b1, b, b1, b, b1, b, b1, b, b1));
}

// Q4_K / Q5_K: sub-block s = 2k + j (elements 32s + l) is nibble j of qs[32k + l], Q5_K
// adds bit s of qh[l] as bit 4; q <= 31, so maddubs pairs stay <= 2 * 31 * 128 and madd
// with the 6-bit scale is exact. summins: the 8 sub-block sums bsums[2s] + bsums[2s+1]
// (|.| <= 32 * 128, one hadd) times the mins, one madd.
template <bool kFive>
UAII_AVX2 inline float DotQ45K(const void* wv, const void* xv, int64_t n) {
  using Block = std::conditional_t<kFive, BlockQ5_K, BlockQ4_K>;
  const auto* w = static_cast<const Block*>(wv);
  const auto* x = static_cast<const BlockQ8_K*>(xv);
  float sumf = 0;
  const __m256i m4 = _mm256_set1_epi8(0x0F), h16 = _mm256_set1_epi8(0x10);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    alignas(16) uint8_t sm[16];
    UnpackScalesMinsK4(w[i].scales, sm);
    const __m128i both = _mm_load_si128(reinterpret_cast<const __m128i*>(sm));
    const __m128i mins = _mm_cvtepu8_epi16(_mm_srli_si128(both, 8));
    const __m256i scales = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(both));  // int16 lane s: scale s
    const __m128i bs = _mm_hadd_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x[i].bsums)),
                                      _mm_loadu_si128(reinterpret_cast<const __m128i*>(x[i].bsums + 8)));
    __m256i qh = _mm256_setzero_si256();
    if constexpr (kFive) qh = LoadU256(w[i].qh);
    __m256i acc = _mm256_setzero_si256();
    for (int k = 0; k < 4; ++k) {
      const __m256i bytes = LoadU256(w[i].qs + 32 * k);
      __m256i q0 = _mm256_and_si256(bytes, m4);
      __m256i q1 = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), m4);
      if constexpr (kFive) {
        // qh >> 2k holds bits 2k, 2k + 1 of every byte in bits 0, 1 (16-bit shifts:
        // what crosses into the neighbour byte is masked off by 0x10).
        q0 = _mm256_or_si256(q0, _mm256_and_si256(_mm256_slli_epi16(qh, 4), h16));
        q1 = _mm256_or_si256(q1, _mm256_and_si256(_mm256_slli_epi16(qh, 3), h16));
        qh = _mm256_srli_epi16(qh, 2);
      }
      const int8_t* xq = x[i].qs + 64 * k;
      acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(q0, LoadU256(xq)),
                                                    Lane16(scales, 2 * k)));
      acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(q1, LoadU256(xq + 32)),
                                                    Lane16(scales, 2 * k + 1)));
    }
    int isum, summins;
    Hsum2(acc, _mm_madd_epi16(bs, mins), &isum, &summins);
    const float d = Fp16ToFp32(w[i].d) * x[i].d;
    sumf += d * static_cast<float>(isum);
    const float dmin = Fp16ToFp32(w[i].dmin) * x[i].d;
    sumf -= dmin * static_cast<float>(summins);
  }
  return sumf;
}

UAII_AVX2 float DotQ4_K(const void* w, const void* x, int64_t n) { return DotQ45K<false>(w, x, n); }
UAII_AVX2 float DotQ5_K(const void* w, const void* x, int64_t n) { return DotQ45K<true>(w, x, n); }

// Q3_K / Q6_K share the 16-element sub-blocks and the window layout: window k of half h
// (elements 128h + 32k + l) takes scale 8h + 2k for l < 16 and 8h + 2k + 1 for l >= 16.
// ScalesHalf: the int16 scales 8h..8h+7 in both 128-bit halves (from the 16 scales s16);
// WindowScales picks lane 2k in the low half and 2k + 1 in the high half.
UAII_AVX2 inline __m256i ScalesHalf(__m256i s16, int h) {
  return h ? _mm256_permute4x64_epi64(s16, 0xEE) : _mm256_permute4x64_epi64(s16, 0x44);
}
UAII_AVX2 inline __m256i WindowScales(__m256i sh, int k) {
  const char b = static_cast<char>(4 * k);
  return _mm256_shuffle_epi8(
      sh, _mm256_setr_epi8(b, b + 1, b, b + 1, b, b + 1, b, b + 1, b, b + 1, b, b + 1, b, b + 1, b, b + 1,
                           b + 2, b + 3, b + 2, b + 3, b + 2, b + 3, b + 2, b + 3, b + 2, b + 3, b + 2,
                           b + 3, b + 2, b + 3, b + 2, b + 3));
}
// -offset * sum_j sc_j bsums[j] as 8 int32 lanes (offset * |sc| <= 4096 fits int16).
UAII_AVX2 inline __m256i OffsetTerm(const BlockQ8_K& x, __m256i s16, int log2_offset) {
  const __m256i neg = _mm256_sub_epi16(_mm256_setzero_si256(), _mm256_sll_epi16(s16, _mm_cvtsi32_si128(log2_offset)));
  return _mm256_madd_epi16(LoadU256(x.bsums), neg);
}

// Q6_K: window k of half h: low nibble k / 2 of ql[64h + 32 (k % 2) + l], high bits
// (qh[32h + l] >> 2k) & 3; u = 0..63 (maddubs pairs <= 2 * 63 * 128), q = u - 32.
UAII_AVX2 float DotQ6_K(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const BlockQ6_K*>(wv);
  const auto* x = static_cast<const BlockQ8_K*>(xv);
  const __m256i m4 = _mm256_set1_epi8(0x0F), m30 = _mm256_set1_epi8(0x30);
  float sumf = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const __m256i s16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w[i].scales)));
    __m256i acc = OffsetTerm(x[i], s16, 5);
    for (int h = 0; h < 2; ++h) {
      const __m256i sh = ScalesHalf(s16, h);
      const __m256i ql0 = LoadU256(w[i].ql + 64 * h), ql1 = LoadU256(w[i].ql + 64 * h + 32);
      const __m256i qh = LoadU256(w[i].qh + 32 * h);
      // (qh >> 2k) & 3 in bits 4..5 of each byte (16-bit shifts; crossings masked).
      const __m256i hi[4] = {_mm256_and_si256(_mm256_slli_epi16(qh, 4), m30),
                             _mm256_and_si256(_mm256_slli_epi16(qh, 2), m30), _mm256_and_si256(qh, m30),
                             _mm256_and_si256(_mm256_srli_epi16(qh, 2), m30)};
      const __m256i lo[4] = {_mm256_and_si256(ql0, m4), _mm256_and_si256(ql1, m4),
                             _mm256_and_si256(_mm256_srli_epi16(ql0, 4), m4),
                             _mm256_and_si256(_mm256_srli_epi16(ql1, 4), m4)};
      for (int k = 0; k < 4; ++k) {
        const __m256i u = _mm256_or_si256(lo[k], hi[k]);
        const __m256i p = _mm256_maddubs_epi16(u, LoadU256(x[i].qs + 128 * h + 32 * k));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p, WindowScales(sh, k)));
      }
    }
    int isum, unused;
    Hsum2(acc, _mm_setzero_si128(), &isum, &unused);
    const float d = Fp16ToFp32(w[i].d) * x[i].d;
    sumf += d * static_cast<float>(isum);
  }
  return sumf;
}

// Q2_K: the integer sum of the reference, exact in any order. Window (k, j) holds
// elements 128k + 32j + l: q = (qs[32k + l] >> 2j) & 3 (<= 3, maddubs pairs <= 768),
// scale nibbles of bytes 8k + 2j (l < 16, the low 128 bits) and 8k + 2j + 1.
UAII_AVX2 float DotQ2_K(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const BlockQ2_K*>(wv);
  const auto* x = static_cast<const BlockQ8_K*>(xv);
  const __m256i m2 = _mm256_set1_epi8(0x03);
  float sumf = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int summs = 0;
    for (int j = 0; j < 16; ++j) summs += x[i].bsums[j] * (w[i].scales[j] >> 4);
    const float dall = x[i].d * Fp16ToFp32(w[i].d);
    const float dmin = x[i].d * Fp16ToFp32(w[i].dmin);
    __m256i acc = _mm256_setzero_si256();
    for (int k = 0; k < 2; ++k) {
      const __m256i bits = LoadU256(w[i].qs + 32 * k);
      for (int j = 0; j < 4; ++j) {
        const __m256i q = _mm256_and_si256(_mm256_srl_epi16(bits, _mm_cvtsi32_si128(2 * j)), m2);
        const __m256i p = _mm256_maddubs_epi16(q, LoadU256(x[i].qs + 128 * k + 32 * j));
        const __m256i sc = _mm256_set_m128i(_mm_set1_epi16(static_cast<int16_t>(w[i].scales[8 * k + 2 * j + 1] & 0xF)),
                                            _mm_set1_epi16(static_cast<int16_t>(w[i].scales[8 * k + 2 * j] & 0xF)));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p, sc));
      }
    }
    alignas(32) int32_t lanes[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc);
    int isum = 0;
    for (int l = 0; l < 8; ++l) isum += lanes[l];
    sumf += dall * static_cast<float>(isum) - dmin * static_cast<float>(summs);
  }
  return sumf;
}

// Q3_K: window k of half h: low bits (qs[32h + l] >> 2k) & 3, bit 4h + k of hmask[l]
// as bit 2: u = 0..7 (maddubs pairs <= 2 * 7 * 128), q = u - 4; signed scales
// ScaleQ3K (unpacked + 32, then - 32 in bytes).
UAII_AVX2 float DotQ3_K(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const BlockQ3_K*>(wv);
  const auto* x = static_cast<const BlockQ8_K*>(xv);
  const __m256i m3 = _mm256_set1_epi8(0x03), m4 = _mm256_set1_epi8(0x04);
  float sumf = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    alignas(16) uint8_t sc[16];
    UnpackScalesQ3K(w[i].scales, sc);
    const __m256i s16 = _mm256_cvtepi8_epi16(
        _mm_sub_epi8(_mm_load_si128(reinterpret_cast<const __m128i*>(sc)), _mm_set1_epi8(32)));
    __m256i acc = OffsetTerm(x[i], s16, 2);
    // hm >> (4h + k) holds bit 4h + k of every byte in bit 0 (16-bit shifts move the
    // low byte's own bits down; the high byte's enter from the top and are masked off).
    __m256i hm = LoadU256(w[i].hmask);
    for (int h = 0; h < 2; ++h) {
      const __m256i sh = ScalesHalf(s16, h);
      __m256i bits = LoadU256(w[i].qs + 32 * h);
      for (int k = 0; k < 4; ++k) {
        const __m256i u = _mm256_or_si256(_mm256_and_si256(bits, m3),
                                          _mm256_and_si256(_mm256_slli_epi16(hm, 2), m4));
        bits = _mm256_srli_epi16(bits, 2);
        hm = _mm256_srli_epi16(hm, 1);
        const __m256i p = _mm256_maddubs_epi16(u, LoadU256(x[i].qs + 128 * h + 32 * k));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p, WindowScales(sh, k)));
      }
    }
    int isum, unused;
    Hsum2(acc, _mm_setzero_si128(), &isum, &unused);
    const float d = Fp16ToFp32(w[i].d) * x[i].d;
    sumf += d * static_cast<float>(isum);
  }
  return sumf;
}

}  // namespace
#endif  // UAII_HAVE_AVX2_KERNELS

VecDotFn VecDotAvx2(TensorType type) {
#ifdef UAII_HAVE_AVX2_KERNELS
  switch (type) {
    case TensorType::F32: return DotF32;
    case TensorType::F16: return DotF16;
    case TensorType::BF16: return DotBF16;
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
