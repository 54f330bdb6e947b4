// Register tiles (gemm_tile.h) for the float weight types F32, F16 and BF16 at the
// avx2 level (AVX2 + FMA + F16C, 16 ymm registers): the prefill GEMM of unquantized
// weights on CPUs without AVX-512 (most laptops).
//
// Why: without a tile every output was one row dot, two loads (and, for F16/BF16, two
// widenings) per multiply-add. The reference order (vec_dot.h) keeps 4 ymm
// accumulators per output, so 16 registers hold two outputs' at most: a tile of 2
// weight rows x 1 activation row loads each 32-element step of the activation once
// for both rows, 12 loads per 8 multiply-adds instead of 16.
//
// Bit-identical to the row dot: each output's accumulators acc0..acc3 take the same
// fused products in the same step order, then the reference's reduction (the same
// as the row kernels', float_dot_x86.h) and its unfused n % 32 tail.
#include <cstdint>
#include <cstring>

#include "kernels/float_dot_x86.h"
#include "kernels/gemm_tile.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define UAII_FT2_TARGET __attribute__((target("avx2,fma,f16c")))

namespace uaii::kernels::avx2_tiles {
namespace {

// Rows r0 and r0 + 1 of the tile against one activation row.
template <typename T>
UAII_FT2_TARGET void TwoRows(const typename T::E* w0, const typename T::E* w1, const typename T::E* x, int64_t n,
                             float* y0, float* y1) {
  __m256 a[4], b[4];
  for (int k = 0; k < 4; ++k) a[k] = b[k] = _mm256_setzero_ps();
  const int64_t np = n & ~int64_t{31};
  for (int64_t i = 0; i < np; i += 32) {
    for (int k = 0; k < 4; ++k) {
      const __m256 xv = T::Load8(x + i + 8 * k);
      a[k] = _mm256_fmadd_ps(T::Load8(w0 + i + 8 * k), xv, a[k]);
      b[k] = _mm256_fmadd_ps(T::Load8(w1 + i + 8 * k), xv, b[k]);
    }
  }
  *y0 = float_dot::Finish4<T>(a, w0, x, np, n);
  *y1 = float_dot::Finish4<T>(b, w1, x, np, n);
}

template <typename T>
UAII_FT2_TARGET void Tile(const void* w, int64_t ws, const void* x, int64_t xs, int64_t n, int cols, float* y,
                          int64_t ys) {
  using E = typename T::E;
  const auto* wb = static_cast<const uint8_t*>(w);
  const auto* xb = static_cast<const uint8_t*>(x);
  for (int c = 0; c < cols; ++c) {
    const E* xc = reinterpret_cast<const E*>(xb + c * xs);
    for (int r = 0; r < kTileRows; r += 2)
      TwoRows<T>(reinterpret_cast<const E*>(wb + r * ws), reinterpret_cast<const E*>(wb + (r + 1) * ws), xc, n,
                 y + c * ys + r, y + c * ys + r + 1);
  }
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

}  // namespace uaii::kernels::avx2_tiles
#endif
