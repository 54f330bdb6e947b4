// Memory read bandwidth, for the decode roofline: T threads each sum a disjoint part
// of a 1 GiB buffer (AVX2 loads through the compiler's vectorizer), best of 5 passes (--passes).
// The buffer is on transparent huge pages like the engine's resident weights
// (util/huge_pages.h), so the roofline is the fastest reading the machine allows.
// Prints one JSON line with GB/s (10^9 bytes).
//   uaii_bench_membw [--threads T] [--mib N] [--passes P]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "util/huge_pages.h"

int main(int argc, char** argv) {
  int threads = 2;
  size_t mib = 1024;
  int passes = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--mib")) mib = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--passes")) passes = std::max(1, std::atoi(argv[i + 1]));
  }
  const size_t n = mib * (1u << 20) / sizeof(float);
  std::shared_ptr<uint8_t> mem = uaii::AllocateHugePageBuffer(n * sizeof(float));
  if (!mem) return 1;
  float* buf = reinterpret_cast<float*>(mem.get());
  std::fill(buf, buf + n, 1.0f);
  std::vector<double> sums(threads);
  double best = 0;
  for (int pass = 0; pass < passes; ++pass) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        const size_t lo = n * t / threads, hi = n * (t + 1) / threads;
        float acc[16] = {};
        for (size_t i = lo; i + 16 <= hi; i += 16)
          for (int k = 0; k < 16; ++k) acc[k] += buf[i + k];
        double s = 0;
        for (float a : acc) s += a;
        sums[t] = s;
      });
    }
    for (auto& th : pool) th.join();
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, n * sizeof(float) / secs / 1e9);
  }
  double check = 0;
  for (double s : sums) check += s;
  std::printf("{\"threads\": %d, \"read_gb_per_s\": %.2f, \"checksum\": %.0f}\n", threads, best, check);
  return 0;
}
