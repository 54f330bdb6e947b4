// MatMul on packed weights: AVX2 vs scalar reference bit-exact, independence from
// batch / threads / alignment, and accuracy against f64 dot products of the
// dequantized weights.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "formats/fp16.h"
#include "formats/tensor_type.h"
#include "kernels/matmul.h"
#include "kernels/quantize_act.h"
#include "kernels/vec_dot.h"
#include "kernel_test_util.h"

using uaii::KernelImpl;
using uaii::TensorType;
using uaii::test::NameOf;
using uaii::test::RandomActs;
using uaii::test::RandomWeights;
using uaii::test::Run;
using uaii::test::SameBits;
using uaii::test::Traits;

namespace {

const auto& kTypes = uaii::test::kMatMulTypes;

std::vector<int64_t> Lengths(TensorType t) {
  if (Traits(t).block_size == 256) return {256, 512, 2816};
  if (Traits(t).block_size == 32) return {32, 64, 96, 256, 512, 2816};
  return {1, 3, 7, 31, 32, 33, 100, 256, 2816};
}

}  // namespace

TEST_CASE("matmul: AVX2 equals the scalar reference bit for bit", "[matmul]") {
  if (!uaii::kernels::CpuHasAvx2()) {
    WARN("SKIP: CPU without AVX2/FMA/F16C");
    return;
  }
  std::mt19937 rng(1234);
  for (TensorType t : kTypes) {
    for (int64_t in : Lengths(t)) {
      for (int64_t out : {1, 3, 7, 17, 33}) {
        const int64_t batch = 5;
        INFO(NameOf(t) << " in=" << in << " out=" << out);
        const auto w = RandomWeights(t, out, in, rng);
        const auto x = RandomActs(in * batch, rng);
        const auto ref = Run(t, w.data(), out, in, x.data(), batch, nullptr, KernelImpl::kScalar);
        const auto fast = Run(t, w.data(), out, in, x.data(), batch, nullptr, KernelImpl::kAvx2);
        CHECK(SameBits(ref, fast));
        for (float v : ref) REQUIRE(std::isfinite(v));
      }
    }
  }
}

// Register tiles (gemm_tile.h) cover 4 weight rows x 1..4 activation rows: every
// batch size 1..9 and row counts around the tile edges, with and without threads.
TEST_CASE("matmul: AVX2 tiles equal the scalar reference for every batch and row count", "[matmul]") {
  if (!uaii::kernels::CpuHasAvx2()) {
    WARN("SKIP: CPU without AVX2/FMA/F16C");
    return;
  }
  std::mt19937 rng(4321);
  uaii::ThreadPool pool3(3);
  for (TensorType t : kTypes) {
    const int64_t in = Traits(t).block_size == 256 ? 512 : Traits(t).block_size == 32 ? 160 : 67;
    for (int64_t out : {1, 4, 5, 8, 13, 70}) {
      for (int64_t batch = 1; batch <= 9; ++batch) {
        INFO(NameOf(t) << " out=" << out << " batch=" << batch);
        const auto w = RandomWeights(t, out, in, rng);
        const auto x = RandomActs(in * batch, rng);
        const auto ref = Run(t, w.data(), out, in, x.data(), batch, nullptr, KernelImpl::kScalar);
        CHECK(SameBits(ref, Run(t, w.data(), out, in, x.data(), batch, nullptr, KernelImpl::kAvx2)));
        CHECK(SameBits(ref, Run(t, w.data(), out, in, x.data(), batch, &pool3, KernelImpl::kAvx2)));
      }
    }
  }
}

TEST_CASE("matmul: results independent of batch, threads and alignment", "[matmul]") {
  std::mt19937 rng(99);
  uaii::ThreadPool pool2(2), pool4(4);
  for (TensorType t : kTypes) {
    for (KernelImpl impl : {KernelImpl::kAuto, KernelImpl::kScalar}) {
      const int64_t in = Traits(t).block_size == 256 ? 512 : 96, out = 33, batch = 5;
      INFO(NameOf(t) << (impl == KernelImpl::kScalar ? " scalar" : " auto"));
      const auto w = RandomWeights(t, out, in, rng);
      const auto x = RandomActs(in * batch, rng);
      const auto y1 = Run(t, w.data(), out, in, x.data(), batch, nullptr, impl);
      CHECK(SameBits(y1, Run(t, w.data(), out, in, x.data(), batch, &pool2, impl)));
      CHECK(SameBits(y1, Run(t, w.data(), out, in, x.data(), batch, &pool4, impl)));
      // Batch 1 (and 2), row by row, give the same numbers as batch 5.
      for (int64_t b = 0; b < batch; ++b) {
        const auto yb = Run(t, w.data(), out, in, x.data() + b * in, 1, &pool2, impl);
        CHECK(std::memcmp(yb.data(), y1.data() + b * out, out * 4) == 0);
      }
      const auto y2 = Run(t, w.data(), out, in, x.data() + 3 * in, 2, nullptr, impl);
      CHECK(std::memcmp(y2.data(), y1.data() + 3 * out, 2 * out * 4) == 0);
      // Weights and activations at odd addresses.
      std::vector<uint8_t> wmis(w.size() + 1);
      std::memcpy(wmis.data() + 1, w.data(), w.size());
      std::vector<float> xmis(x.size() + 1);
      std::memcpy(xmis.data() + 1, x.data(), x.size() * 4);
      CHECK(SameBits(y1, Run(t, wmis.data() + 1, out, in, xmis.data() + 1, batch, &pool2, impl)));
    }
  }
}

// Tolerance: the only approximation is the activation conversion. With ggml's
// formats, |x - x_q| <= d/2 per element (d = amax_block / 127 for Q8_0/Q8_1/Q8_K)
// plus the half rounding of d (relative 2^-11); f16 / bf16 round relatively by
// 2^-11 / 2^-8. So |y - y_exact| <= sum_i |w_i| * err_i + 1e-5 * sum_i |w_i x_i|
// (the last term covers f32 accumulation), with err_i = amax_block(i) * (0.5/127 +
// 2^-10) for the quantized formats.
TEST_CASE("matmul: scalar reference within tolerance of f64 dequantized dot", "[matmul]") {
  std::mt19937 rng(7);
  for (TensorType t : kTypes) {
    const auto& tr = Traits(t);
    const int64_t in = 2816, out = 7, batch = 2;
    INFO(NameOf(t));
    const auto w = RandomWeights(t, out, in, rng);
    const auto x = RandomActs(in * batch, rng);
    const auto y = Run(t, w.data(), out, in, x.data(), batch, nullptr, KernelImpl::kScalar);
    std::vector<float> wf(static_cast<size_t>(out * in));
    tr.dequantize(w.data(), wf.data(), out * in / tr.block_size);
    const int64_t qblock = tr.block_size == 256 ? 256 : 32;
    for (int64_t b = 0; b < batch; ++b) {
      const float* xb = x.data() + b * in;
      for (int64_t o = 0; o < out; ++o) {
        double exact = 0, bound = 0, mag = 0;
        for (int64_t i = 0; i < in; ++i) {
          const double wi = wf[o * in + i];
          exact += wi * xb[i];
          mag += std::fabs(wi * xb[i]);
          double err;
          if (t == TensorType::F32) {
            err = 0;
          } else if (t == TensorType::F16) {
            err = std::fabs(xb[i]) * std::ldexp(1.0, -11);
          } else if (t == TensorType::BF16) {
            err = std::fabs(xb[i]) * std::ldexp(1.0, -8);
          } else {
            double amax = 0;
            const int64_t b0 = i / qblock * qblock;
            for (int64_t j = b0; j < b0 + qblock; ++j) amax = std::max(amax, double(std::fabs(xb[j])));
            err = amax * (0.5 / 127 + std::ldexp(1.0, -10));
          }
          bound += std::fabs(wi) * err;
        }
        const double tol = bound + 1e-5 * mag;
        const double got = y[b * out + o];
        INFO("b=" << b << " o=" << o << " got=" << got << " exact=" << exact << " tol=" << tol);
        CHECK(std::fabs(got - exact) <= tol);
      }
    }
  }
}

TEST_CASE("matmul: activation quantizers follow ggml's reference", "[matmul]") {
  // Q8_0: d = amax/127 (as half), q = round half away from zero of x * (1/d).
  float x[32];
  for (int i = 0; i < 32; ++i) x[i] = (i - 15.5f) / 8.0f;
  x[3] = -5.0f;
  uaii::quant::BlockQ8_0 b0;
  uaii::kernels::QuantizeRowQ8_0(x, &b0, 32);
  CHECK(b0.qs[3] == -127);
  CHECK(b0.d == uaii::Fp32ToFp16(5.0f / 127));
  uaii::quant::BlockQ8_1 b1;
  uaii::kernels::QuantizeRowQ8_1(x, &b1, 32);
  int sum = 0;
  for (int i = 0; i < 32; ++i) sum += b1.qs[i];
  CHECK(b1.s == uaii::Fp32ToFp16(static_cast<float>(sum) * (5.0f / 127)));
  // Q8_K: iscale = -127 / max (max = -3 here), so x = -3 maps to -127 and d = 1/iscale.
  std::vector<float> xk(256);
  for (int i = 0; i < 256; ++i) xk[i] = std::sin(0.1f * i);
  xk[10] = -3.0f;
  uaii::quant::BlockQ8_K bk;
  uaii::kernels::QuantizeRowQ8_K(xk.data(), &bk, 256);
  CHECK(bk.qs[10] == -127);
  CHECK(bk.d == 1 / (-127.f / -3.0f));
  for (int j = 0; j < 16; ++j) {
    int s16 = 0;
    for (int l = 0; l < 16; ++l) s16 += bk.qs[16 * j + l];
    CHECK(bk.bsums[j] == s16);
  }
  // An all-zero block quantizes to zeros.
  std::fill(xk.begin(), xk.end(), 0.0f);
  uaii::kernels::QuantizeRowQ8_K(xk.data(), &bk, 256);
  CHECK(bk.d == 0.0f);
  CHECK(bk.bsums[3] == 0);
}

TEST_CASE("matmul: errors name the cause", "[matmul]") {
  float x[256] = {}, y[4];
  std::vector<uint8_t> w(4096);
  auto s = uaii::MatMul(TensorType::IQ2_XXS, w.data(), 1, 256, x, 1, y);
  CHECK(s.code() == absl::StatusCode::kUnimplemented);
  CHECK(s.message() == "matmul: no kernel for tensor type IQ2_XXS");
  s = uaii::MatMul(TensorType::Q4_K, w.data(), 1, 100, x, 1, y);
  CHECK(s.message() == "matmul: row length 100 is not a multiple of the Q4_K block size 256");
  CHECK(uaii::MatMul(TensorType::Q8_0, nullptr, 1, 32, x, 1, y).code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(uaii::MatMul(TensorType::Q8_0, w.data(), 0, 32, x, 1, y).ok());
}

TEST_CASE("get_rows: dequantizes the selected rows", "[matmul]") {
  std::mt19937 rng(5);
  for (TensorType t : {TensorType::F32, TensorType::F16, TensorType::Q8_0, TensorType::Q6_K,
                       TensorType::Q4_K, TensorType::Q5_0}) {
    const auto& tr = Traits(t);
    const int64_t rows = 9, cols = 512;
    const auto w = RandomWeights(t, rows, cols, rng);
    std::vector<float> all(static_cast<size_t>(rows * cols));
    tr.dequantize(w.data(), all.data(), rows * cols / tr.block_size);
    const int32_t ids[] = {8, 0, 3, 3};
    std::vector<float> got(4 * cols);
    REQUIRE(uaii::GetRows(t, w.data(), rows, cols, ids, 4, got.data()).ok());
    for (int i = 0; i < 4; ++i) {
      CHECK(std::memcmp(got.data() + i * cols, all.data() + ids[i] * cols, cols * 4) == 0);
    }
    std::vector<float> one(cols);
    REQUIRE(uaii::DequantizeRow(t, w.data() + 2 * (cols / tr.block_size) * tr.type_size, cols,
                                one.data()).ok());
    CHECK(std::memcmp(one.data(), all.data() + 2 * cols, cols * 4) == 0);
    const int32_t bad[] = {1, 9};
    const auto s = uaii::GetRows(t, w.data(), rows, cols, bad, 2, got.data());
    CHECK(s.code() == absl::StatusCode::kOutOfRange);
    CHECK(s.message() == "get_rows: row id 9 (index 1) outside [0, 9)");
  }
  std::vector<uint8_t> w(64);
  float out[32];
  const int32_t id = 0;
  CHECK(uaii::GetRows(TensorType::IQ2_XXS, w.data(), 1, 256, &id, 1, out).code() ==
        absl::StatusCode::kUnimplemented);
}

TEST_CASE("matmul: Q8_0 activations bit-exact with gguf.quants.quantize", "[matmul]") {
  const char* dir = std::getenv("UAII_FIXTURE_DIR");
  const std::string base = std::string(dir ? dir : UAII_FIXTURE_DIR) + "/kernels/";
  auto read = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    INFO("missing fixture " << path << " (run tests/fixtures/make_kernel_fixtures.py <build>/fixtures)");
    REQUIRE(in.good());
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
  };
  const auto xin = read(base + "q8_0_in.f32");
  const auto want = read(base + "q8_0_out.bin");
  const int64_t n = static_cast<int64_t>(xin.size() / 4);
  REQUIRE(want.size() == static_cast<size_t>(n / 32 * 34));
  std::vector<float> x(static_cast<size_t>(n));
  std::memcpy(x.data(), xin.data(), xin.size());
  std::vector<uaii::quant::BlockQ8_0> got(static_cast<size_t>(n / 32));
  uaii::kernels::QuantizeRowQ8_0(x.data(), got.data(), n);
  size_t bad = 0;
  for (size_t b = 0; b < got.size(); ++b) {
    if (std::memcmp(&got[b], want.data() + 34 * b, 34) != 0 && bad++ < 5) UNSCOPED_INFO("block " << b);
  }
  CHECK(bad == 0);
}
