// The register tiles (gemm_tile_body.inc) built for AVX-512VL + BW + VNNI: 32 vector
// registers (a 4x4 tile fits without spilling) and vpdpbusd / vpdpwssd for the integer dots. Chosen
// at run time by TileAvx2() when the CPU has these extensions.
#include <cstring>
#include <type_traits>

#include "formats/fp16.h"
#include "formats/quant_blocks.h"
#include "kernels/gemm_tile.h"
#include "kernels/kquant_scales.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define UAII_TILE_TARGET \
  __attribute__((target("avx2,fma,f16c,avx512f,avx512vl,avx512bw,avx512vnni")))
#define UAII_TILE_VNNI 1

namespace uaii::kernels::avx512_tiles {
#include "kernels/gemm_tile_body.inc"
}  // namespace uaii::kernels::avx512_tiles
#endif
