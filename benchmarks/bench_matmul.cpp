// GEMV / GEMM throughput per weight type: y = W x for W of 2048x2048 and 5632x2048
// (out x in), 1 and 2 threads, `batch` activation rows (1 = decode GEMV). Prints the
// best call of the run (the machine is shared: the minimum is the least disturbed),
// as GFLOP/s (2 * out * in * batch per call) and GB/s of packed weight bytes read,
// then the mean call's ms and GB/s (what a stream of such calls gets).
// Not a test: uaii_bench_matmul [--quick] [--batch N] [--type NAME] [--impl scalar]
// [--shape OUTxIN] [--interleave] (16-row interleaved weights, kernels/interleave.h)
// [--copies N] (interleaved only: N copies of the matrix read in turn, so that a
// matrix smaller than the L3 still comes from DRAM, as each of decode's does).
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <string>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "formats/fp16.h"
#include "formats/tensor_type.h"
#include "kernels/interleave.h"
#include "kernels/matmul.h"
#include "kernels/vec_dot.h"
#include "util/huge_pages.h"

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
  bool quick = false, interleave = false;
  long long shape_out = 0, shape_in = 0;
  int64_t batch = 1, copies = 1;
  std::string only;
  uaii::KernelImpl impl = uaii::KernelImpl::kAuto;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--interleave")) interleave = true;
    else if (!std::strcmp(argv[i], "--batch") && i + 1 < argc) batch = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--copies") && i + 1 < argc) copies = std::max(1LL, std::atoll(argv[++i]));
    else if (!std::strcmp(argv[i], "--type") && i + 1 < argc) only = argv[++i];
    else if (!std::strcmp(argv[i], "--shape") && i + 1 < argc) std::sscanf(argv[++i], "%lldx%lld", &shape_out, &shape_in);
    else if (!std::strcmp(argv[i], "--impl") && i + 1 < argc) impl = std::strcmp(argv[++i], "scalar") ? impl : uaii::KernelImpl::kScalar;
  }
  const TensorType types[] = {TensorType::F32,  TensorType::F16,  TensorType::BF16,
                              TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0,
                              TensorType::Q5_1, TensorType::Q8_0, TensorType::Q4_K,
                              TensorType::Q5_K, TensorType::Q6_K};
  std::vector<std::array<int64_t, 2>> shapes = {{2048, 2048}, {5632, 2048}};
  if (shape_out > 0 && shape_in > 0) shapes = {{shape_out, shape_in}};
  std::printf("avx2: %s\n", uaii::kernels::CpuHasAvx2() ? "yes" : "no");
  std::printf("%-5s %11s %7s %9s %8s %8s %9s %8s\n", "type", "out x in", "threads", "ms/call", "GFLOP/s", "GB/s",
              "mean ms", "mean GB/s");
  for (int threads : {1, 2}) {
    uaii::ThreadPool pool(threads);
    {
      // Dispatch overhead: an empty ParallelFor, back to back as decode issues them.
      const int calls = 20000;
      double best = 1e30;
      for (int rep = 0; rep < 5; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < calls; ++i) pool.ParallelFor(threads, [](int64_t, int64_t) {});
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      std::printf("ParallelFor dispatch, %d threads: %.2f us per call\n", threads, best / calls * 1e6);
    }
    for (TensorType t : types) {
      if (!only.empty() && only != uaii::TensorTypeName(static_cast<uint32_t>(t))) continue;
      for (const auto& s : shapes) {
        const int64_t out = s[0], in = s[1];
        if (interleave && !uaii::kernels::HasInterleavedKernel(t)) continue;
        auto w = MakeWeights(t, out, in);
        std::shared_ptr<uint8_t> packed;  // on huge pages, as the engine keeps them (runtime/weights.h)
        if (interleave) {
          packed = uaii::AllocateHugePageBuffer(w.size() * copies);
          (void)uaii::kernels::RepackInterleaved(t, w.data(), out, in, packed.get());
          for (int64_t c = 1; c < copies; ++c) std::memcpy(packed.get() + c * w.size(), packed.get(), w.size());
        }
        int64_t call = 0;  // which copy the next call reads
        std::vector<float> x(in * batch, 0.5f), y(out * batch);
        for (int64_t i = 0; i < in * batch; ++i) x[i] = 0.001f * static_cast<float>(i % 97) - 0.05f;
        auto once = [&] {
          const auto st = interleave
              ? uaii::kernels::MatMulInterleaved(t, packed.get() + (call++ % copies) * w.size(), out, in, x.data(), batch, y.data(), &pool)
              : uaii::MatMul(t, w.data(), out, in, x.data(), batch, y.data(), &pool, impl);
          if (!st.ok()) std::fprintf(stderr, "%s\n", std::string(st.message()).c_str());
        };
        once();  // warm up
        const int iters = quick ? 5 : 30;
        double sec = 1e30, sum = 0;
        for (int i = 0; i < iters; ++i) {
          const auto t0 = std::chrono::steady_clock::now();
          once();
          const double d = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          sec = std::min(sec, d);
          sum += d;
        }
        const double mean = sum / iters;
        std::printf("%-5s %5lldx%-5lld %7d %9.3f %8.2f %8.2f %9.4f %8.2f\n",
                    std::string(uaii::TensorTypeName(static_cast<uint32_t>(t))).c_str(),
                    static_cast<long long>(out), static_cast<long long>(in), threads, sec * 1e3,
                    2.0 * out * in * batch / sec * 1e-9, w.size() / sec * 1e-9, mean * 1e3, w.size() / mean * 1e-9);
      }
    }
  }
  return 0;
}
