#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <vector>

#include "formats/fp16.h"
#include "kernels/dispatch.h"
#include "kernels/dot_f16_queries.h"
#include "kernels/vec_dot.h"

namespace {

bool SameBits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

std::vector<uint16_t> RandomF16(size_t n, std::mt19937& rng, float scale) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<uint16_t> v(n);
  for (auto& x : v) x = uaii::Fp32ToFp16(d(rng));
  return v;
}

}  // namespace

// Attention's grouped dots: every query's result equals the dispatched F16 row
// kernel's bit for bit (and the scalar reference's), for group sizes around the
// 4-query passes and lengths with and without a tail past the 32-element steps.
TEST_CASE("dot_f16_queries: each query equals the F16 row dot bit for bit", "[dot_f16_queries]") {
  std::mt19937 rng(77);
  const uaii::kernels::VecDotFn ref = uaii::kernels::VecDotRef(uaii::TensorType::F16);
  const uaii::kernels::VecDotFn avx2 =
      uaii::kernels::CpuHasAvx2() ? uaii::kernels::VecDotAvx2(uaii::TensorType::F16) : nullptr;
  for (int64_t n : {1, 31, 32, 64, 80, 96, 128, 256, 640, 1000}) {
    for (int nq : {1, 2, 3, 4, 5, 7, 8, 9, 16}) {
      INFO("n=" << n << " nq=" << nq);
      const int64_t stride = n + 3;  // rows not packed: strides are honoured
      const auto k = RandomF16(static_cast<size_t>(n), rng, 1.0f);
      const auto q16 = RandomF16(static_cast<size_t>(stride * nq), rng, 0.5f);
      std::vector<float> qf(q16.size());
      uaii::kernels::WidenRowF16(q16.data(), qf.data(), static_cast<int64_t>(q16.size()));
      for (size_t i = 0; i < q16.size(); ++i) REQUIRE(SameBits(qf[i], uaii::Fp16ToFp32(q16[i])));
      std::vector<float> out(static_cast<size_t>(2 * nq), -1.0f);
      uaii::kernels::DotF16Queries(k.data(), q16.data(), qf.data(), stride, nq, n, out.data(), 2);
      for (int q = 0; q < nq; ++q) {
        const float r = ref(k.data(), q16.data() + q * stride, n);
        CHECK(SameBits(out[2 * q], r));
        if (avx2) CHECK(SameBits(out[2 * q], avx2(k.data(), q16.data() + q * stride, n)));
        CHECK(out[2 * q + 1] == -1.0f);  // only every out_stride-th element written
      }
    }
  }
}

// Every level the CPU has, for single rows and for row batches (the eight-row vector
// reduction and the rows left over), against the scalar reference per dot.
TEST_CASE("dot_f16_queries: every level and row batches equal the reference bit for bit", "[dot_f16_queries]") {
  using uaii::kernels::IsaLevel;
  std::mt19937 rng(78);
  const uaii::kernels::VecDotFn ref = uaii::kernels::VecDotRef(uaii::TensorType::F16);
  for (IsaLevel level : {IsaLevel::kScalar, IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    if (level != IsaLevel::kScalar && !uaii::kernels::CpuSupports(level)) continue;
    for (int64_t n : {1, 32, 40, 64, 128, 256, 300}) {
      for (int nq : {1, 2, 3, 4, 5, 8, 9}) {
        for (int64_t rows : {1, 7, 8, 9, 16, 17}) {
          INFO("level " << uaii::kernels::IsaLevelName(level) << " n=" << n << " nq=" << nq << " rows=" << rows);
          const int64_t k_stride = n + 5, q_stride = n + 3, out_stride = rows + 2;
          const auto k = RandomF16(static_cast<size_t>(k_stride * rows), rng, 1.0f);
          const auto q16 = RandomF16(static_cast<size_t>(q_stride * nq), rng, 0.5f);
          std::vector<float> qf(q16.size());
          uaii::kernels::WidenRowF16(q16.data(), qf.data(), static_cast<int64_t>(q16.size()));
          std::vector<float> out(static_cast<size_t>(out_stride * nq), -1.0f), one(static_cast<size_t>(nq));
          uaii::kernels::DotF16QueriesRowsAt(level, k.data(), k_stride, rows, q16.data(), qf.data(), q_stride, nq, n,
                                             out.data(), out_stride);
          for (int64_t r = 0; r < rows; ++r) {
            uaii::kernels::DotF16QueriesAt(level, k.data() + r * k_stride, q16.data(), qf.data(), q_stride, nq, n,
                                           one.data(), 1);
            for (int q = 0; q < nq; ++q) {
              const float want = ref(k.data() + r * k_stride, q16.data() + q * q_stride, n);
              CHECK(SameBits(out[q * out_stride + r], want));
              CHECK(SameBits(one[q], want));
            }
          }
          for (int q = 0; q < nq; ++q)  // nothing written past the rows
            for (int64_t r = rows; r < out_stride; ++r) CHECK(out[q * out_stride + r] == -1.0f);
        }
      }
    }
  }
}
