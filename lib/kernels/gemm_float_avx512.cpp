// Register tiles (gemm_tile.h) for the float weight types F32, F16 and BF16 on
// AVX-512: the prefill GEMM of unquantized weights (Hugging Face directories, F16 /
// BF16 / F32 GGUF tensors).
//
// Why: without a tile every output is one row dot (vec_dot_avx2.cpp), two loads per
// multiply-add, a quarter of the FMA ports' rate (the row dot against oneDNN's brgemm:
// docs/performance.md, benchmarks/bench_onednn.cpp). Here a tile of 4 weight rows x 2
// activation rows loads each 32-element step of the 4 rows and 2 activations once for
// 16 zmm multiply-adds.
//
// Bit-identical to the row dot (vec_dot.h's fixed order): per output, zmm A holds the
// reference's accumulators (acc0 | acc1) and zmm B (acc2 | acc3), so every product is
// fused into the same lane in the same step order; the reduction then does the
// reference's adds, (acc0 + acc2) + (acc1 + acc3) as the halves of A + B, then
// t_k = s_k + s_{k+4} and (t0 + t1) + (t2 + t3), and the n % 32 tail unfused.
#include <cstdint>
#include <cstring>

#include "kernels/float_dot_x86.h"
#include "kernels/gemm_tile.h"

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12 flags its own avx512fintrin.h helpers (_mm512_undefined_*) as uninitialized
// when they inline here; a known false positive (as in interleave_avx512.cpp).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#define UAII_FT_TARGET __attribute__((target("avx2,fma,f16c,avx512f,avx512vl,avx512bw")))

namespace uaii::kernels::avx512_tiles {
namespace {

constexpr int R = kTileRows;

// 4 weight rows x C activation rows (C = 1 or 2).
template <typename T, int C>
UAII_FT_TARGET void TileRC(const uint8_t* w, int64_t ws, const uint8_t* x, int64_t xs, int64_t n, float* y,
                           int64_t ys) {
  using E = typename T::E;
  const E* wr[R];
  const E* xr[C];
  for (int r = 0; r < R; ++r) wr[r] = reinterpret_cast<const E*>(w + r * ws);
  for (int c = 0; c < C; ++c) xr[c] = reinterpret_cast<const E*>(x + c * xs);
  __m512 acc[R][C][2];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c][0] = acc[r][c][1] = _mm512_setzero_ps();
  const int64_t np = n & ~int64_t{31};
  for (int64_t i = 0; i < np; i += 32) {
    __m512 xv[C][2];
    for (int c = 0; c < C; ++c) {
      xv[c][0] = T::Load16(xr[c] + i);
      xv[c][1] = T::Load16(xr[c] + i + 16);
    }
    for (int r = 0; r < R; ++r) {
      const __m512 w0 = T::Load16(wr[r] + i), w1 = T::Load16(wr[r] + i + 16);
      for (int c = 0; c < C; ++c) {
        acc[r][c][0] = _mm512_fmadd_ps(w0, xv[c][0], acc[r][c][0]);
        acc[r][c][1] = _mm512_fmadd_ps(w1, xv[c][1], acc[r][c][1]);
      }
    }
  }
  for (int c = 0; c < C; ++c)
    for (int r = 0; r < R; ++r) y[c * ys + r] = float_dot::Finish2<T>(acc[r][c][0], acc[r][c][1], wr[r], xr[c], np, n);
}

template <typename T>
UAII_FT_TARGET void Tile(const void* w, int64_t ws, const void* x, int64_t xs, int64_t n, int cols, float* y,
                         int64_t ys) {
  const auto* wb = static_cast<const uint8_t*>(w);
  const auto* xb = static_cast<const uint8_t*>(x);
  int c = 0;
  for (; c + 2 <= cols; c += 2) TileRC<T, 2>(wb, ws, xb + c * xs, xs, n, y + c * ys, ys);
  if (c < cols) TileRC<T, 1>(wb, ws, xb + c * xs, xs, n, y + c * ys, ys);
}

}  // namespace

TileFn FloatTile(TensorType type) {
  switch (type) {
    case TensorType::F32: return Tile<float_dot::F32>;
    case TensorType::F16: return Tile<float_dot::F16>;
    case TensorType::BF16: return Tile<float_dot::BF16>;
    default: return nullptr;
  }
}

}  // namespace uaii::kernels::avx512_tiles
#endif
