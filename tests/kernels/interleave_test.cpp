// Interleaved weights (kernels/interleave.h): the repack is a lossless permutation,
// and MatMul on the interleaved layout (AVX2 and AVX-512 VNNI builds) equals the
// scalar reference on the row-major matrix bit for bit, for every batch, row count
// around the 16-row groups, row length, thread count and misaligned pointers.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "formats/fp16.h"
#include "formats/tensor_type.h"
#include "kernels/dispatch.h"
#include "kernels/interleave.h"
#include "kernels/matmul.h"
#include "kernels/vec_dot.h"

using uaii::KernelImpl;
using uaii::TensorType;
using uaii::kernels::InterleaveIsa;

namespace {

const TensorType kTypes[] = {TensorType::Q4_0, TensorType::Q5_0, TensorType::Q8_0, TensorType::Q4_K,
                             TensorType::Q6_K};

int BlockElems(TensorType t) { return t == TensorType::Q4_K || t == TensorType::Q6_K ? 256 : 32; }
// Byte offsets of a block's f16 scales.
std::vector<int> HalfOffsets(TensorType t) {
  if (t == TensorType::Q4_K) return {0, 2};
  if (t == TensorType::Q6_K) return {208};
  return {0};
}

int BlockBytes(TensorType t) { return static_cast<int>(uaii::FindTensorType(static_cast<uint32_t>(t))->type_size); }

// Random blocks (every bit pattern of the quants) with f16 scales ~ N(0, 0.05).
std::vector<uint8_t> RandomMatrix(TensorType t, int64_t out, int64_t in, std::mt19937& rng) {
  const int64_t blocks = out * in / BlockElems(t);
  std::vector<uint8_t> w(static_cast<size_t>(blocks * BlockBytes(t)));
  std::uniform_int_distribution<int> byte(0, 255);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (auto& b : w) b = static_cast<uint8_t>(byte(rng));
  for (int64_t b = 0; b < blocks; ++b)
    for (int off : HalfOffsets(t)) {
      const uint16_t h = uaii::Fp32ToFp16(0.05f * normal(rng));
      std::memcpy(w.data() + b * BlockBytes(t) + off, &h, 2);
    }
  return w;
}

std::vector<float> RandomActs(int64_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = normal(rng);
  if (n >= 64) x[5] = 40.0f;  // an outlier block
  if (n >= 128) std::fill(x.begin() + 64, x.begin() + 96, 0.0f);  // an all-zero block
  return x;
}

std::vector<InterleaveIsa> Isas() {
  using uaii::kernels::IsaLevel;
  std::vector<InterleaveIsa> isas;
  if (uaii::kernels::CpuSupports(IsaLevel::kAvx2)) isas.push_back(InterleaveIsa::kAvx2);
  if (uaii::kernels::CpuSupports(IsaLevel::kAvx512)) isas.push_back(InterleaveIsa::kAvx512);
  return isas;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
}

}  // namespace

TEST_CASE("interleave: the repack is a permutation that each row can be read back from", "[interleave]") {
  std::mt19937 rng(7);
  for (TensorType t : kTypes) {
    for (int64_t out : {1, 15, 16, 17, 33, 48}) {
      const int64_t in = BlockElems(t) == 256 ? 512 : 96;
      const auto w = RandomMatrix(t, out, in, rng);
      std::vector<uint8_t> packed(w.size());
      REQUIRE(uaii::kernels::RepackInterleaved(t, w.data(), out, in, packed.data()).ok());
      auto in_place = w;
      REQUIRE(uaii::kernels::RepackInterleavedInPlace(t, in_place.data(), out, in).ok());
      CHECK(in_place == packed);
      auto sorted_a = w, sorted_b = packed;
      if (t == TensorType::Q4_0) {  // Q8_0 flips bytes, the others reorder bits
        std::sort(sorted_a.begin(), sorted_a.end());
        std::sort(sorted_b.begin(), sorted_b.end());
        CHECK(sorted_a == sorted_b);
      }
      const int64_t row_bytes = in / BlockElems(t) * BlockBytes(t);
      std::vector<uint8_t> row(static_cast<size_t>(row_bytes));
      for (int64_t r = 0; r < out; ++r) {
        uaii::kernels::InterleavedRowToBlocks(t, packed.data(), out, in, r, row.data());
        INFO(uaii::TensorTypeName(static_cast<uint32_t>(t)) << " out=" << out << " row=" << r);
        REQUIRE(std::memcmp(row.data(), w.data() + r * row_bytes, static_cast<size_t>(row_bytes)) == 0);
      }
      // Embedding lookups on the interleaved layout dequantize the original rows.
      std::vector<int32_t> ids = {0, static_cast<int32_t>(out - 1)};
      std::vector<float> a(2 * in), b(2 * in);
      REQUIRE(uaii::GetRows(t, w.data(), out, in, ids.data(), 2, a.data()).ok());
      REQUIRE(uaii::kernels::GetRowsInterleaved(t, packed.data(), out, in, ids.data(), 2, b.data()).ok());
      CHECK(SameBits(a, b));
    }
  }
}

TEST_CASE("interleave: matmul equals the scalar reference bit for bit", "[interleave]") {
  const auto isas = Isas();
  if (isas.empty()) {
    WARN("SKIP: no interleaved group kernels on this CPU (they need AVX2 + FMA + F16C)");
    return;
  }
  std::mt19937 rng(11);
  uaii::ThreadPool pool2(2), pool3(3);
  uaii::ThreadPool* pools[] = {nullptr, &pool2, &pool3};
  for (TensorType t : kTypes) {
    for (int64_t in : {32, 64, 96, 256, 512, 2816}) {
      if (in % BlockElems(t) != 0) continue;
      for (int64_t out : {1, 15, 16, 17, 31, 32, 47, 70}) {
        const int64_t batch = 17;
        const auto w = RandomMatrix(t, out, in, rng);
        // Misaligned copies of both operands.
        std::vector<uint8_t> packed(w.size() + 1);
        REQUIRE(uaii::kernels::RepackInterleaved(t, w.data(), out, in, packed.data() + 1).ok());
        const auto xs = RandomActs(in * batch + 1, rng);
        const float* x = xs.data() + 1;
        for (int64_t b : {int64_t{1}, int64_t{4}, int64_t{5}, int64_t{8}, batch}) {
          std::vector<float> ref(static_cast<size_t>(out * b));
          REQUIRE(uaii::MatMul(t, w.data(), out, in, x, b, ref.data(), nullptr, KernelImpl::kScalar).ok());
          for (InterleaveIsa isa : isas)
            for (uaii::ThreadPool* pool : pools) {
              std::vector<float> y(static_cast<size_t>(out * b), -7.0f);
              const auto st = uaii::kernels::MatMulInterleaved(t, packed.data() + 1, out, in, x, b, y.data(), pool, isa);
              INFO(uaii::TensorTypeName(static_cast<uint32_t>(t)) << " in=" << in << " out=" << out << " batch=" << b
                                                                << " isa=" << static_cast<int>(isa)
                                                                << " threads=" << (pool ? pool->num_threads() : 1));
              REQUIRE(st.ok());
              CHECK(SameBits(ref, y));
            }
        }
      }
    }
  }
}

// The K-quant kernels split each 32-element sub-block sum of the Q8_K activation into
// bytes (ActK: 128 * bs_hi + bs_lo, bs_hi in [-32, 31]); activations whose quants all
// sit at an end of the int8 range reach the sums' ends (-4096: every quant -128; near
// +4064: every quant 127).
TEST_CASE("interleave: K-quants at the activation sums' extremes", "[interleave]") {
  const auto isas = Isas();
  if (isas.empty()) {
    WARN("SKIP: no interleaved group kernels on this CPU (they need AVX2 + FMA + F16C)");
    return;
  }
  std::mt19937 rng(5);
  const int64_t in = 512, out = 33;
  std::vector<std::vector<float>> rows;
  rows.push_back(std::vector<float>(in, -1.0f));  // quants all -128
  rows.push_back(std::vector<float>(in, 1.0f));   // all -128 too (Q8_K scales by -128 / max)
  std::vector<float> high(in, 1.0f);
  for (int64_t i = 0; i < in; i += 256) high[i] = -1.0f;  // each super-block's max is negative: the rest quantize to 127
  rows.push_back(high);
  std::vector<float> alternating(in);
  for (int64_t i = 0; i < in; ++i) alternating[i] = (i / 32) % 2 ? 3.0f : -3.0f;
  rows.push_back(alternating);
  std::vector<float> x;
  for (const auto& r : rows) x.insert(x.end(), r.begin(), r.end());
  const int64_t batch = static_cast<int64_t>(rows.size());
  for (TensorType t : {TensorType::Q4_K, TensorType::Q6_K}) {
    const auto w = RandomMatrix(t, out, in, rng);
    std::vector<uint8_t> packed(w.size());
    REQUIRE(uaii::kernels::RepackInterleaved(t, w.data(), out, in, packed.data()).ok());
    for (int64_t b : {int64_t{1}, batch}) {
      for (int64_t r0 = 0; r0 + b <= batch; r0 += b) {
        std::vector<float> ref(static_cast<size_t>(out * b)), y(ref.size());
        REQUIRE(uaii::MatMul(t, w.data(), out, in, x.data() + r0 * in, b, ref.data(), nullptr, KernelImpl::kScalar).ok());
        for (InterleaveIsa isa : isas) {
          INFO(uaii::TensorTypeName(static_cast<uint32_t>(t)) << " rows " << r0 << ".." << r0 + b
                                                            << " isa=" << static_cast<int>(isa));
          REQUIRE(uaii::kernels::MatMulInterleaved(t, packed.data(), out, in, x.data() + r0 * in, b, y.data(), nullptr,
                                                   isa).ok());
          CHECK(SameBits(ref, y));
        }
      }
    }
  }
}

TEST_CASE("interleave: bad shapes and types are errors naming the cause", "[interleave]") {
  std::vector<uint8_t> w(64 * 34), dst(w.size());
  auto st = uaii::kernels::RepackInterleaved(TensorType::Q5_K, w.data(), 1, 256, dst.data());
  CHECK(st.code() == absl::StatusCode::kUnimplemented);
  st = uaii::kernels::RepackInterleaved(TensorType::Q8_0, w.data(), 2, 48, dst.data());
  CHECK(st.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(st.message()).find("48") != std::string::npos);
  int32_t bad = 5;
  std::vector<float> out(32);
  st = uaii::kernels::GetRowsInterleaved(TensorType::Q8_0, w.data(), 2, 32, &bad, 1, out.data());
  CHECK(st.code() == absl::StatusCode::kOutOfRange);
}
