// Random packed weights and activations for the kernel tests (shared by
// dispatch_test.cpp and the aarch64 build of scripts/test_neon.sh).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "formats/fp16.h"
#include "formats/tensor_type.h"
#include "kernels/matmul.h"
#include "kernels/thread_pool.h"

namespace uaii::test {

inline const TensorTypeTraits& Traits(TensorType t) {
  return *FindTensorType(static_cast<uint32_t>(t));
}
inline std::string NameOf(TensorType t) { return std::string(Traits(t).name); }

inline constexpr TensorType kMatMulTypes[] = {
    TensorType::F32,  TensorType::F16,  TensorType::BF16, TensorType::Q4_0, TensorType::Q4_1,
    TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0, TensorType::Q2_K, TensorType::Q3_K,
    TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K};

// Byte offsets of the f16 scale fields in one block (set to realistic magnitudes;
// random bytes there would give huge or NaN scales).
inline std::vector<int> ScaleOffsets(TensorType t) {
  switch (t) {
    case TensorType::Q4_0: case TensorType::Q5_0: case TensorType::Q8_0: return {0};
    case TensorType::Q4_1: case TensorType::Q5_1: return {0, 2};
    case TensorType::Q4_K: case TensorType::Q5_K: return {0, 2};
    case TensorType::Q6_K: return {208};
    case TensorType::Q2_K: return {80, 82};
    case TensorType::Q3_K: return {108};
    default: return {};
  }
}

// A packed [out x in] matrix: random bytes with half scales ~ N(0, 0.05), or
// N(0, scale) values for the float types.
inline std::vector<uint8_t> RandomWeights(TensorType t, int64_t out, int64_t in, std::mt19937& rng,
                                          float scale = 1.0f) {
  const auto& tr = Traits(t);
  const int64_t nblocks = out * in / tr.block_size;
  std::vector<uint8_t> w(static_cast<size_t>(nblocks * tr.type_size));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  if (t == TensorType::F32 || t == TensorType::F16 || t == TensorType::BF16) {
    for (int64_t i = 0; i < out * in; ++i) {
      const float v = scale * normal(rng);
      if (t == TensorType::F32) {
        std::memcpy(w.data() + 4 * i, &v, 4);
      } else {
        const uint16_t h = t == TensorType::F16 ? Fp32ToFp16(v) : Fp32ToBf16(v);
        std::memcpy(w.data() + 2 * i, &h, 2);
      }
    }
    return w;
  }
  std::uniform_int_distribution<int> byte(0, 255);
  for (auto& b : w) b = static_cast<uint8_t>(byte(rng));
  for (int64_t b = 0; b < nblocks; ++b) {
    for (int off : ScaleOffsets(t)) {
      const uint16_t h = Fp32ToFp16(0.05f * normal(rng));
      std::memcpy(w.data() + b * tr.type_size + off, &h, 2);
    }
  }
  return w;
}

// N(0, scale) activations with an outlier and an all-zero 256-block.
inline std::vector<float> RandomActs(int64_t n, std::mt19937& rng, float scale = 1.0f) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = scale * normal(rng);
  if (n >= 64) x[5] = 40.0f * scale;
  if (n >= 512) std::fill(x.begin() + 256, x.begin() + 512, 0.0f);
  return x;
}

// y = MatMul(W, x) at the given level, failing the test (with MatMul's message) on error.
inline std::vector<float> Run(TensorType t, const void* w, int64_t out, int64_t in, const float* x,
                              int64_t batch, ThreadPool* pool, KernelImpl impl) {
  std::vector<float> y(static_cast<size_t>(out * batch), -7.0f);
  const absl::Status s = MatMul(t, w, out, in, x, batch, y.data(), pool, impl);
  INFO(std::string(s.message()));
  REQUIRE(s.ok());
  return y;
}

inline bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
}

// Row lengths that hit every tail: whole 32-steps, partial ones, single blocks.
inline std::vector<int64_t> AwkwardLengths(TensorType t) {
  if (Traits(t).block_size == 256) return {256, 512, 768, 2816};
  if (Traits(t).block_size == 32) return {32, 64, 96, 160, 256, 2816};
  return {1, 3, 7, 31, 32, 33, 63, 100, 256, 2816};
}

}  // namespace uaii::test
