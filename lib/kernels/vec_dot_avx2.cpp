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

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define UAII_HAVE_AVX2_KERNELS 1
#define UAII_AVX2 __attribute__((target("avx2,fma,f16c")))
#endif

namespace uaii::kernels {

bool CpuHasAvx2() {
#ifdef UAII_HAVE_AVX2_KERNELS
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                          __builtin_cpu_supports("f16c");
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

UAII_AVX2 inline __m256 LoadF32x8(const float* p) { return _mm256_loadu_ps(p); }
UAII_AVX2 inline __m256 LoadF16x8(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
UAII_AVX2 inline __m256 LoadBF16x8(const uint16_t* p) {
  const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}

// Shared body; `Load` widens 8 elements, `Scalar` one element.
template <typename E, __m256 (*Load)(const E*), float (*Scalar)(const E*)>
UAII_AVX2 inline float DotFloat(const E* w, const E* x, int64_t n) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  const int64_t np = n & ~int64_t{31};
  for (int64_t i = 0; i < np; i += 32) {
    acc0 = _mm256_fmadd_ps(Load(w + i), Load(x + i), acc0);
    acc1 = _mm256_fmadd_ps(Load(w + i + 8), Load(x + i + 8), acc1);
    acc2 = _mm256_fmadd_ps(Load(w + i + 16), Load(x + i + 16), acc2);
    acc3 = _mm256_fmadd_ps(Load(w + i + 24), Load(x + i + 24), acc3);
  }
  const __m256 s = _mm256_add_ps(_mm256_add_ps(acc0, acc2), _mm256_add_ps(acc1, acc3));
  const __m128 t = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
  const __m128 u = _mm_hadd_ps(t, t);
  float r = _mm_cvtss_f32(_mm_hadd_ps(u, u));
  for (int64_t i = np; i < n; ++i) {
    const float p = Scalar(w + i) * Scalar(x + i);
    r += p;
  }
  return r;
}

inline float ScalarF32(const float* p) { return *p; }
inline float ScalarF16(const uint16_t* p) { uint16_t v; std::memcpy(&v, p, 2); return Fp16ToFp32(v); }
inline float ScalarBF16(const uint16_t* p) { uint16_t v; std::memcpy(&v, p, 2); return Bf16ToFp32(v); }

UAII_AVX2 float DotF32(const void* w, const void* x, int64_t n) {
  return DotFloat<float, LoadF32x8, ScalarF32>(static_cast<const float*>(w),
                                               static_cast<const float*>(x), n);
}
UAII_AVX2 float DotF16(const void* w, const void* x, int64_t n) {
  return DotFloat<uint16_t, LoadF16x8, ScalarF16>(static_cast<const uint16_t*>(w),
                                                  static_cast<const uint16_t*>(x), n);
}
UAII_AVX2 float DotBF16(const void* w, const void* x, int64_t n) {
  return DotFloat<uint16_t, LoadBF16x8, ScalarBF16>(static_cast<const uint16_t*>(w),
                                                    static_cast<const uint16_t*>(x), n);
}

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
// The reference's lane l sums positions p % 8 == l. For a window of 32 elements
// e0..e31, LanePerm reorders bytes to (e0 e8 e16 e24, e1 e9 e17 e25, ..., e3 e11 e19
// e27 | e4 e12 e20 e28, ..., e7 e15 e23 e31): vpermd moves dwords (0 2 4 6 | 1 3 5 7),
// then a 4x4 byte transpose inside each 128-bit half. maddubs then pairs (e_l, e_l+8)
// and (e_l+16, e_l+24), and madd with per-pair scales sums each lane's four products
// into int32 lane l, in natural lane order.
UAII_AVX2 inline __m256i LanePerm(__m256i v) {
  v = _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
  return _mm256_shuffle_epi8(v, _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,
                                                 0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
}

// int32 lanes: scale_lo * (q_l x_l + q_l+8 x_l+8) + scale_hi * (q_l+16 x_l+16 + q_l+24 x_l+24)
// for unsigned q (<= 31 here: pairs <= 2 * 31 * 128).
UAII_AVX2 inline __m256i LaneDotU(__m256i q, __m256i x, __m256i scales16) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(LanePerm(q), LanePerm(x)), scales16);
}

// Same for signed q in [-32, 31] (pairs <= 2 * 32 * 128).
UAII_AVX2 inline __m256i LaneDotS(__m256i q, __m256i x, __m256i scales16) {
  const __m256i qp = LanePerm(q), xp = LanePerm(x);
  const __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(qp, qp), _mm256_sign_epi8(xp, qp));
  return _mm256_madd_epi16(p, scales16);
}

template <bool kFive>
UAII_AVX2 inline float DotQ45K(const void* wv, const void* xv, int64_t n) {
  using Block = std::conditional_t<kFive, BlockQ5_K, BlockQ4_K>;
  const auto* w = static_cast<const Block*>(wv);
  const auto* x = static_cast<const BlockQ8_K*>(xv);
  __m256 sums = _mm256_setzero_ps();
  float sumf = 0;
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    uint8_t sc[8], mn[8];
    int sumi = 0;
    for (int s = 0; s < 8; ++s) {
      ScaleMinK4(s, w[i].scales, &sc[s], &mn[s]);
      sumi += (x[i].bsums[2 * s] + x[i].bsums[2 * s + 1]) * mn[s];
    }
    __m256i qh;
    if constexpr (kFive) qh = LoadU256(w[i].qh);
    __m256i aux = _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {
      const __m256i bytes = LoadU256(w[i].qs + 32 * c);
      __m256i q0 = _mm256_and_si256(bytes, m4);
      __m256i q1 = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), m4);
      if constexpr (kFive) {
        const __m256i b0 = _mm256_set1_epi8(static_cast<char>(1 << (2 * c)));
        const __m256i b1 = _mm256_set1_epi8(static_cast<char>(1 << (2 * c + 1)));
        const __m256i h16 = _mm256_set1_epi8(0x10);
        q0 = _mm256_or_si256(q0, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, b0), b0), h16));
        q1 = _mm256_or_si256(q1, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, b1), b1), h16));
      }
      aux = _mm256_add_epi32(aux, LaneDotU(q0, LoadU256(x[i].qs + 64 * c),
                                           _mm256_set1_epi16(sc[2 * c])));
      aux = _mm256_add_epi32(aux, LaneDotU(q1, LoadU256(x[i].qs + 64 * c + 32),
                                           _mm256_set1_epi16(sc[2 * c + 1])));
    }
    const float d = Fp16ToFp32(w[i].d) * x[i].d;
    sums = _mm256_add_ps(sums, _mm256_mul_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(aux)));
    const float dmin = Fp16ToFp32(w[i].dmin) * x[i].d;
    sumf -= dmin * static_cast<float>(sumi);
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sums);
  for (int l = 0; l < 8; ++l) sumf += lanes[l];
  return sumf;
}

UAII_AVX2 float DotQ4_K(const void* w, const void* x, int64_t n) { return DotQ45K<false>(w, x, n); }
UAII_AVX2 float DotQ5_K(const void* w, const void* x, int64_t n) { return DotQ45K<true>(w, x, n); }

// Window k of half h (elements 128h + 32k + l): low nibble k/2 of ql[64h + 32(k%2) + l],
// high bits (qh[32h + l] >> 2k) & 3, minus 32; scales 8h + 2k (l < 16) and 8h + 2k + 1.
UAII_AVX2 float DotQ6_K(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const BlockQ6_K*>(wv);
  const auto* x = static_cast<const BlockQ8_K*>(xv);
  __m256 sums = _mm256_setzero_ps();
  const __m256i m4 = _mm256_set1_epi8(0x0F), m2 = _mm256_set1_epi8(0x03);
  const __m256i off = _mm256_set1_epi8(32);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    __m256i aux = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      const __m256i ql0 = LoadU256(w[i].ql + 64 * h);
      const __m256i ql1 = LoadU256(w[i].ql + 64 * h + 32);
      const __m256i qh = LoadU256(w[i].qh + 32 * h);
      const __m256i lo[4] = {_mm256_and_si256(ql0, m4), _mm256_and_si256(ql1, m4),
                             _mm256_and_si256(_mm256_srli_epi16(ql0, 4), m4),
                             _mm256_and_si256(_mm256_srli_epi16(ql1, 4), m4)};
      for (int k = 0; k < 4; ++k) {
        const __m256i hi = _mm256_slli_epi16(
            _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * k)), m2), 4);
        const __m256i q = _mm256_sub_epi8(_mm256_or_si256(lo[k], hi), off);
        const int sa = w[i].scales[8 * h + 2 * k], sb = w[i].scales[8 * h + 2 * k + 1];
        const __m256i scales16 = _mm256_set1_epi32(static_cast<int>(
            (static_cast<uint32_t>(sb) << 16) | (static_cast<uint32_t>(sa) & 0xFFFFu)));
        aux = _mm256_add_epi32(aux, LaneDotS(q, LoadU256(x[i].qs + 128 * h + 32 * k), scales16));
      }
    }
    const float d = Fp16ToFp32(w[i].d) * x[i].d;
    sums = _mm256_add_ps(sums, _mm256_mul_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(aux)));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sums);
  float sumf = 0;
  for (int l = 0; l < 8; ++l) sumf += lanes[l];
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

// Q3_K: window k of half h (elements 128h + 32k + l): q = ((qs[32h + l] >> 2k) & 3) - 4
// unless bit 4h + k of hmask[l] is set; signed scales ScaleQ3K(8h + 2k) (l < 16) and
// ScaleQ3K(8h + 2k + 1); lane sums and f32 steps as Q6_K.
UAII_AVX2 float DotQ3_K(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const BlockQ3_K*>(wv);
  const auto* x = static_cast<const BlockQ8_K*>(xv);
  __m256 sums = _mm256_setzero_ps();
  const __m256i m2 = _mm256_set1_epi8(0x03), four = _mm256_set1_epi8(4);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const __m256i hm = LoadU256(w[i].hmask);
    __m256i aux = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      const __m256i bits = LoadU256(w[i].qs + 32 * h);
      for (int k = 0; k < 4; ++k) {
        const __m256i lo = _mm256_and_si256(_mm256_srl_epi16(bits, _mm_cvtsi32_si128(2 * k)), m2);
        const __m256i bit = _mm256_set1_epi8(static_cast<char>(1 << (4 * h + k)));
        const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(hm, bit), bit);
        const __m256i q = _mm256_sub_epi8(lo, _mm256_andnot_si256(set, four));
        const int sa = ScaleQ3K(8 * h + 2 * k, w[i].scales), sb = ScaleQ3K(8 * h + 2 * k + 1, w[i].scales);
        const __m256i scales16 = _mm256_set1_epi32(static_cast<int>(
            (static_cast<uint32_t>(sb) << 16) | (static_cast<uint32_t>(sa) & 0xFFFFu)));
        aux = _mm256_add_epi32(aux, LaneDotS(q, LoadU256(x[i].qs + 128 * h + 32 * k), scales16));
      }
    }
    const float d = Fp16ToFp32(w[i].d) * x[i].d;
    sums = _mm256_add_ps(sums, _mm256_mul_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(aux)));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sums);
  float sumf = 0;
  for (int l = 0; l < 8; ++l) sumf += lanes[l];
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
