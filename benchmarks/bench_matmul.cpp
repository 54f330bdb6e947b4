// GEMV throughput per weight type: y = W x for W of 2048x2048 and 5632x2048
// (out x in), 1 and 2 threads. Prints GFLOP/s (2 * out * in per call) and GB/s of
// packed weight bytes read. Not a test: uaii_bench_matmul [--quick].
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "formats/fp16.h"
#include "formats/tensor_type.h"
#include "kernels/matmul.h"
#include "kernels/vec_dot.h"

using uaii::TensorType;

namespace {

std::vector<uint8_t> MakeWeights(TensorType t, int64_t out, int64_t in) {
  const auto& tr = *uaii::FindTensorType(static_cast<uint32_t>(t));
  std::vector<uint8_t> w(static_cast<size_t>(*uaii::RowBytes(tr, in) * out));
  std::mt19937 rng(1);
  for (auto& b : w) b = static_cast<uint8_t>(rng());
  // Make float types and every half-sized field finite: rewrite as small halves.
  if (t == TensorType::F32) {
    for (size_t i = 0; i < w.size(); i += 4) { const float v = 0.01f * (int(rng() % 200) - 100); std::memcpy(&w[i], &v, 4); }
  } else if (t == TensorType::F16 || t == TensorType::BF16) {
    for (size_t i = 0; i < w.size(); i += 2) {
      const float v = 0.01f * (int(rng() % 200) - 100);
      const uint16_t h = t == TensorType::F16 ? uaii::Fp32ToFp16(v) : uaii::Fp32ToBf16(v);
      std::memcpy(&w[i], &h, 2);
    }
  }
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const TensorType types[] = {TensorType::F32,  TensorType::F16,  TensorType::BF16,
                              TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0,
                              TensorType::Q5_1, TensorType::Q8_0, TensorType::Q4_K,
                              TensorType::Q5_K, TensorType::Q6_K};
  const int64_t shapes[][2] = {{2048, 2048}, {5632, 2048}};
  std::printf("avx2: %s\n", uaii::kernels::CpuHasAvx2() ? "yes" : "no");
  std::printf("%-5s %11s %7s %9s %8s %8s\n", "type", "out x in", "threads", "ms/call", "GFLOP/s", "GB/s");
  for (int threads : {1, 2}) {
    uaii::ThreadPool pool(threads);
    for (TensorType t : types) {
      for (const auto& s : shapes) {
        const int64_t out = s[0], in = s[1];
        const auto w = MakeWeights(t, out, in);
        std::vector<float> x(in, 0.5f), y(out);
        for (int64_t i = 0; i < in; ++i) x[i] = 0.001f * static_cast<float>(i % 97) - 0.05f;
        auto once = [&] {
          const auto st = uaii::MatMul(t, w.data(), out, in, x.data(), 1, y.data(), &pool);
          if (!st.ok()) std::fprintf(stderr, "%s\n", std::string(st.message()).c_str());
        };
        once();  // warm up
        const int iters = quick ? 3 : 20;
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < iters; ++i) once();
        const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters;
        std::printf("%-5s %5lldx%-5lld %7d %9.3f %8.2f %8.2f\n",
                    std::string(uaii::TensorTypeName(static_cast<uint32_t>(t))).c_str(),
                    static_cast<long long>(out), static_cast<long long>(in), threads, sec * 1e3,
                    2.0 * out * in / sec * 1e-9, w.size() / sec * 1e-9);
      }
    }
  }
  return 0;
}
