// AVX2 + FMA + F16C tiles (gemm_tile.h): kTileRows weight rows x C activation rows.
// Bit-identical to vec_dot_ref.cpp: integer parts are exact in any order, and every
// f32 operation of an output element is its scalar reference operation, in order.
//
// 32-element blocks: per block, the int32 sums of the 4 rows come out of one hadd
// tree into the 4 lanes of a vector; the block's f32 term is computed lane-wise
// (lane r = row r, with the reference's multiplication order), and added to the
// per-column accumulator (lane r is row r's sumf). So 4 serial sumf chains share
// one vector add, and each unpacked weight block serves all C activation rows.
//
// K-quants: one weight row at a time (their f32 part is already 8 lanes wide per
// 256-block); the decoded and lane-permuted weights serve all C activation rows, whose
// windows were lane-permuted once per matmul (PermuteQ8KForTiles).
#include <cstring>
#include <type_traits>

#include "formats/fp16.h"
#include "formats/quant_blocks.h"
#include "kernels/gemm_tile.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define UAII_HAVE_AVX2_TILES 1
#define UAII_AVX2 __attribute__((target("avx2,fma,f16c")))
#endif

namespace uaii::kernels {

#ifdef UAII_HAVE_AVX2_TILES
namespace {
using namespace uaii::quant;

UAII_AVX2 inline __m256i LoadU256(const void* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
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

// Lane k: sum of the 8 int32 lanes of v_k (exact).
UAII_AVX2 inline __m128i Hsum4(__m256i v0, __m256i v1, __m256i v2, __m256i v3) {
  const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(v0, v1), _mm256_hadd_epi32(v2, v3));
  return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

// Four halves -> f32 lanes (F16C converts every non-NaN half exactly as Fp16ToFp32).
UAII_AVX2 inline __m128 Halves4(uint16_t a, uint16_t b, uint16_t c, uint16_t d) {
  return _mm_cvtph_ps(_mm_setr_epi16(static_cast<short>(a), static_cast<short>(b),
                                     static_cast<short>(c), static_cast<short>(d), 0, 0, 0, 0));
}
UAII_AVX2 inline __m128 HalfBroadcast(uint16_t h) {
  return _mm_cvtph_ps(_mm_set1_epi16(static_cast<short>(h)));
}

// --- 32-element block types: Unpack gives the 32 weight bytes; kSigned says whether
// they are signed (dot through the sign trick: |w| <= 128, |x| <= 127, maddubs pairs
// < 32767) or unsigned <= 31 (maddubs directly). Terms is the block's f32 term. ---

struct T4_0 {
  using W = BlockQ4_0; using X = BlockQ8_0;
  static constexpr bool kSigned = true, kMin = false;
  UAII_AVX2 static __m256i Unpack(const W& w) {
    return _mm256_sub_epi8(Nibbles16(w.qs), _mm256_set1_epi8(8));
  }
  // (sumi * d_w) * d_x
  UAII_AVX2 static __m128 Terms(__m128 sumi, __m128 dw, __m128 dx, __m128, __m128) {
    return _mm_mul_ps(_mm_mul_ps(sumi, dw), dx);
  }
};
struct T5_0 {
  using W = BlockQ5_0; using X = BlockQ8_0;
  static constexpr bool kSigned = true, kMin = false;
  UAII_AVX2 static __m256i Unpack(const W& w) {
    return _mm256_sub_epi8(_mm256_or_si256(Nibbles16(w.qs), Bit4FromBits32(w.qh)),
                           _mm256_set1_epi8(16));
  }
  // (d_w * d_x) * sumi
  UAII_AVX2 static __m128 Terms(__m128 sumi, __m128 dw, __m128 dx, __m128, __m128) {
    return _mm_mul_ps(_mm_mul_ps(dw, dx), sumi);
  }
};
struct T8_0 {
  using W = BlockQ8_0; using X = BlockQ8_0;
  static constexpr bool kSigned = true, kMin = false;
  UAII_AVX2 static __m256i Unpack(const W& w) { return LoadU256(w.qs); }
  // sumi * (d_w * d_x)
  UAII_AVX2 static __m128 Terms(__m128 sumi, __m128 dw, __m128 dx, __m128, __m128) {
    return _mm_mul_ps(sumi, _mm_mul_ps(dw, dx));
  }
};
// (d_w * d_x) * sumi + m_w * s_x
struct T4_1 {
  using W = BlockQ4_1; using X = BlockQ8_1;
  static constexpr bool kSigned = false, kMin = true;
  UAII_AVX2 static __m256i Unpack(const W& w) { return Nibbles16(w.qs); }
  UAII_AVX2 static __m128 Terms(__m128 sumi, __m128 dw, __m128 dx, __m128 mw, __m128 sx) {
    return _mm_add_ps(_mm_mul_ps(_mm_mul_ps(dw, dx), sumi), _mm_mul_ps(mw, sx));
  }
};
struct T5_1 {
  using W = BlockQ5_1; using X = BlockQ8_1;
  static constexpr bool kSigned = false, kMin = true;
  UAII_AVX2 static __m256i Unpack(const W& w) {
    return _mm256_or_si256(Nibbles16(w.qs), Bit4FromBits32(w.qh));
  }
  UAII_AVX2 static __m128 Terms(__m128 sumi, __m128 dw, __m128 dx, __m128 mw, __m128 sx) {
    return _mm_add_ps(_mm_mul_ps(_mm_mul_ps(dw, dx), sumi), _mm_mul_ps(mw, sx));
  }
};

template <typename K, int C>
UAII_AVX2 void Tile32(const void* wv, int64_t ws, const void* xv, int64_t xs, int64_t n,
                      float* y, int64_t ys) {
  using W = typename K::W;
  using X = typename K::X;
  const auto* wb = static_cast<const uint8_t*>(wv);
  const auto* xb = static_cast<const uint8_t*>(xv);
  const W* wr[kTileRows];
  for (int r = 0; r < kTileRows; ++r) wr[r] = reinterpret_cast<const W*>(wb + r * ws);
  const X* xr[C];
  for (int c = 0; c < C; ++c) xr[c] = reinterpret_cast<const X*>(xb + c * xs);
  const __m256i ones = _mm256_set1_epi16(1);
  __m128 acc[C];
  for (int c = 0; c < C; ++c) acc[c] = _mm_setzero_ps();
  const int64_t nb = n / kQK;
  for (int64_t ib = 0; ib < nb; ++ib) {
    __m256i q[kTileRows], qa[kTileRows];
    for (int r = 0; r < kTileRows; ++r) {
      q[r] = K::Unpack(wr[r][ib]);
      if constexpr (K::kSigned) qa[r] = _mm256_sign_epi8(q[r], q[r]);
    }
    const __m128 dw = Halves4(wr[0][ib].d, wr[1][ib].d, wr[2][ib].d, wr[3][ib].d);
    __m128 mw = _mm_setzero_ps();
    if constexpr (K::kMin) mw = Halves4(wr[0][ib].m, wr[1][ib].m, wr[2][ib].m, wr[3][ib].m);
    for (int c = 0; c < C; ++c) {
      const X& x = xr[c][ib];
      const __m256i xq = LoadU256(x.qs);
      __m256i v[kTileRows];
      for (int r = 0; r < kTileRows; ++r) {
        if constexpr (K::kSigned) {
          v[r] = _mm256_madd_epi16(_mm256_maddubs_epi16(qa[r], _mm256_sign_epi8(xq, q[r])), ones);
        } else {
          v[r] = _mm256_madd_epi16(_mm256_maddubs_epi16(q[r], xq), ones);
        }
      }
      const __m128 sumi = _mm_cvtepi32_ps(Hsum4(v[0], v[1], v[2], v[3]));
      __m128 sx = _mm_setzero_ps();
      if constexpr (K::kMin) sx = HalfBroadcast(x.s);
      acc[c] = _mm_add_ps(acc[c], K::Terms(sumi, dw, HalfBroadcast(x.d), mw, sx));
    }
  }
  for (int c = 0; c < C; ++c) {
    alignas(16) float t[4];
    _mm_store_ps(t, acc[c]);
    for (int r = 0; r < kTileRows; ++r) y[c * ys + r] = t[r];
  }
}

// --- K-quants ---

// Reorders the bytes of a 32-element window so that maddubs + madd put the
// reference's lane l (positions p % 8 == l) into int32 lane l (see vec_dot_avx2.cpp).
UAII_AVX2 inline __m256i LanePerm(__m256i v) {
  v = _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
  return _mm256_shuffle_epi8(v, _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,
                                                 0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
}

template <bool kFive, int C>
UAII_AVX2 void RowQ45K(const uint8_t* wrow, const uint8_t* xb, int64_t xs, int64_t n, float* y,
                       int64_t ys) {
  using Block = std::conditional_t<kFive, BlockQ5_K, BlockQ4_K>;
  const auto* w = reinterpret_cast<const Block*>(wrow);
  const BlockQ8_K* xr[C];
  for (int c = 0; c < C; ++c) xr[c] = reinterpret_cast<const BlockQ8_K*>(xb + c * xs);
  __m256 sums[C];
  float sumf[C];
  for (int c = 0; c < C; ++c) { sums[c] = _mm256_setzero_ps(); sumf[c] = 0; }
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    uint8_t sc[8], mn[8];
    for (int s = 0; s < 8; ++s) ScaleMinK4(s, w[i].scales, &sc[s], &mn[s]);
    int sumi[C];
    for (int c = 0; c < C; ++c) {
      sumi[c] = 0;
      for (int s = 0; s < 8; ++s)
        sumi[c] += (xr[c][i].bsums[2 * s] + xr[c][i].bsums[2 * s + 1]) * mn[s];
    }
    __m256i qh;
    if constexpr (kFive) qh = LoadU256(w[i].qh);
    __m256i aux[C];
    for (int c = 0; c < C; ++c) aux[c] = _mm256_setzero_si256();
    for (int k = 0; k < 4; ++k) {
      const __m256i bytes = LoadU256(w[i].qs + 32 * k);
      __m256i q0 = _mm256_and_si256(bytes, m4);
      __m256i q1 = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), m4);
      if constexpr (kFive) {
        const __m256i b0 = _mm256_set1_epi8(static_cast<char>(1 << (2 * k)));
        const __m256i b1 = _mm256_set1_epi8(static_cast<char>(1 << (2 * k + 1)));
        const __m256i h16 = _mm256_set1_epi8(0x10);
        q0 = _mm256_or_si256(q0, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, b0), b0), h16));
        q1 = _mm256_or_si256(q1, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, b1), b1), h16));
      }
      const __m256i p0 = LanePerm(q0), p1 = LanePerm(q1);
      const __m256i s0 = _mm256_set1_epi16(sc[2 * k]), s1 = _mm256_set1_epi16(sc[2 * k + 1]);
      for (int c = 0; c < C; ++c) {
        const int8_t* xq = xr[c][i].qs + 64 * k;
        aux[c] = _mm256_add_epi32(aux[c], _mm256_madd_epi16(_mm256_maddubs_epi16(p0, LoadU256(xq)), s0));
        aux[c] = _mm256_add_epi32(aux[c], _mm256_madd_epi16(_mm256_maddubs_epi16(p1, LoadU256(xq + 32)), s1));
      }
    }
    for (int c = 0; c < C; ++c) {
      const float d = Fp16ToFp32(w[i].d) * xr[c][i].d;
      sums[c] = _mm256_add_ps(sums[c], _mm256_mul_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(aux[c])));
      const float dmin = Fp16ToFp32(w[i].dmin) * xr[c][i].d;
      sumf[c] -= dmin * static_cast<float>(sumi[c]);
    }
  }
  for (int c = 0; c < C; ++c) {
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, sums[c]);
    for (int l = 0; l < 8; ++l) sumf[c] += lanes[l];
    y[c * ys] = sumf[c];
  }
}

template <int C>
UAII_AVX2 void RowQ6K(const uint8_t* wrow, const uint8_t* xb, int64_t xs, int64_t n, float* y,
                      int64_t ys) {
  const auto* w = reinterpret_cast<const BlockQ6_K*>(wrow);
  const BlockQ8_K* xr[C];
  for (int c = 0; c < C; ++c) xr[c] = reinterpret_cast<const BlockQ8_K*>(xb + c * xs);
  __m256 sums[C];
  for (int c = 0; c < C; ++c) sums[c] = _mm256_setzero_ps();
  const __m256i m4 = _mm256_set1_epi8(0x0F), m2 = _mm256_set1_epi8(0x03);
  const __m256i off = _mm256_set1_epi8(32);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    __m256i aux[C];
    for (int c = 0; c < C; ++c) aux[c] = _mm256_setzero_si256();
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
        const __m256i qp = LanePerm(_mm256_sub_epi8(_mm256_or_si256(lo[k], hi), off));
        const __m256i qa = _mm256_sign_epi8(qp, qp);
        const int sa = w[i].scales[8 * h + 2 * k], sb = w[i].scales[8 * h + 2 * k + 1];
        const __m256i scales16 = _mm256_set1_epi32(static_cast<int>(
            (static_cast<uint32_t>(sb) << 16) | (static_cast<uint32_t>(sa) & 0xFFFFu)));
        for (int c = 0; c < C; ++c) {
          const __m256i xp = LoadU256(xr[c][i].qs + 128 * h + 32 * k);
          const __m256i p = _mm256_maddubs_epi16(qa, _mm256_sign_epi8(xp, qp));
          aux[c] = _mm256_add_epi32(aux[c], _mm256_madd_epi16(p, scales16));
        }
      }
    }
    for (int c = 0; c < C; ++c) {
      const float d = Fp16ToFp32(w[i].d) * xr[c][i].d;
      sums[c] = _mm256_add_ps(sums[c], _mm256_mul_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(aux[c])));
    }
  }
  for (int c = 0; c < C; ++c) {
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, sums[c]);
    float sumf = 0;
    for (int l = 0; l < 8; ++l) sumf += lanes[l];
    y[c * ys] = sumf;
  }
}

// K-quant tiles: the kTileRows rows one after the other.
template <int C, typename Row>
inline void RowsK(Row row, const void* wv, int64_t ws, const void* xv, int64_t xs, int64_t n,
                  float* y, int64_t ys) {
  const auto* wb = static_cast<const uint8_t*>(wv);
  for (int r = 0; r < kTileRows; ++r)
    row(wb + r * ws, static_cast<const uint8_t*>(xv), xs, n, y + r, ys);
}

template <int C> UAII_AVX2 void TileQ4K(const void* w, int64_t ws, const void* x, int64_t xs, int64_t n, float* y, int64_t ys) {
  RowsK<C>(RowQ45K<false, C>, w, ws, x, xs, n, y, ys);
}
template <int C> UAII_AVX2 void TileQ5K(const void* w, int64_t ws, const void* x, int64_t xs, int64_t n, float* y, int64_t ys) {
  RowsK<C>(RowQ45K<true, C>, w, ws, x, xs, n, y, ys);
}
template <int C> UAII_AVX2 void TileQ6K(const void* w, int64_t ws, const void* x, int64_t xs, int64_t n, float* y, int64_t ys) {
  RowsK<C>(RowQ6K<C>, w, ws, x, xs, n, y, ys);
}

template <int C> UAII_AVX2 void TileQ4_0(const void* w, int64_t ws, const void* x, int64_t xs, int64_t n, float* y, int64_t ys) { Tile32<T4_0, C>(w, ws, x, xs, n, y, ys); }
template <int C> UAII_AVX2 void TileQ4_1(const void* w, int64_t ws, const void* x, int64_t xs, int64_t n, float* y, int64_t ys) { Tile32<T4_1, C>(w, ws, x, xs, n, y, ys); }
template <int C> UAII_AVX2 void TileQ5_0(const void* w, int64_t ws, const void* x, int64_t xs, int64_t n, float* y, int64_t ys) { Tile32<T5_0, C>(w, ws, x, xs, n, y, ys); }
template <int C> UAII_AVX2 void TileQ5_1(const void* w, int64_t ws, const void* x, int64_t xs, int64_t n, float* y, int64_t ys) { Tile32<T5_1, C>(w, ws, x, xs, n, y, ys); }
template <int C> UAII_AVX2 void TileQ8_0(const void* w, int64_t ws, const void* x, int64_t xs, int64_t n, float* y, int64_t ys) { Tile32<T8_0, C>(w, ws, x, xs, n, y, ys); }

using FixedTile = void (*)(const void*, int64_t, const void*, int64_t, int64_t, float*, int64_t);

// Runtime column count -> the compiled tile for it.
template <FixedTile F1, FixedTile F2, FixedTile F3, FixedTile F4>
void ByCols(const void* w, int64_t ws, const void* x, int64_t xs, int64_t n, int cols, float* y,
            int64_t ys) {
  switch (cols) {
    case 1: F1(w, ws, x, xs, n, y, ys); break;
    case 2: F2(w, ws, x, xs, n, y, ys); break;
    case 3: F3(w, ws, x, xs, n, y, ys); break;
    default: F4(w, ws, x, xs, n, y, ys); break;
  }
}

#define UAII_TILE(T) ByCols<T<1>, T<2>, T<3>, T<4>>

}  // namespace
UAII_AVX2 void PermuteQ8KAvx2(void* blocks, int64_t n_blocks) {
  auto* x = static_cast<BlockQ8_K*>(blocks);
  for (int64_t i = 0; i < n_blocks; ++i)
    for (int k = 0; k < kQK_K / 32; ++k) {
      auto* p = reinterpret_cast<__m256i*>(x[i].qs + 32 * k);
      _mm256_storeu_si256(p, LanePerm(_mm256_loadu_si256(p)));
    }
}

#endif  // UAII_HAVE_AVX2_TILES

bool TileWantsPermutedQ8K(TensorType type) {
  return type == TensorType::Q4_K || type == TensorType::Q5_K || type == TensorType::Q6_K;
}

void PermuteQ8KForTiles(void* blocks, int64_t n_blocks) {
#ifdef UAII_HAVE_AVX2_TILES
  PermuteQ8KAvx2(blocks, n_blocks);
#else
  (void)blocks;
  (void)n_blocks;
#endif
}

TileFn TileAvx2(TensorType type) {
#ifdef UAII_HAVE_AVX2_TILES
  static_assert(kTileCols == 4, "ByCols covers 1..4 columns");
  switch (type) {
    case TensorType::Q4_0: return UAII_TILE(TileQ4_0);
    case TensorType::Q4_1: return UAII_TILE(TileQ4_1);
    case TensorType::Q5_0: return UAII_TILE(TileQ5_0);
    case TensorType::Q5_1: return UAII_TILE(TileQ5_1);
    case TensorType::Q8_0: return UAII_TILE(TileQ8_0);
    case TensorType::Q4_K: return UAII_TILE(TileQ4K);
    case TensorType::Q5_K: return UAII_TILE(TileQ5K);
    case TensorType::Q6_K: return UAII_TILE(TileQ6K);
    default: return nullptr;
  }
#else
  (void)type;
  return nullptr;
#endif
}

}  // namespace uaii::kernels
