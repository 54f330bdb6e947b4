#include "kernels/dispatch.h"

#include <cstdlib>
#include <string>

#include "util/str_cat.h"

namespace uaii::kernels {

#if defined(__x86_64__) && defined(__GNUC__)
#define UAII_DISPATCH_X86 1
// The register tiles of gemm_avx2.cpp / gemm_avx512.cpp (gemm_tile_body.inc built
// per instruction set; TileAvx2() there picks between them by CPU, this unit picks
// by requested level).
namespace avx2_tiles {
TileFn Tile(TensorType type);
TileFn FloatTile(TensorType type);  // gemm_float_avx2.cpp: F32, F16, BF16
}
namespace avx512_tiles {
TileFn Tile(TensorType type);
TileFn FloatTile(TensorType type);  // gemm_float_avx512.cpp: F32, F16, BF16
}
#endif

namespace {

CpuFeatures Detect() {
  CpuFeatures f;
#ifdef UAII_DISPATCH_X86
  __builtin_cpu_init();
  f.sse42 = __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("ssse3");
  f.avx2 = f.sse42 && CpuHasAvx2();
  f.avx512 = f.avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni");
  f.avx512bf16 = f.avx512 && __builtin_cpu_supports("avx512bf16");
#elif defined(__aarch64__)
  f.neon = true;
#endif
  return f;
}

// UAII_KERNELS, read once: nullopt when unset or empty; `bad` holds an unknown value.
struct EnvChoice {
  std::optional<IsaLevel> level;
  std::string bad;
};
const EnvChoice& Env() {
  static const EnvChoice env = [] {
    EnvChoice e;
    const char* v = std::getenv("UAII_KERNELS");
    if (v == nullptr || *v == '\0') return e;
    e.level = ParseIsaLevel(v);
    if (!e.level) e.bad = v;
    return e;
  }();
  return env;
}

std::string_view Needs(IsaLevel level) {
  switch (level) {
    case IsaLevel::kScalar: return "nothing";
    case IsaLevel::kSse42: return "SSE4.2 + SSSE3";
    case IsaLevel::kAvx2: return "AVX2 + FMA + F16C";
    case IsaLevel::kAvx512: return "AVX-512 F + VL + BW + VNNI";
    case IsaLevel::kNeon: return "aarch64 NEON";
  }
  return "?";
}

}  // namespace

const CpuFeatures& Cpu() {
  static const CpuFeatures features = Detect();
  return features;
}

bool CpuSupports(IsaLevel level) {
  const CpuFeatures& f = Cpu();
  switch (level) {
    case IsaLevel::kScalar: return true;
    case IsaLevel::kSse42: return f.sse42;
    case IsaLevel::kAvx2: return f.avx2;
    case IsaLevel::kAvx512: return f.avx512;
    case IsaLevel::kNeon: return f.neon;
  }
  return false;
}

IsaLevel BestIsaLevel() {
  for (IsaLevel l : {IsaLevel::kNeon, IsaLevel::kAvx512, IsaLevel::kAvx2, IsaLevel::kSse42})
    if (CpuSupports(l)) return l;
  return IsaLevel::kScalar;
}

std::string_view IsaLevelName(IsaLevel level) {
  switch (level) {
    case IsaLevel::kScalar: return "scalar";
    case IsaLevel::kSse42: return "sse42";
    case IsaLevel::kAvx2: return "avx2";
    case IsaLevel::kAvx512: return "avx512";
    case IsaLevel::kNeon: return "neon";
  }
  return "?";
}

std::optional<IsaLevel> ParseIsaLevel(std::string_view name) {
  for (IsaLevel l : {IsaLevel::kScalar, IsaLevel::kSse42, IsaLevel::kAvx2, IsaLevel::kAvx512,
                     IsaLevel::kNeon})
    if (name == IsaLevelName(l)) return l;
  return std::nullopt;
}

KernelChoice KernelsAt(TensorType type, IsaLevel level) {
  KernelChoice k;
  k.level = level;
  k.dot = VecDotRef(type);
  if (k.dot == nullptr) return k;
  // Row kernels, lowest level first, each overriding the one below when it has the type.
  auto take = [&](VecDotFn fn) { if (fn != nullptr) k.dot = fn; };
  switch (level) {
    case IsaLevel::kScalar:
      break;
    case IsaLevel::kNeon:
      take(VecDotNeon(type));
      k.tile = TileNeon(type);
      break;
    case IsaLevel::kAvx512:
    case IsaLevel::kAvx2:
    case IsaLevel::kSse42:
      take(VecDotSse42(type));
      if (level == IsaLevel::kSse42) break;
      take(VecDotAvx2(type));
      if (level == IsaLevel::kAvx512) take(VecDotAvx512(type));
#ifdef UAII_DISPATCH_X86
      k.tile = level == IsaLevel::kAvx512 ? avx512_tiles::Tile(type) : avx2_tiles::Tile(type);
      if (k.tile == nullptr)
        k.tile = level == IsaLevel::kAvx512 ? avx512_tiles::FloatTile(type) : avx2_tiles::FloatTile(type);
#endif
      break;
  }
  return k;
}

absl::StatusOr<KernelChoice> ChooseKernels(TensorType type, KernelImpl impl) {
  IsaLevel level;
  switch (impl) {
    case KernelImpl::kScalar: level = IsaLevel::kScalar; break;
    case KernelImpl::kSse42: level = IsaLevel::kSse42; break;
    case KernelImpl::kAvx2: level = IsaLevel::kAvx2; break;
    case KernelImpl::kAvx512: level = IsaLevel::kAvx512; break;
    case KernelImpl::kNeon: level = IsaLevel::kNeon; break;
    case KernelImpl::kAuto:
    default: {
      const EnvChoice& env = Env();
      if (!env.bad.empty()) {
        return absl::InvalidArgumentError(StrCat("matmul: UAII_KERNELS=", env.bad,
                                                 " is not one of scalar|sse42|avx2|avx512|neon"));
      }
      if (env.level) {
        level = *env.level;
      } else {
        level = BestIsaLevel();
        if (level == IsaLevel::kAvx512 && std::getenv("UAII_NO_AVX512") != nullptr) level = IsaLevel::kAvx2;
      }
      break;
    }
  }
  if (!CpuSupports(level)) {
    return absl::FailedPreconditionError(StrCat("matmul: ", IsaLevelName(level),
                                                " kernels requested on a CPU without ", Needs(level)));
  }
  return KernelsAt(type, level);
}

}  // namespace uaii::kernels
