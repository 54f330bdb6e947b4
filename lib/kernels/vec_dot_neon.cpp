// aarch64 NEON (Advanced SIMD, ARMv8.0: no dotprod extension needed) row kernels,
// bit-identical to vec_dot_ref.cpp (see vec_dot.h for the order). Compiled only on
// aarch64; elsewhere VecDotNeon() returns nullptr.
//
//  * F32 / F16 / BF16: the reference's 4 x 8 accumulators as 8 float32x4 registers
//    (a[2k] = acc[k][0..3], a[2k+1] = acc[k][4..7]); vfmaq_f32 is fma(w, x, acc) per
//    lane. F16 widens with fcvtl (exact for every non-NaN half), BF16 by a 16-bit
//    shift. The file is built with -ffp-contract=off, so mul/add intrinsics stay
//    separate roundings.
//  * 32-block types: exact int dot with vmull_s8 + vmlal_s8 (two products per int16
//    lane: |w| <= 128, |x| <= 127, so <= 32512) and vpadalq_s16, then the reference's
//    scalar f32 term per block.
//  * Q2_K: the reference's plain integer sum (exact in any order), then its f32 step.
//  * Q3_K / Q4_K / Q5_K / Q6_K: the reference's one exact int32 per super-block
//    (any order): products of one 16- or 32-element sub-block (one scale) are summed
//    in int16 by vmull_s8 / vmlal_s8 (Q4_K/Q5_K: 4 products <= 4 * 31 * 128; Q3_K /
//    Q6_K: 2 <= 2 * 32 * 128), then widened and scaled into int32x4 accumulators,
//    reduced once per block; then the reference's scalar f32 steps
//    (sumf += d * isum; Q4_K/Q5_K: sumf -= dmin * summins).
#include <cstring>

#include "formats/fp16.h"
#include "formats/quant_blocks.h"
#include "kernels/kquant_scales.h"
#include "kernels/dispatch.h"

#if defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#define UAII_HAVE_NEON_KERNELS 1
#endif

namespace uaii::kernels {

#ifdef UAII_HAVE_NEON_KERNELS
namespace {
using namespace uaii::quant;

// --- plain float formats ---

inline float32x4_t LoadF32x4(const uint8_t* p) { return vreinterpretq_f32_u8(vld1q_u8(p)); }
inline float32x4_t LoadF16x4(const uint8_t* p) {
  return vcvt_f32_f16(vreinterpret_f16_u8(vld1_u8(p)));
}
inline float32x4_t LoadBF16x4(const uint8_t* p) {
  return vreinterpretq_f32_u32(vshll_n_u16(vreinterpret_u16_u8(vld1_u8(p)), 16));
}

inline float ScalarF32(const uint8_t* p) { float v; std::memcpy(&v, p, 4); return v; }
inline float ScalarF16(const uint8_t* p) { uint16_t v; std::memcpy(&v, p, 2); return Fp16ToFp32(v); }
inline float ScalarBF16(const uint8_t* p) { uint16_t v; std::memcpy(&v, p, 2); return Bf16ToFp32(v); }

template <int kSize, float32x4_t (*Load)(const uint8_t*), float (*Scalar)(const uint8_t*)>
inline float DotFloat(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const uint8_t*>(wv);
  const auto* x = static_cast<const uint8_t*>(xv);
  float32x4_t a[8];
  for (auto& v : a) v = vdupq_n_f32(0.0f);
  const int64_t np = n & ~int64_t{31};
  for (int64_t i = 0; i < np; i += 32) {
    for (int j = 0; j < 8; ++j) {
      const int64_t e = i + 4 * j;  // a[j] holds elements 32s + 4j .. 32s + 4j + 3
      a[j] = vfmaq_f32(a[j], Load(w + kSize * e), Load(x + kSize * e));
    }
  }
  // s_l = (acc0_l + acc2_l) + (acc1_l + acc3_l); t_k = s_k + s_{k+4}; (t0 + t1) + (t2 + t3).
  const float32x4_t s_lo = vaddq_f32(vaddq_f32(a[0], a[4]), vaddq_f32(a[2], a[6]));
  const float32x4_t s_hi = vaddq_f32(vaddq_f32(a[1], a[5]), vaddq_f32(a[3], a[7]));
  const float32x4_t t = vaddq_f32(s_lo, s_hi);
  const float32x4_t u = vpaddq_f32(t, t);  // t0 + t1, t2 + t3, ...
  float r = vgetq_lane_f32(u, 0) + vgetq_lane_f32(u, 1);
  for (int64_t i = np; i < n; ++i) {
    const float p = Scalar(w + kSize * i) * Scalar(x + kSize * i);
    r += p;
  }
  return r;
}

float DotF32(const void* w, const void* x, int64_t n) { return DotFloat<4, LoadF32x4, ScalarF32>(w, x, n); }
float DotF16(const void* w, const void* x, int64_t n) { return DotFloat<2, LoadF16x4, ScalarF16>(w, x, n); }
float DotBF16(const void* w, const void* x, int64_t n) { return DotFloat<2, LoadBF16x4, ScalarBF16>(w, x, n); }

// --- 32-element blocks ---

// Exact sum of the 32 products lo*x[0..15] + hi*x[16..31].
inline int DotI8x32(int8x16_t lo, int8x16_t hi, const int8_t* x) {
  const int8x16_t x0 = vld1q_s8(x), x1 = vld1q_s8(x + 16);
  int16x8_t p0 = vmull_s8(vget_low_s8(lo), vget_low_s8(x0));
  p0 = vmlal_s8(p0, vget_high_s8(lo), vget_high_s8(x0));
  int16x8_t p1 = vmull_s8(vget_low_s8(hi), vget_low_s8(x1));
  p1 = vmlal_s8(p1, vget_high_s8(hi), vget_high_s8(x1));
  return vaddvq_s32(vpadalq_s16(vpaddlq_s16(p0), p1));
}

// Elements 0..15 (low nibbles) and 16..31 (high nibbles) of a Q4/Q5 block.
inline void Nibbles(const uint8_t* qs, uint8x16_t* lo, uint8x16_t* hi) {
  const uint8x16_t q = vld1q_u8(qs);
  *lo = vandq_u8(q, vdupq_n_u8(0x0F));
  *hi = vshrq_n_u8(q, 4);
}

// Byte j = 0x10 when bit j of the 16-bit little-endian value at p is set.
inline uint8x16_t Bit4x16(const uint8_t* p) {
  static const uint8_t kBits[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
  const uint8x16_t spread = vcombine_u8(vdup_n_u8(p[0]), vdup_n_u8(p[1]));
  return vandq_u8(vtstq_u8(spread, vld1q_u8(kBits)), vdupq_n_u8(0x10));
}

float DotQ4_0(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const BlockQ4_0*>(wv);
  const auto* x = static_cast<const BlockQ8_0*>(xv);
  const int8x16_t eight = vdupq_n_s8(8);
  float sumf = 0;
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    uint8x16_t lo, hi;
    Nibbles(w[ib].qs, &lo, &hi);
    const int sumi = DotI8x32(vsubq_s8(vreinterpretq_s8_u8(lo), eight),
                              vsubq_s8(vreinterpretq_s8_u8(hi), eight), x[ib].qs);
    sumf += static_cast<float>(sumi) * Fp16ToFp32(w[ib].d) * Fp16ToFp32(x[ib].d);
  }
  return sumf;
}

float DotQ5_0(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const BlockQ5_0*>(wv);
  const auto* x = static_cast<const BlockQ8_0*>(xv);
  const int8x16_t sixteen = vdupq_n_s8(16);
  float sumf = 0;
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    uint8x16_t lo, hi;
    Nibbles(w[ib].qs, &lo, &hi);
    lo = vorrq_u8(lo, Bit4x16(w[ib].qh));
    hi = vorrq_u8(hi, Bit4x16(w[ib].qh + 2));
    const int sumi = DotI8x32(vsubq_s8(vreinterpretq_s8_u8(lo), sixteen),
                              vsubq_s8(vreinterpretq_s8_u8(hi), sixteen), x[ib].qs);
    sumf += (Fp16ToFp32(w[ib].d) * Fp16ToFp32(x[ib].d)) * static_cast<float>(sumi);
  }
  return sumf;
}

float DotQ8_0(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const BlockQ8_0*>(wv);
  const auto* x = static_cast<const BlockQ8_0*>(xv);
  float sumf = 0;
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    const int sumi = DotI8x32(vld1q_s8(w[ib].qs), vld1q_s8(w[ib].qs + 16), x[ib].qs);
    sumf += static_cast<float>(sumi) * (Fp16ToFp32(w[ib].d) * Fp16ToFp32(x[ib].d));
  }
  return sumf;
}

template <bool kFive, typename Block>
inline float DotQ_1(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const Block*>(wv);
  const auto* x = static_cast<const BlockQ8_1*>(xv);
  float sumf = 0;
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    uint8x16_t lo, hi;
    Nibbles(w[ib].qs, &lo, &hi);
    if constexpr (kFive) {
      const uint8_t* qh = reinterpret_cast<const BlockQ5_1&>(w[ib]).qh;
      lo = vorrq_u8(lo, Bit4x16(qh));
      hi = vorrq_u8(hi, Bit4x16(qh + 2));
    }
    const int sumi = DotI8x32(vreinterpretq_s8_u8(lo), vreinterpretq_s8_u8(hi), x[ib].qs);
    sumf += (Fp16ToFp32(w[ib].d) * Fp16ToFp32(x[ib].d)) * static_cast<float>(sumi) +
            Fp16ToFp32(w[ib].m) * Fp16ToFp32(x[ib].s);
  }
  return sumf;
}

float DotQ4_1(const void* w, const void* x, int64_t n) { return DotQ_1<false, BlockQ4_1>(w, x, n); }
float DotQ5_1(const void* w, const void* x, int64_t n) { return DotQ_1<true, BlockQ5_1>(w, x, n); }

// --- K-quants ---

// int16 lane l += q[l] x[l] + q[l+8] x[l+8] for 16 consecutive elements.
inline int16x8_t Mul16(int16x8_t acc, int8x16_t q, int8x16_t x) {
  acc = vmlal_s8(acc, vget_low_s8(q), vget_low_s8(x));
  return vmlal_s8(acc, vget_high_s8(q), vget_high_s8(x));
}

// aux[0..3] / aux[4..7] += scale * p[0..7] (exact in int32).
inline void AddScaled(int16x8_t p, int16_t scale, int32x4_t* lo, int32x4_t* hi) {
  *lo = vmlal_n_s16(*lo, vget_low_s16(p), scale);
  *hi = vmlal_high_n_s16(*hi, p, scale);
}

// Sub-block s (elements 32s + l) of Q4_K: nibble s % 2 of qs[32 (s / 2) + l]; Q5_K adds
// bit s of qh[l] as bit 4. One scale per 32 elements. summins: the 8 sub-block sums
// bsums[2s] + bsums[2s + 1] (one pairwise add, |.| <= 32 * 128) times the mins.
template <bool kFive, typename Block>
inline float DotQ45K(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const Block*>(wv);
  const auto* x = static_cast<const BlockQ8_K*>(xv);
  float sumf = 0;
  const uint8x16_t m4 = vdupq_n_u8(0x0F), h16 = vdupq_n_u8(0x10);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    uint8_t sm[16];
    UnpackScalesMinsK4(w[i].scales, sm);
    const int16x8_t bs = vpaddq_s16(vld1q_s16(x[i].bsums), vld1q_s16(x[i].bsums + 8));
    const int16x8_t mins = vreinterpretq_s16_u16(vmovl_u8(vld1_u8(sm + 8)));
    const int summins = vaddvq_s32(vmlal_high_s16(vmull_s16(vget_low_s16(bs), vget_low_s16(mins)), bs, mins));
    uint8x16_t qh0 = vdupq_n_u8(0), qh1 = qh0;
    if constexpr (kFive) {
      qh0 = vld1q_u8(reinterpret_cast<const BlockQ5_K&>(w[i]).qh);
      qh1 = vld1q_u8(reinterpret_cast<const BlockQ5_K&>(w[i]).qh + 16);
    }
    int32x4_t aux_lo = vdupq_n_s32(0), aux_hi = aux_lo;
    for (int s = 0; s < 8; ++s) {
      const uint8_t* qs = w[i].qs + 32 * (s / 2);
      uint8x16_t q0 = vld1q_u8(qs), q1 = vld1q_u8(qs + 16);
      if (s % 2) {
        q0 = vshrq_n_u8(q0, 4);
        q1 = vshrq_n_u8(q1, 4);
      } else {
        q0 = vandq_u8(q0, m4);
        q1 = vandq_u8(q1, m4);
      }
      if constexpr (kFive) {
        const uint8x16_t bit = vdupq_n_u8(static_cast<uint8_t>(1u << s));
        q0 = vorrq_u8(q0, vandq_u8(vtstq_u8(qh0, bit), h16));
        q1 = vorrq_u8(q1, vandq_u8(vtstq_u8(qh1, bit), h16));
      }
      const int8_t* xq = x[i].qs + 32 * s;
      int16x8_t p = vdupq_n_s16(0);
      p = Mul16(p, vreinterpretq_s8_u8(q0), vld1q_s8(xq));
      p = Mul16(p, vreinterpretq_s8_u8(q1), vld1q_s8(xq + 16));
      AddScaled(p, static_cast<int16_t>(sm[s]), &aux_lo, &aux_hi);
    }
    const int isum = vaddvq_s32(vaddq_s32(aux_lo, aux_hi));
    const float d = Fp16ToFp32(w[i].d) * x[i].d;
    sumf += d * static_cast<float>(isum);
    const float dmin = Fp16ToFp32(w[i].dmin) * x[i].d;
    sumf -= dmin * static_cast<float>(summins);
  }
  return sumf;
}

float DotQ4_K(const void* w, const void* x, int64_t n) { return DotQ45K<false, BlockQ4_K>(w, x, n); }
float DotQ5_K(const void* w, const void* x, int64_t n) { return DotQ45K<true, BlockQ5_K>(w, x, n); }

// Window k of half h (elements 128h + 32k + l): low nibble k / 2 of
// ql[64h + 32 (k % 2) + l], high bits (qh[32h + l] >> 2k) & 3, minus 32; scales
// 8h + 2k (l < 16) and 8h + 2k + 1.
float DotQ6_K(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const BlockQ6_K*>(wv);
  const auto* x = static_cast<const BlockQ8_K*>(xv);
  float sumf = 0;
  const uint8x16_t m4 = vdupq_n_u8(0x0F), m3 = vdupq_n_u8(0x03);
  const int8x16_t off = vdupq_n_s8(32);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int32x4_t aux_lo = vdupq_n_s32(0), aux_hi = aux_lo;
    for (int h = 0; h < 2; ++h) {
      for (int k = 0; k < 4; ++k) {
        const uint8_t* ql = w[i].ql + 64 * h + 32 * (k % 2);
        const uint8_t* qh = w[i].qh + 32 * h;
        for (int half = 0; half < 2; ++half) {  // l in [16 half, 16 half + 16)
          uint8x16_t lo = vld1q_u8(ql + 16 * half);
          lo = k / 2 ? vshrq_n_u8(lo, 4) : vandq_u8(lo, m4);
          uint8x16_t hi = vld1q_u8(qh + 16 * half);
          switch (k) {  // shift amounts must be immediates
            case 1: hi = vshrq_n_u8(hi, 2); break;
            case 2: hi = vshrq_n_u8(hi, 4); break;
            case 3: hi = vshrq_n_u8(hi, 6); break;
            default: break;
          }
          hi = vshlq_n_u8(vandq_u8(hi, m3), 4);
          const int8x16_t q = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(lo, hi)), off);
          const int16x8_t p = Mul16(vdupq_n_s16(0), q, vld1q_s8(x[i].qs + 128 * h + 32 * k + 16 * half));
          AddScaled(p, w[i].scales[8 * h + 2 * k + half], &aux_lo, &aux_hi);
        }
      }
    }
    const float d = Fp16ToFp32(w[i].d) * x[i].d;
    sumf += d * static_cast<float>(vaddvq_s32(vaddq_s32(aux_lo, aux_hi)));
  }
  return sumf;
}

// Q2_K as the reference (no lanes: the integer sum is exact in any order). Window
// (k, j): elements 128k + 32j + l, q = (qs[32k + l] >> 2j) & 3, scale nibble of byte
// 8k + 2j (l < 16) and 8k + 2j + 1; int16 lanes hold 2 products <= 2 * 3 * 127.
float DotQ2_K(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const BlockQ2_K*>(wv);
  const auto* x = static_cast<const BlockQ8_K*>(xv);
  const uint8x16_t m3 = vdupq_n_u8(0x03);
  float sumf = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int summs = 0;
    for (int j = 0; j < 16; ++j) summs += x[i].bsums[j] * (w[i].scales[j] >> 4);
    const float dall = x[i].d * Fp16ToFp32(w[i].d);
    const float dmin = x[i].d * Fp16ToFp32(w[i].dmin);
    int32x4_t acc_lo = vdupq_n_s32(0), acc_hi = acc_lo;
    for (int k = 0; k < 2; ++k) {
      for (int half = 0; half < 2; ++half) {
        const uint8x16_t bits = vld1q_u8(w[i].qs + 32 * k + 16 * half);
        for (int j = 0; j < 4; ++j) {
          uint8x16_t q = bits;
          switch (j) {  // shift amounts must be immediates
            case 1: q = vshrq_n_u8(q, 2); break;
            case 2: q = vshrq_n_u8(q, 4); break;
            case 3: q = vshrq_n_u8(q, 6); break;
            default: break;
          }
          q = vandq_u8(q, m3);
          const int16x8_t p = Mul16(vdupq_n_s16(0), vreinterpretq_s8_u8(q),
                                    vld1q_s8(x[i].qs + 128 * k + 32 * j + 16 * half));
          AddScaled(p, static_cast<int16_t>(w[i].scales[8 * k + 2 * j + half] & 0xF), &acc_lo, &acc_hi);
        }
      }
    }
    const int isum = vaddvq_s32(vaddq_s32(acc_lo, acc_hi));
    sumf += dall * static_cast<float>(isum) - dmin * static_cast<float>(summs);
  }
  return sumf;
}

// Q3_K: window (h, k): elements 128h + 32k + l, q = ((qs[32h + l] >> 2k) & 3) - 4 unless
// bit 4h + k of hmask[l] is set; signed scales ScaleQ3K(8h + 2k) (l < 16) and
// ScaleQ3K(8h + 2k + 1) (unpacked + 32 all at once); int16: 2 products <= 2 * 4 * 128.
float DotQ3_K(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const BlockQ3_K*>(wv);
  const auto* x = static_cast<const BlockQ8_K*>(xv);
  float sumf = 0;
  const uint8x16_t m3 = vdupq_n_u8(0x03), four = vdupq_n_u8(4);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    uint8_t biased[16];
    UnpackScalesQ3K(w[i].scales, biased);
    int32x4_t aux_lo = vdupq_n_s32(0), aux_hi = aux_lo;
    for (int half = 0; half < 2; ++half) {
      const uint8x16_t hm = vld1q_u8(w[i].hmask + 16 * half);
      for (int h = 0; h < 2; ++h) {
        const uint8x16_t bits = vld1q_u8(w[i].qs + 32 * h + 16 * half);
        for (int k = 0; k < 4; ++k) {
          uint8x16_t lo = bits;
          switch (k) {
            case 1: lo = vshrq_n_u8(lo, 2); break;
            case 2: lo = vshrq_n_u8(lo, 4); break;
            case 3: lo = vshrq_n_u8(lo, 6); break;
            default: break;
          }
          lo = vandq_u8(lo, m3);
          const uint8x16_t set = vtstq_u8(hm, vdupq_n_u8(static_cast<uint8_t>(1u << (4 * h + k))));
          const int8x16_t q = vreinterpretq_s8_u8(vsubq_u8(lo, vbicq_u8(four, set)));
          const int16x8_t p = Mul16(vdupq_n_s16(0), q, vld1q_s8(x[i].qs + 128 * h + 32 * k + 16 * half));
          AddScaled(p, static_cast<int16_t>(biased[8 * h + 2 * k + half] - 32), &aux_lo, &aux_hi);
        }
      }
    }
    const float d = Fp16ToFp32(w[i].d) * x[i].d;
    sumf += d * static_cast<float>(vaddvq_s32(vaddq_s32(aux_lo, aux_hi)));
  }
  return sumf;
}

}  // namespace
#endif  // UAII_HAVE_NEON_KERNELS

VecDotFn VecDotNeon(TensorType type) {
#ifdef UAII_HAVE_NEON_KERNELS
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
