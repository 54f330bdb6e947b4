// Activation quantizers: the AVX2 Q8_0 path gives the bytes of the reference formula
// (ggml's quantize_row_q8_0_ref: d = amax / 127, q = roundf(x / d), half away from
// zero), including exact .5 ties, zero blocks and outliers.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "formats/fp16.h"
#include "formats/quant_blocks.h"
#include "kernels/quantize_act.h"

namespace q = uaii::quant;

TEST_CASE("quantize: Q8_0 rows equal the reference formula byte for byte", "[quantize]") {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t n = 32 * 64;
  std::vector<float> x(n);
  for (auto& v : x) v = normal(rng);
  for (int j = 0; j < 32; ++j) x[32 + j] = 0.0f;                          // a zero block
  for (int j = 0; j < 32; ++j) x[64 + j] = 0.5f * static_cast<float>(j - 16);  // ties: d = 8/127 ...
  for (int j = 0; j < 32; ++j) x[96 + j] = static_cast<float>(j % 2 ? 127 - j : -127 + j);  // d = 1: exact ints
  for (int j = 0; j < 32; ++j) x[128 + j] = (j == 0 ? 127.0f : 0.5f + static_cast<float>(j));  // x * id hits .5
  x[200] = 1e4f;                                                            // an outlier
  std::vector<q::BlockQ8_0> y(n / 32);
  uaii::kernels::QuantizeRowQ8_0(x.data(), y.data(), n);
  for (int64_t b = 0; b < n / 32; ++b) {
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b * 32 + j]));
    const float d = amax / 127, id = d != 0.0f ? 1.0f / d : 0.0f;
    INFO("block " << b);
    CHECK(y[b].d == uaii::Fp32ToFp16(d));
    for (int j = 0; j < 32; ++j) CHECK(static_cast<int>(y[b].qs[j]) == static_cast<int>(std::roundf(x[b * 32 + j] * id)));
  }
}

TEST_CASE("quantize: f16 rows equal Fp32ToFp16 for every kind of float", "[quantize]") {
  std::vector<float> x;
  // A stride through all 2^32 bit patterns (normals, subnormals, halves' overflow and
  // underflow edges, infinities, NaNs with payloads), plus exact ties.
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 65537) {
    const uint32_t u = static_cast<uint32_t>(b);
    float f;
    std::memcpy(&f, &u, 4);
    x.push_back(f);
  }
  for (float v : {65504.0f, 65519.99f, 65520.0f, 65536.0f, 5.9604645e-08f, 2.9802322e-08f, 1.0009765625f, -0.0f})
    x.push_back(v);
  while (x.size() % 8 != 3) x.push_back(0.5f);
  std::vector<uint16_t> y(x.size());
  uaii::kernels::ConvertRowF16(x.data(), y.data(), static_cast<int64_t>(x.size()));
  size_t bad = 0;
  for (size_t i = 0; i < x.size(); ++i) bad += y[i] != uaii::Fp32ToFp16(x[i]);
  CHECK(bad == 0);
}
