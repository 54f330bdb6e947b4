// AVX2 + FMA + F16C register tiles (gemm_tile.h), plus the run-time choice of the
// AVX-512VL/VNNI build of the same body (gemm_avx512.cpp) on CPUs that have it.
// Bit-identical to vec_dot_ref.cpp either way (see gemm_tile_body.inc).
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "formats/fp16.h"
#include "formats/quant_blocks.h"
#include "kernels/gemm_tile.h"
#include "kernels/kquant_scales.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define UAII_HAVE_AVX2_TILES 1
#define UAII_TILE_TARGET __attribute__((target("avx2,fma,f16c")))
#endif

namespace uaii::kernels {

#ifdef UAII_HAVE_AVX2_TILES
namespace avx512_tiles {
TileFn Tile(TensorType type);
TileFn FloatTile(TensorType type);  // gemm_float_avx512.cpp
}  // namespace avx512_tiles

namespace avx2_tiles {
#include "kernels/gemm_tile_body.inc"
TileFn FloatTile(TensorType type);  // gemm_float_avx2.cpp
}  // namespace avx2_tiles

namespace {
bool CpuHasAvx512Vnni() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                          __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni");
  return has;
}
}  // namespace
#endif  // UAII_HAVE_AVX2_TILES

TileFn TileAvx2(TensorType type) {
#ifdef UAII_HAVE_AVX2_TILES
  static_assert(kTileCols == 4, "ByCols covers 1..4 columns");
  if (CpuHasAvx512Vnni() && !std::getenv("UAII_NO_AVX512")) {
    const TileFn t = avx512_tiles::Tile(type);
    return t != nullptr ? t : avx512_tiles::FloatTile(type);
  }
  const TileFn t = avx2_tiles::Tile(type);
  return t != nullptr ? t : avx2_tiles::FloatTile(type);
#else
  (void)type;
  return nullptr;
#endif
}

}  // namespace uaii::kernels
