// Tensor type traits and dequantization. Every codec is compared bit for bit with the
// gguf package's numpy reference on seeded random blocks written by
// tests/fixtures/make_dequant_fixtures.py (Q8_K: the script's own numpy reference).
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "formats/fp16.h"
#include "formats/tensor_type.h"

using uaii::TensorType;

namespace {

std::string FixturePath(const std::string& name) {
  const char* dir = std::getenv("UAII_FIXTURE_DIR");
  return std::string(dir ? dir : UAII_FIXTURE_DIR) + "/dequant/" + name;
}

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  INFO("missing fixture " << path
       << " (run tests/fixtures/make_dequant_fixtures.py <build>/fixtures)");
  REQUIRE(in.good());
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// Bit-exact except that any NaN matches any NaN (numpy and hardware conversions may
// differ in NaN payload quieting).
void CheckSameBits(const float* got, const float* want, size_t n, const std::string& what) {
  size_t mismatches = 0;
  for (size_t i = 0; i < n; ++i) {
    if (std::isnan(got[i]) && std::isnan(want[i])) continue;
    if (std::bit_cast<uint32_t>(got[i]) != std::bit_cast<uint32_t>(want[i])) {
      if (mismatches++ < 5) {
        UNSCOPED_INFO(what << "[" << i << "]: got " << got[i] << " want " << want[i]);
      }
    }
  }
  CHECK(mismatches == 0);
}

void CheckAgainstFixture(TensorType type) {
  const auto* t = uaii::FindTensorType(static_cast<uint32_t>(type));
  REQUIRE(t != nullptr);
  REQUIRE(t->dequantize != nullptr);
  const std::string name(t->name);
  const std::vector<uint8_t> raw = ReadFile(FixturePath(name + ".bin"));
  const std::vector<uint8_t> want_bytes = ReadFile(FixturePath(name + ".f32"));
  REQUIRE(raw.size() % t->type_size == 0);
  const int64_t n_blocks = static_cast<int64_t>(raw.size()) / t->type_size;
  const size_t n = static_cast<size_t>(n_blocks * t->block_size);
  REQUIRE(want_bytes.size() == n * sizeof(float));
  std::vector<float> want(n);
  std::memcpy(want.data(), want_bytes.data(), want_bytes.size());

  // Aligned source.
  std::vector<float> got(n, -1.0f);
  t->dequantize(raw.data(), got.data(), n_blocks);
  CheckSameBits(got.data(), want.data(), n, name);

  // Misaligned source (blocks may start at any byte).
  std::vector<uint8_t> shifted(raw.size() + 1);
  std::memcpy(shifted.data() + 1, raw.data(), raw.size());
  std::vector<float> got2(n, -1.0f);
  t->dequantize(shifted.data() + 1, got2.data(), n_blocks);
  CheckSameBits(got2.data(), want.data(), n, name + " (misaligned)");
}

}  // namespace

TEST_CASE("dequant: bit-exact with gguf.quants on random blocks", "[dequant]") {
  for (TensorType type : {TensorType::F32, TensorType::F16, TensorType::BF16,
                          TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0,
                          TensorType::Q5_1, TensorType::Q8_0, TensorType::Q2_K,
                          TensorType::Q3_K, TensorType::Q4_K, TensorType::Q5_K,
                          TensorType::Q6_K, TensorType::Q8_K}) {
    SECTION(std::string(uaii::TensorTypeName(static_cast<uint32_t>(type)))) {
      CheckAgainstFixture(type);
    }
  }
}

TEST_CASE("tensor types: table rows match ggml's sizes", "[dequant]") {
  struct Row { TensorType type; const char* name; int64_t block, bytes; };
  const Row rows[] = {
      {TensorType::F32, "F32", 1, 4},       {TensorType::F16, "F16", 1, 2},
      {TensorType::BF16, "BF16", 1, 2},     {TensorType::Q4_0, "Q4_0", 32, 18},
      {TensorType::Q4_1, "Q4_1", 32, 20},   {TensorType::Q5_0, "Q5_0", 32, 22},
      {TensorType::Q5_1, "Q5_1", 32, 24},   {TensorType::Q8_0, "Q8_0", 32, 34},
      {TensorType::Q2_K, "Q2_K", 256, 84},  {TensorType::Q3_K, "Q3_K", 256, 110},
      {TensorType::Q4_K, "Q4_K", 256, 144}, {TensorType::Q5_K, "Q5_K", 256, 176},
      {TensorType::Q6_K, "Q6_K", 256, 210}, {TensorType::Q8_K, "Q8_K", 256, 292},
      {TensorType::I8, "I8", 1, 1},         {TensorType::I16, "I16", 1, 2},
      {TensorType::I32, "I32", 1, 4},       {TensorType::I64, "I64", 1, 8},
      {TensorType::F64, "F64", 1, 8},       {TensorType::IQ2_XXS, "IQ2_XXS", 256, 66},
      {TensorType::TQ1_0, "TQ1_0", 256, 54}, {TensorType::MXFP4, "MXFP4", 32, 17},
  };
  for (const Row& r : rows) {
    const auto* t = uaii::FindTensorType(static_cast<uint32_t>(r.type));
    REQUIRE(t != nullptr);
    CHECK(t->type == r.type);
    CHECK(t->name == r.name);
    CHECK(t->block_size == r.block);
    CHECK(t->type_size == r.bytes);
  }
  CHECK(uaii::FindTensorType(4) == nullptr);   // Q4_2, removed from ggml
  CHECK(uaii::FindTensorType(31) == nullptr);  // Q4_0_4_4, removed
  CHECK(uaii::FindTensorType(99) == nullptr);
  CHECK(uaii::FindTensorType(0xFFFFFFFFu) == nullptr);
  CHECK(uaii::TensorTypeName(12) == "Q4_K");
  CHECK(uaii::TensorTypeName(99) == "type#99");
  CHECK(uaii::TensorTypeName(99).data() == uaii::TensorTypeName(99).data());  // stable
}

TEST_CASE("tensor types: unsupported types are named in the error", "[dequant]") {
  CHECK(uaii::CheckSupported(12, "blk.0.attn_q.weight").ok());
  CHECK(uaii::CheckSupported(0, "output_norm.weight").ok());
  struct Case { uint32_t id; const char* msg; };
  const Case cases[] = {
      {16, "unsupported tensor type IQ2_XXS in blk.0.ffn_up.weight"},
      {34, "unsupported tensor type TQ1_0 in blk.0.ffn_up.weight"},
      {39, "unsupported tensor type MXFP4 in blk.0.ffn_up.weight"},
      {99, "unsupported tensor type type#99 in blk.0.ffn_up.weight"},
  };
  for (const Case& c : cases) {
    const absl::Status s = uaii::CheckSupported(c.id, "blk.0.ffn_up.weight");
    CHECK_FALSE(s.ok());
    CHECK(s.message() == c.msg);
  }
  CHECK(uaii::CheckSupported(99, "x").code() == absl::StatusCode::kInvalidArgument);
  CHECK(uaii::CheckSupported(16, "x").code() == absl::StatusCode::kUnimplemented);
}

TEST_CASE("tensor types: RowBytes rejects partial blocks and overflow", "[dequant]") {
  const auto& q4k = *uaii::FindTensorType(static_cast<uint32_t>(TensorType::Q4_K));
  const auto& f32 = *uaii::FindTensorType(static_cast<uint32_t>(TensorType::F32));
  const auto& q8 = *uaii::FindTensorType(static_cast<uint32_t>(TensorType::Q8_0));
  CHECK(uaii::RowBytes(q4k, 0) == uint64_t{0});
  CHECK(uaii::RowBytes(q4k, 256) == uint64_t{144});
  CHECK(uaii::RowBytes(q4k, 2048) == uint64_t{8 * 144});
  CHECK_FALSE(uaii::RowBytes(q4k, 255).has_value());
  CHECK_FALSE(uaii::RowBytes(q4k, 257).has_value());
  CHECK_FALSE(uaii::RowBytes(q8, 33).has_value());
  CHECK(uaii::RowBytes(f32, 7) == uint64_t{28});
  // 2^62 elements of 4 bytes overflow 64 bits; 2^61 do not.
  CHECK_FALSE(uaii::RowBytes(f32, uint64_t{1} << 62).has_value());
  CHECK(uaii::RowBytes(f32, uint64_t{1} << 61) == (uint64_t{1} << 63));
  CHECK_FALSE(uaii::RowBytes(f32, std::numeric_limits<uint64_t>::max()).has_value());
  CHECK_FALSE(uaii::RowBytes(q8, (std::numeric_limits<uint64_t>::max() / 32) * 32).has_value());
}

TEST_CASE("fp16: conversions round-trip and round to nearest even", "[dequant]") {
  // Every finite half survives half -> float -> half.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = uaii::Fp16ToFp32(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    REQUIRE(uaii::Fp32ToFp16(f) == h);
  }
  // Halfway cases between neighbouring halves go to the even one; just above rounds up.
  for (uint32_t h = 0; h < 0x7BFF; ++h) {
    const float lo = uaii::Fp16ToFp32(static_cast<uint16_t>(h));
    const float hi = uaii::Fp16ToFp32(static_cast<uint16_t>(h + 1));
    const float mid = (lo + hi) / 2;  // exact in f32
    const uint16_t want = (h & 1) ? static_cast<uint16_t>(h + 1) : static_cast<uint16_t>(h);
    REQUIRE(uaii::Fp32ToFp16(mid) == want);
    REQUIRE(uaii::Fp32ToFp16(std::nextafter(mid, hi)) == h + 1);
    REQUIRE(uaii::Fp32ToFp16(std::nextafter(mid, lo)) == h);
  }
  CHECK(uaii::Fp32ToFp16(65520.0f) == 0x7C00);  // ties to even past the max: inf
  CHECK(uaii::Fp32ToFp16(1e10f) == 0x7C00);
  CHECK(uaii::Fp32ToFp16(-1e-10f) == 0x8000);
  CHECK(std::isnan(uaii::Fp16ToFp32(uaii::Fp32ToFp16(std::nanf("")))));
  CHECK(uaii::Fp32ToBf16(1.0f) == 0x3F80);
  CHECK(uaii::Fp32ToBf16(std::bit_cast<float>(0x3F808000u)) == 0x3F80);  // tie -> even
  CHECK(uaii::Fp32ToBf16(std::bit_cast<float>(0x3F818000u)) == 0x3F82);  // tie -> even
  CHECK(uaii::Bf16ToFp32(0x3F80) == 1.0f);
}
