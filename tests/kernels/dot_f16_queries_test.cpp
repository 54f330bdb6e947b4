#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <vector>

#include "formats/fp16.h"
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
