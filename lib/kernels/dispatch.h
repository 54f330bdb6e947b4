// Run-time choice of the dot-product kernels: CPU features are detected once, and
// for a weight type and an instruction-set level this unit returns the row kernel
// (vec_dot.h) and the register tile (gemm_tile.h) that MatMul runs.
//
// Levels, lowest first (each falls back to the next lower one for a type it has no
// kernel for; the scalar reference covers every type):
//   scalar  vec_dot_ref.cpp                         any CPU
//   sse42   vec_dot_sse42.cpp (32-block types, F16)  x86-64-v2: SSE4.2 + SSSE3
//   avx2    vec_dot_avx2.cpp + gemm_avx2.cpp tiles   AVX2 + FMA + F16C
//   avx512  vec_dot_avx512.cpp (BF16 rows) + gemm_avx512.cpp tiles
//                                                    AVX-512 F + VL + BW + VNNI
//   neon    vec_dot_neon.cpp + gemm_neon.cpp tiles    aarch64 (Advanced SIMD)
// Every level is bit-identical to the scalar reference (same f32 operations in the
// same order per output element), so the choice changes speed, never results.
#pragma once
#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "formats/tensor_type.h"
#include "kernels/gemm_tile.h"
#include "kernels/matmul.h"
#include "kernels/vec_dot.h"

namespace uaii::kernels {

enum class IsaLevel { kScalar, kSse42, kAvx2, kAvx512, kNeon };

struct CpuFeatures {
  bool sse42 = false;       // SSE4.2 + SSSE3 (x86-64-v2)
  bool avx2 = false;        // AVX2 + FMA + F16C
  bool avx512 = false;      // AVX-512 F + VL + BW + VNNI (what the AVX-512 tiles use)
  bool avx512bf16 = false;  // reported only: vdpbf16ps is not used (vec_dot_avx512.cpp)
  bool neon = false;        // aarch64 Advanced SIMD
};

// Detected on first use (__builtin_cpu_supports on x86; NEON is architectural on aarch64).
const CpuFeatures& Cpu();
bool CpuSupports(IsaLevel level);
// The highest level this CPU supports.
IsaLevel BestIsaLevel();
// "scalar", "sse42", "avx2", "avx512", "neon"; ParseIsaLevel is its inverse.
std::string_view IsaLevelName(IsaLevel level);
std::optional<IsaLevel> ParseIsaLevel(std::string_view name);

struct KernelChoice {
  IsaLevel level = IsaLevel::kScalar;
  VecDotFn dot = nullptr;   // never null for a type with a reference kernel
  TileFn tile = nullptr;    // null when the level has no tile for the type
};

// The kernels of `level` for `type` (row kernel falls back level by level down to the
// reference). Requires CpuSupports(level); dot is null only for a type without kernel.
KernelChoice KernelsAt(TensorType type, IsaLevel level);

// MatMul's choice. kAuto: the level named by the environment variable UAII_KERNELS
// (scalar|sse42|avx2|avx512|neon, read once; for benchmarks), else BestIsaLevel()
// capped at avx2 when UAII_NO_AVX512 is set. Other values force their level.
// Errors: FailedPrecondition when the CPU lacks the level (naming it),
// InvalidArgument for an unknown UAII_KERNELS value.
absl::StatusOr<KernelChoice> ChooseKernels(TensorType type, KernelImpl impl);

// Per-level row kernels; nullptr when not compiled for this architecture or no kernel
// for the type. Callers check CpuSupports() first.
VecDotFn VecDotSse42(TensorType type);
VecDotFn VecDotAvx512(TensorType type);
VecDotFn VecDotNeon(TensorType type);
// NEON register tiles (gemm_neon.cpp); nullptr off aarch64 or for a type without one.
TileFn TileNeon(TensorType type);

}  // namespace uaii::kernels
