// Register-tiled dot products: one call computes a tile of kTileRows weight rows
// times 1..kTileCols activation rows (already in the weight type's activation
// format, vec_dot.h):
//
//   y[c * y_stride + r] = dot(W row r, X row c)     r < kTileRows, c < cols
//
// Why: a single dot product of a 32-block type is bound by its serial f32 chain
// (sumf += term, one add per block, 4+ cycles of latency each); a tile keeps
// kTileRows chains in the lanes of one vector, and a prefill tile also reuses every
// unpacked weight block for `cols` activation rows.
//
// Each output element still performs exactly the f32 operations of its single
// dot product (vec_dot_ref.cpp), in the same order: lane r of every vector op is
// row r's scalar op. Tiles are therefore bit-identical to VecDotRef, and results
// never depend on how rows or activations are grouped into tiles.
#pragma once
#include <cstdint>

#include "formats/tensor_type.h"

namespace uaii::kernels {

inline constexpr int kTileRows = 4;
inline constexpr int kTileCols = 4;

// w: kTileRows packed rows, w_stride bytes apart; x: `cols` activation rows,
// x_stride bytes apart; n: elements per row.
using TileFn = void (*)(const void* w, int64_t w_stride, const void* x, int64_t x_stride,
                        int64_t n, int cols, float* y, int64_t y_stride);

// AVX2+FMA+F16C tiles; nullptr when not compiled in or no tile for the type.
// Callers must check CpuHasAvx2() first.
TileFn TileAvx2(TensorType type);

}  // namespace uaii::kernels
