#include "runtime/attention.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <vector>

#include "formats/fp16.h"
#include "kernels/quantize_act.h"
#include "kernels/vec_dot.h"
#include "runtime/cpu_ops.h"

namespace uaii::runtime {
namespace {

kernels::VecDotFn F16Dot() {
  static const kernels::VecDotFn fn = [] {
    kernels::VecDotFn f = kernels::CpuHasAvx2() ? kernels::VecDotAvx2(TensorType::F16) : nullptr;
    return f ? f : kernels::VecDotRef(TensorType::F16);
  }();
  return fn;
}

}  // namespace

void Attention(KvCache& cache, const AttentionParams& p, const float* q, const float* k, const float* v,
               const int32_t* pos, int64_t T, float* out, ThreadPool* pool) {
  const KvLayerShape& s = cache.shape(p.layer);
  const int64_t Hkv = s.n_head_kv, D = s.head_dim_k, Dv = s.head_dim_v, Hq = p.n_head;
  const int64_t group = Hq / Hkv;
  // 1. Store K and V (f16) at their positions.
  int32_t max_pos = 0;
  for (int64_t t = 0; t < T; ++t) {
    const int64_t c = cache.Cell(pos[t]);  // == pos[t] without a KV window
    cache.SetCellPos(c, pos[t]);
    max_pos = std::max(max_pos, pos[t]);
    uint16_t* kc = cache.K(p.layer, c);
    kernels::ConvertRowF16(k + t * Hkv * D, kc, Hkv * D);
    for (int64_t h = 0; h < Hkv; ++h)
      for (int64_t d = 0; d < Dv; ++d) cache.Vt(p.layer, h, d)[c] = Fp32ToFp16(v[(t * Hkv + h) * Dv + d]);
  }
  const auto dot = F16Dot();
  // 2. One task per (row, head).
  auto run = [&](int64_t begin, int64_t end) {
    // Per-thread scratch (pool threads persist): no allocation per token once warm.
    thread_local std::vector<uint16_t> q16;
    thread_local std::vector<float> w;
    thread_local std::vector<uint16_t> w16;
    q16.resize(static_cast<size_t>(D));
    for (int64_t task = begin; task < end; ++task) {
      const int64_t t = task / Hq, h = task % Hq, hk = h / group;
      const int64_t qp = pos[t];
      // Cells [0, n): a multiple of 32 covering qp; padded cells hold zeros and are masked.
      // With a KV window, once the ring wraps every cell is read; cells record their position.
      const int64_t n = std::min(cache.n_cells(),
                                 (qp + 1 + KvCache::kCellAlign - 1) / KvCache::kCellAlign * KvCache::kCellAlign);
      w.assign(n, -std::numeric_limits<float>::infinity());
      w16.assign(n, 0);
      const float* qr = q + (t * Hq + h) * D;
      kernels::ConvertRowF16(qr, q16.data(), D);
      for (int64_t j = 0; j < n; ++j) {
        const int64_t pj = cache.CellPos(j);
        if (pj < 0 || pj > qp || !cache.InWindow(qp, pj)) continue;
        if (p.window > 0 && qp - pj >= p.window) continue;
        float sj = dot(cache.K(p.layer, j) + hk * D, q16.data(), D) * p.scale;
        if (p.softcap > 0) sj = p.softcap * std::tanh(sj / p.softcap);
        w[j] = sj;
      }
      SoftmaxGgml(w.data(), n);  // masked cells stay -inf and come out 0
      kernels::ConvertRowF16(w.data(), w16.data(), n);
      float* o = out + (t * Hq + h) * Dv;
      for (int64_t d = 0; d < Dv; ++d) o[d] = dot(cache.Vt(p.layer, hk, d), w16.data(), n);
    }
  };
  const int64_t tasks = T * Hq;
  if (pool == nullptr || pool->num_threads() == 1) return run(0, tasks);
  // The threads claim tasks in small grains from a shared counter rather than taking
  // fixed halves: decoding, a layer has only a few heads, and a thread that starts
  // late (asleep, or preempted on a busy machine) leaves its heads to the other one
  // instead of making it wait. Which thread runs a task never changes its result.
  struct Claim {
    decltype(run)* fn;
    int64_t tasks, grain;
    std::atomic<int64_t> next{0};
  } claim{&run, tasks, std::max<int64_t>(1, tasks / (8 * pool->num_threads()))};
  Claim* c = &claim;  // the job captures one pointer: std::function stores it inline
  pool->ParallelFor(pool->num_threads(), [c](int64_t, int64_t) {
    for (int64_t b; (b = c->next.fetch_add(c->grain, std::memory_order_relaxed)) < c->tasks;)
      (*c->fn)(b, std::min(c->tasks, b + c->grain));
  }, 1);
}

}  // namespace uaii::runtime
