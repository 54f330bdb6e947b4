// Decode attention alone (runtime/attention.h): one query row against a KV cache of
// CTX cells, every layer of a model shape, best of 20 x 10 tokens; prints ms per
// token and us per layer. Not a test.
//   uaii_bench_attention [--threads T] [--ctx CTX] [--kv-heads HKV] [--heads HQ]
//                        [--head-dim D] [--layers L] [--evict MB]
// --evict MB reads MB of other memory before each layer, as a decode step's weights
// do between two layers' attention (the K/V rows then come from DRAM).
// Defaults are TinyLlama's (4 KV heads, 32 heads, 64 dims, 22 layers); Gemma 3
// 270M is --kv-heads 1 --heads 4 --head-dim 256 --layers 18.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "backends/cpu/attention.h"
#include "runtime/kv_cache.h"

int main(int argc, char** argv) {
  int threads = 2, layers = 22;
  int64_t ctx = 512, hkv = 4, hq = 32, d = 64, evict_mb = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const long long v = std::atoll(argv[i + 1]);
    if (!std::strcmp(argv[i], "--threads")) threads = static_cast<int>(v);
    else if (!std::strcmp(argv[i], "--ctx")) ctx = v;
    else if (!std::strcmp(argv[i], "--kv-heads")) hkv = v;
    else if (!std::strcmp(argv[i], "--heads")) hq = v;
    else if (!std::strcmp(argv[i], "--head-dim")) d = v;
    else if (!std::strcmp(argv[i], "--layers")) layers = static_cast<int>(v);
    else if (!std::strcmp(argv[i], "--evict")) evict_mb = v;
  }
  using namespace uaii::runtime;
  using namespace uaii::backends::cpu;
  std::vector<KvLayerShape> shapes(static_cast<size_t>(layers), KvLayerShape{hkv, d, d});
  // Room for 128 more cells, as a session's max context leaves: each V^T row is then
  // longer than the cells read, so the rows are not one contiguous stream.
  KvCache cache(shapes, ctx + 128);
  uaii::ThreadPool pool(threads);
  std::vector<float> q(static_cast<size_t>(hq * d)), k(static_cast<size_t>(hkv * d)), v(k.size()), out(q.size());
  for (size_t i = 0; i < q.size(); ++i) q[i] = 0.01f * static_cast<float>(i % 37) - 0.2f;
  std::vector<uint64_t> other(static_cast<size_t>(evict_mb) << 17, 1);
  uint64_t sink = 0;
  double evict_s = 0;  // time spent evicting, taken off the figures
  std::vector<uint64_t> sinks(static_cast<size_t>(threads) * 8);  // a line per thread
  auto evict = [&] {  // on the pool, as a layer's matmuls are: the workers stay as warm
    const auto t0 = std::chrono::steady_clock::now();
    const int64_t lines = static_cast<int64_t>(other.size() / 8);
    pool.ParallelFor(threads, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        uint64_t acc = 0;
        for (int64_t i = lines * c / threads; i < lines * (c + 1) / threads; ++i) acc += other[i * 8];
        sinks[c * 8] += acc;
      }
    });
    evict_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  auto step = [&](int32_t pos) {
    for (size_t i = 0; i < k.size(); ++i) k[i] = v[i] = 0.02f * static_cast<float>((i + pos) % 29) - 0.3f;
    for (int l = 0; l < layers; ++l) {
      if (evict_mb > 0) evict();
      AttentionParams ap;
      ap.layer = l;
      ap.n_head = hq;
      ap.scale = 1.0f / static_cast<float>(d);
      Attention(cache, ap, q.data(), k.data(), v.data(), &pos, 1, out.data(), &pool);
    }
  };
  for (int32_t p = 0; p < ctx; ++p) step(p);  // fill the cache
  double best = 1e30;
  for (int rep = 0; rep < 20; ++rep) {  // the last position again: the same work each time
    const auto t0 = std::chrono::steady_clock::now();
    evict_s = 0;
    for (int it = 0; it < 10; ++it) step(static_cast<int32_t>(ctx - 1));
    best = std::min(best, (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - evict_s) / 10);
  }
  std::printf("{\"threads\": %d, \"ctx\": %lld, \"ms_per_token\": %.3f, \"us_per_layer\": %.1f}\n", threads,
              static_cast<long long>(ctx), best * 1e3, best * 1e6 / layers);
  for (size_t i = 0; i < sinks.size(); i += 8) sink += sinks[i];
  return sink == 1 ? 1 : 0;  // keeps the eviction reads
}
