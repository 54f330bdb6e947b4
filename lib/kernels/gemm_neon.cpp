// aarch64 NEON register tiles (gemm_tile.h): kTileRows weight rows x 1..kTileCols
// activation rows, bit-identical to vec_dot_ref.cpp. Compiled only on aarch64;
// elsewhere TileNeon() returns nullptr.
//
//  * 32-block types: the 4 rows' sumf chains live in the 4 lanes of one float32x4
//    per activation row; lane r performs exactly row r's scalar operations (the
//    block term in the reference's multiplication order, then sumf += term), so the
//    4 chains overlap instead of waiting on each other, and each unpacked weight
//    block serves up to 4 activation rows.
//  * K-quants: one weight row at a time against up to 4 activation rows, so each
//    unpacked sub-block is reused across the activation rows: the reference's one
//    exact int32 per super-block and activation row (sub-block products summed in
//    int16, scaled into int32x4, reduced once per block, as in vec_dot_neon.cpp),
//    then its scalar f32 steps per activation row (independent chains).
#include <cstring>
#include <type_traits>

#include "formats/fp16.h"
#include "formats/quant_blocks.h"
#include "kernels/kquant_scales.h"
#include "kernels/dispatch.h"

#if defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#define UAII_HAVE_NEON_TILES 1
#endif

namespace uaii::kernels {

#ifdef UAII_HAVE_NEON_TILES
namespace {
using namespace uaii::quant;

static_assert(kTileRows == 4, "one float32x4 lane per weight row");

// Four halves -> f32 lanes (fcvtl: exact for every non-NaN half, like Fp16ToFp32).
inline float32x4_t Halves4(uint16_t a, uint16_t b, uint16_t c, uint16_t d) {
  const uint16_t h[4] = {a, b, c, d};
  return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(h)));
}

// int32x4 of the 16 products lo*x (lanes not yet meaningful; summed by Reduce4).
inline int32x4_t Dot32(int8x16_t lo, int8x16_t hi, int8x16_t x0, int8x16_t x1) {
  // Two products per int16 lane: |w| <= 128, |x| <= 127, so <= 32512.
  int16x8_t p0 = vmull_s8(vget_low_s8(lo), vget_low_s8(x0));
  p0 = vmlal_s8(p0, vget_high_s8(lo), vget_high_s8(x0));
  int16x8_t p1 = vmull_s8(vget_low_s8(hi), vget_low_s8(x1));
  p1 = vmlal_s8(p1, vget_high_s8(hi), vget_high_s8(x1));
  return vpadalq_s16(vpaddlq_s16(p0), p1);
}

// Lane r = sum of the 4 lanes of v_r (exact).
inline int32x4_t Reduce4(int32x4_t v0, int32x4_t v1, int32x4_t v2, int32x4_t v3) {
  return vpaddq_s32(vpaddq_s32(v0, v1), vpaddq_s32(v2, v3));
}

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

// Per type: Unpack gives the 32 signed weights (elements 0..15, 16..31); Terms the
// block's f32 term, lane-wise in the reference's order.
struct T4_0 {
  using W = BlockQ4_0; using X = BlockQ8_0;
  static constexpr bool kMin = false;
  static void Unpack(const W& w, int8x16_t* lo, int8x16_t* hi) {
    uint8x16_t l, h;
    Nibbles(w.qs, &l, &h);
    *lo = vsubq_s8(vreinterpretq_s8_u8(l), vdupq_n_s8(8));
    *hi = vsubq_s8(vreinterpretq_s8_u8(h), vdupq_n_s8(8));
  }
  // (sumi * d_w) * d_x
  static float32x4_t Terms(float32x4_t sumi, float32x4_t dw, float32x4_t dx, float32x4_t, float32x4_t) {
    return vmulq_f32(vmulq_f32(sumi, dw), dx);
  }
};
struct T5_0 {
  using W = BlockQ5_0; using X = BlockQ8_0;
  static constexpr bool kMin = false;
  static void Unpack(const W& w, int8x16_t* lo, int8x16_t* hi) {
    uint8x16_t l, h;
    Nibbles(w.qs, &l, &h);
    *lo = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(l, Bit4x16(w.qh))), vdupq_n_s8(16));
    *hi = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(h, Bit4x16(w.qh + 2))), vdupq_n_s8(16));
  }
  // (d_w * d_x) * sumi
  static float32x4_t Terms(float32x4_t sumi, float32x4_t dw, float32x4_t dx, float32x4_t, float32x4_t) {
    return vmulq_f32(vmulq_f32(dw, dx), sumi);
  }
};
struct T8_0 {
  using W = BlockQ8_0; using X = BlockQ8_0;
  static constexpr bool kMin = false;
  static void Unpack(const W& w, int8x16_t* lo, int8x16_t* hi) {
    *lo = vld1q_s8(w.qs);
    *hi = vld1q_s8(w.qs + 16);
  }
  // sumi * (d_w * d_x)
  static float32x4_t Terms(float32x4_t sumi, float32x4_t dw, float32x4_t dx, float32x4_t, float32x4_t) {
    return vmulq_f32(sumi, vmulq_f32(dw, dx));
  }
};
// (d_w * d_x) * sumi + m_w * s_x
inline float32x4_t TermsQ_1(float32x4_t sumi, float32x4_t dw, float32x4_t dx, float32x4_t mw, float32x4_t sx) {
  return vaddq_f32(vmulq_f32(vmulq_f32(dw, dx), sumi), vmulq_f32(mw, sx));
}
struct T4_1 {
  using W = BlockQ4_1; using X = BlockQ8_1;
  static constexpr bool kMin = true;
  static void Unpack(const W& w, int8x16_t* lo, int8x16_t* hi) {
    uint8x16_t l, h;
    Nibbles(w.qs, &l, &h);
    *lo = vreinterpretq_s8_u8(l);
    *hi = vreinterpretq_s8_u8(h);
  }
  static float32x4_t Terms(float32x4_t s, float32x4_t dw, float32x4_t dx, float32x4_t mw, float32x4_t sx) {
    return TermsQ_1(s, dw, dx, mw, sx);
  }
};
struct T5_1 {
  using W = BlockQ5_1; using X = BlockQ8_1;
  static constexpr bool kMin = true;
  static void Unpack(const W& w, int8x16_t* lo, int8x16_t* hi) {
    uint8x16_t l, h;
    Nibbles(w.qs, &l, &h);
    *lo = vreinterpretq_s8_u8(vorrq_u8(l, Bit4x16(w.qh)));
    *hi = vreinterpretq_s8_u8(vorrq_u8(h, Bit4x16(w.qh + 2)));
  }
  static float32x4_t Terms(float32x4_t s, float32x4_t dw, float32x4_t dx, float32x4_t mw, float32x4_t sx) {
    return TermsQ_1(s, dw, dx, mw, sx);
  }
};

template <typename K, int C>
void Tile32(const void* wv, int64_t ws, const void* xv, int64_t xs, int64_t n, float* y, int64_t ys) {
  using W = typename K::W;
  using X = typename K::X;
  const auto* wb = static_cast<const uint8_t*>(wv);
  const auto* xb = static_cast<const uint8_t*>(xv);
  const W* wr[4];
  for (int r = 0; r < 4; ++r) wr[r] = reinterpret_cast<const W*>(wb + r * ws);
  const X* xr[C];
  for (int c = 0; c < C; ++c) xr[c] = reinterpret_cast<const X*>(xb + c * xs);
  float32x4_t acc[C];
  for (int c = 0; c < C; ++c) acc[c] = vdupq_n_f32(0.0f);
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    int8x16_t lo[4], hi[4];
    for (int r = 0; r < 4; ++r) K::Unpack(wr[r][ib], &lo[r], &hi[r]);
    const float32x4_t dw = Halves4(wr[0][ib].d, wr[1][ib].d, wr[2][ib].d, wr[3][ib].d);
    float32x4_t mw = vdupq_n_f32(0.0f);
    if constexpr (K::kMin) mw = Halves4(wr[0][ib].m, wr[1][ib].m, wr[2][ib].m, wr[3][ib].m);
    for (int c = 0; c < C; ++c) {
      const X& x = xr[c][ib];
      const int8x16_t x0 = vld1q_s8(x.qs), x1 = vld1q_s8(x.qs + 16);
      const int32x4_t sumi = Reduce4(Dot32(lo[0], hi[0], x0, x1), Dot32(lo[1], hi[1], x0, x1),
                                     Dot32(lo[2], hi[2], x0, x1), Dot32(lo[3], hi[3], x0, x1));
      float32x4_t sx = vdupq_n_f32(0.0f);
      if constexpr (K::kMin) sx = vdupq_n_f32(Fp16ToFp32(x.s));
      const float32x4_t term = K::Terms(vcvtq_f32_s32(sumi), dw, vdupq_n_f32(Fp16ToFp32(x.d)), mw, sx);
      acc[c] = vaddq_f32(acc[c], term);
    }
  }
  for (int c = 0; c < C; ++c) {
    float t[4];
    vst1q_f32(t, acc[c]);
    for (int r = 0; r < 4; ++r) y[c * ys + r] = t[r];
  }
}

// --- K-quants: one weight row against C activation rows (see vec_dot_neon.cpp) ---

inline int16x8_t Mul16(int16x8_t acc, int8x16_t q, int8x16_t x) {
  acc = vmlal_s8(acc, vget_low_s8(q), vget_low_s8(x));
  return vmlal_s8(acc, vget_high_s8(q), vget_high_s8(x));
}

template <int C>
struct LaneAcc {
  int32x4_t lo[C], hi[C];
  void Zero() { for (int c = 0; c < C; ++c) lo[c] = hi[c] = vdupq_n_s32(0); }
  void Add(int c, int16x8_t p, int16_t scale) {
    lo[c] = vmlal_n_s16(lo[c], vget_low_s16(p), scale);
    hi[c] = vmlal_high_n_s16(hi[c], p, scale);
  }
};

// The int32 sum of column c's accumulators.
template <int C>
inline int LaneSum(const LaneAcc<C>& a, int c) { return vaddvq_s32(vaddq_s32(a.lo[c], a.hi[c])); }

template <bool kFive, int C>
void RowQ45K(const uint8_t* wrow, const uint8_t* xb, int64_t xs, int64_t n, float* y, int64_t ys) {
  using Block = std::conditional_t<kFive, BlockQ5_K, BlockQ4_K>;
  const auto* w = reinterpret_cast<const Block*>(wrow);
  const BlockQ8_K* xr[C];
  for (int c = 0; c < C; ++c) xr[c] = reinterpret_cast<const BlockQ8_K*>(xb + c * xs);
  float sumf[C];
  for (int c = 0; c < C; ++c) sumf[c] = 0;
  const uint8x16_t m4 = vdupq_n_u8(0x0F), h16 = vdupq_n_u8(0x10);
  LaneAcc<C> aux;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    uint8_t sm[16];
    UnpackScalesMinsK4(w[i].scales, sm);
    uint8x16_t qh0 = vdupq_n_u8(0), qh1 = qh0;
    if constexpr (kFive) {
      qh0 = vld1q_u8(w[i].qh);
      qh1 = vld1q_u8(w[i].qh + 16);
    }
    aux.Zero();
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
      for (int c = 0; c < C; ++c) {
        const int8_t* xq = xr[c][i].qs + 32 * s;
        // 4 products per int16 lane: <= 4 * 31 * 128.
        int16x8_t p = Mul16(vdupq_n_s16(0), vreinterpretq_s8_u8(q0), vld1q_s8(xq));
        p = Mul16(p, vreinterpretq_s8_u8(q1), vld1q_s8(xq + 16));
        aux.Add(c, p, static_cast<int16_t>(sm[s]));
      }
    }
    const int16x8_t mins = vreinterpretq_s16_u16(vmovl_u8(vld1_u8(sm + 8)));
    for (int c = 0; c < C; ++c) {
      // summins: the 8 sub-block sums bsums[2s] + bsums[2s + 1] times the mins.
      const int16x8_t bs = vpaddq_s16(vld1q_s16(xr[c][i].bsums), vld1q_s16(xr[c][i].bsums + 8));
      const int summins = vaddvq_s32(vmlal_high_s16(vmull_s16(vget_low_s16(bs), vget_low_s16(mins)), bs, mins));
      const float d = Fp16ToFp32(w[i].d) * xr[c][i].d;
      sumf[c] += d * static_cast<float>(LaneSum(aux, c));
      const float dmin = Fp16ToFp32(w[i].dmin) * xr[c][i].d;
      sumf[c] -= dmin * static_cast<float>(summins);
    }
  }
  for (int c = 0; c < C; ++c) y[c * ys] = sumf[c];
}

template <int C>
void RowQ6K(const uint8_t* wrow, const uint8_t* xb, int64_t xs, int64_t n, float* y, int64_t ys) {
  const auto* w = reinterpret_cast<const BlockQ6_K*>(wrow);
  const BlockQ8_K* xr[C];
  for (int c = 0; c < C; ++c) xr[c] = reinterpret_cast<const BlockQ8_K*>(xb + c * xs);
  float sumf[C];
  for (int c = 0; c < C; ++c) sumf[c] = 0;
  const uint8x16_t m4 = vdupq_n_u8(0x0F), m3 = vdupq_n_u8(0x03);
  const int8x16_t off = vdupq_n_s8(32);
  LaneAcc<C> aux;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    aux.Zero();
    for (int h = 0; h < 2; ++h) {
      for (int k = 0; k < 4; ++k) {
        const uint8_t* ql = w[i].ql + 64 * h + 32 * (k % 2);
        const uint8_t* qh = w[i].qh + 32 * h;
        for (int half = 0; half < 2; ++half) {  // elements 128h + 32k + 16 half + 0..15
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
          const int16_t scale = w[i].scales[8 * h + 2 * k + half];
          for (int c = 0; c < C; ++c) {
            // 2 products per int16 lane: <= 2 * 32 * 128.
            const int16x8_t p = Mul16(vdupq_n_s16(0), q, vld1q_s8(xr[c][i].qs + 128 * h + 32 * k + 16 * half));
            aux.Add(c, p, scale);
          }
        }
      }
    }
    for (int c = 0; c < C; ++c) {
      const float d = Fp16ToFp32(w[i].d) * xr[c][i].d;
      sumf[c] += d * static_cast<float>(LaneSum(aux, c));
    }
  }
  for (int c = 0; c < C; ++c) y[c * ys] = sumf[c];
}

template <int C, typename Row>
inline void RowsK(Row row, const void* wv, int64_t ws, const void* xv, int64_t xs, int64_t n, float* y,
                  int64_t ys) {
  const auto* wb = static_cast<const uint8_t*>(wv);
  for (int r = 0; r < kTileRows; ++r) row(wb + r * ws, static_cast<const uint8_t*>(xv), xs, n, y + r, ys);
}

template <int C> void TileQ4K(const void* w, int64_t ws, const void* x, int64_t xs, int64_t n, float* y, int64_t ys) {
  RowsK<C>(RowQ45K<false, C>, w, ws, x, xs, n, y, ys);
}
template <int C> void TileQ5K(const void* w, int64_t ws, const void* x, int64_t xs, int64_t n, float* y, int64_t ys) {
  RowsK<C>(RowQ45K<true, C>, w, ws, x, xs, n, y, ys);
}
template <int C> void TileQ6K(const void* w, int64_t ws, const void* x, int64_t xs, int64_t n, float* y, int64_t ys) {
  RowsK<C>(RowQ6K<C>, w, ws, x, xs, n, y, ys);
}

using FixedTile = void (*)(const void*, int64_t, const void*, int64_t, int64_t, float*, int64_t);

template <FixedTile F1, FixedTile F2, FixedTile F3, FixedTile F4>
void ByCols(const void* w, int64_t ws, const void* x, int64_t xs, int64_t n, int cols, float* y, int64_t ys) {
  switch (cols) {
    case 1: F1(w, ws, x, xs, n, y, ys); break;
    case 2: F2(w, ws, x, xs, n, y, ys); break;
    case 3: F3(w, ws, x, xs, n, y, ys); break;
    default: F4(w, ws, x, xs, n, y, ys); break;
  }
}

template <typename K>
constexpr TileFn Tile32Fn() {
  return ByCols<Tile32<K, 1>, Tile32<K, 2>, Tile32<K, 3>, Tile32<K, 4>>;
}

}  // namespace
#endif  // UAII_HAVE_NEON_TILES

TileFn TileNeon(TensorType type) {
#ifdef UAII_HAVE_NEON_TILES
  static_assert(kTileCols == 4, "ByCols covers 1..4 columns");
  switch (type) {
    case TensorType::Q4_0: return Tile32Fn<T4_0>();
    case TensorType::Q4_1: return Tile32Fn<T4_1>();
    case TensorType::Q5_0: return Tile32Fn<T5_0>();
    case TensorType::Q5_1: return Tile32Fn<T5_1>();
    case TensorType::Q8_0: return Tile32Fn<T8_0>();
    case TensorType::Q4_K: return ByCols<TileQ4K<1>, TileQ4K<2>, TileQ4K<3>, TileQ4K<4>>;
    case TensorType::Q5_K: return ByCols<TileQ5K<1>, TileQ5K<2>, TileQ5K<3>, TileQ5K<4>>;
    case TensorType::Q6_K: return ByCols<TileQ6K<1>, TileQ6K<2>, TileQ6K<3>, TileQ6K<4>>;
    default: return nullptr;
  }
#else
  (void)type;
  return nullptr;
#endif
}

}  // namespace uaii::kernels
