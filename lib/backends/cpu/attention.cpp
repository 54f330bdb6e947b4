#include "backends/cpu/attention.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <unistd.h>

#include "formats/fp16.h"
#include "kernels/dot_f16_queries.h"
#include "kernels/quantize_act.h"
#include "backends/cpu/cpu_ops.h"

namespace uaii::backends::cpu {
namespace {

// Skipping the cell blocks a sliding window hides keeps the F16 dots' lanes (kv_cache.h).
static_assert(KvCache::kCellAlign % 32 == 0, "AttendedCells must keep the dot's 32-element step");

// Whether the mask hides position pj (a cell's, -1 when empty) from a query at qp:
// empty, in the future, outside the resident window, or outside the sliding window.
inline bool Hidden(const KvCache& cache, const AttentionParams& p, int64_t qp, int64_t pj) {
  return pj < 0 || pj > qp || !cache.InWindow(qp, pj) || (p.window > 0 && qp - pj >= p.window);
}

// A head's attention score from its raw q.k dot: scaled, then soft-capped (Gemma 2).
inline float Score(float dot, const AttentionParams& p) {
  float sj = dot * p.scale;
  if (p.softcap > 0) sj = p.softcap * std::tanh(sj / p.softcap);
  return sj;
}

// Runs fn over [0, n) in `grain`-long ranges on the pool; inline without a pool. The
// ranges are dealt out as one run of consecutive ranges per thread, each claimed from
// that run's counter, as a stage's grains are (backends/cpu/stage_linear.cpp): a thread
// reads its own contiguous part of the cache, which its `prologue(run, runs)` (called
// once per run, before that run's ranges, on the thread that takes the run) may
// bring into its core's caches. A thread that has finished its run claims the rest
// of the others', so a thread that starts late, asleep or preempted, leaves its share
// to the one that is running. Which thread runs a range never changes its result.
// The job captures one pointer, which std::function stores inline (no allocation).
struct NoPrologue {
  void operator()(int64_t, int64_t) const {}
};

// The first range of run r of `runs` over [0, n) in `grain`-long ranges.
int64_t RunBegin(int64_t n, int64_t grain, int64_t r, int64_t runs) {
  return std::min(n, (n + grain - 1) / grain * r / runs * grain);
}

template <typename Fn, typename Prologue = NoPrologue>
void RunClaimed(ThreadPool* pool, int64_t n, int64_t grain, Fn& fn, Prologue prologue = {}) {
  if (pool == nullptr || pool->num_threads() == 1 || n <= grain) {
    prologue(int64_t{0}, int64_t{1});
    return fn(int64_t{0}, n);
  }
  struct alignas(64) Run {  // one run's next range and end; own cache line
    std::atomic<int64_t> next{0};
    int64_t end = 0;
  };
  constexpr int kMaxRuns = 64;
  struct Claim {
    Fn* fn;
    Prologue* prologue;
    int64_t n, grain;
    int runs;
    Run run[kMaxRuns];
  } claim;
  claim.fn = &fn;
  claim.prologue = &prologue;
  claim.n = n;
  claim.grain = grain;
  claim.runs = std::min(pool->num_threads(), kMaxRuns);
  for (int r = 0; r < claim.runs; ++r) {
    claim.run[r].next.store(RunBegin(n, grain, r, claim.runs), std::memory_order_relaxed);
    claim.run[r].end = RunBegin(n, grain, r + 1, claim.runs);
  }
  Claim* c = &claim;
  pool->ParallelFor(claim.runs, [c](int64_t chunk, int64_t) {
    (*c->prologue)(chunk, int64_t{c->runs});
    for (int k = 0; k < c->runs; ++k) {  // its own run first, then the others' rests
      Run& run = c->run[(chunk + k) % c->runs];
      for (int64_t b; (b = run.next.fetch_add(c->grain, std::memory_order_relaxed)) < run.end;)
        (*c->fn)(b, std::min(run.end, b + c->grain));
    }
  }, 1);
}

// Reads one byte of every 64-byte line in [p, p + bytes): a plain sequential read,
// which the hardware prefetcher runs at the memory's full rate, leaving the lines in
// this core's caches (the empty asm keeps the reads, whose only use is that).
inline void ReadLines(const void* p, int64_t bytes) {
  const auto* b = static_cast<const uint8_t*>(p);
  uint32_t sink = 0;
  for (int64_t i = 0; i < bytes; i += 64) sink += b[i];
  asm volatile("" : : "r"(sink));
}

// Bytes of K and V one thread reads ahead of its dots in a pass (half its L2, which the
// dots' scratch and the next ranges share); 256 KiB where the L2 size is not known.
int64_t StageBudgetBytes() {
  static const int64_t bytes = [] {
#ifdef _SC_LEVEL2_CACHE_SIZE  // glibc; elsewhere the default
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (l2 > 0) return static_cast<int64_t>(l2) / 2;
#endif
    return int64_t{256} << 10;
  }();
  return bytes;
}

// Calls fn(j, cell, count) for indices [j0, j1) of the attended spans laid end to
// end: one call per span the range touches (KvCache::AttendedCells).
template <typename Fn>
void ForCellRuns(const KvCache::Attended& a, int64_t j0, int64_t j1, Fn fn) {
  const int64_t first = a.span[0].end - a.span[0].begin;
  if (j0 < first) fn(j0, a.span[0].begin + j0, std::min(j1, first) - j0);
  if (j1 > first) {
    const int64_t b = std::max(j0, first);
    fn(b, a.span[1].begin + (b - first), j1 - b);
  }
}

// V^T rows [d, d + rows) of KV head hk over the attended cells, and their stride: in
// place for one span; two (a wrapped ring) are copied end to end into `scratch`, so
// that each dot still runs over its cells in cell order with no gap in its lanes.
const uint16_t* VtRows(KvCache& cache, int layer, const KvCache::Attended& a, int64_t hk, int64_t d, int64_t rows,
                       std::vector<uint16_t>& scratch, int64_t* stride) {
  if (a.count == 1) {
    *stride = cache.n_cells();
    return cache.Vt(layer, hk, d) + a.span[0].begin;
  }
  const int64_t n = a.cells();
  scratch.resize(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r)
    ForCellRuns(a, 0, n, [&](int64_t j, int64_t cell, int64_t count) {
      std::memcpy(&scratch[r * n + j], cache.Vt(layer, hk, d + r) + cell, count * sizeof(uint16_t));
    });
  *stride = n;
  return scratch.data();
}

// Decoding one query row, in three jobs over the cache instead of one task per head:
// every head's scores for a range of cells (each K row read once for all the heads
// that share it), each head's softmax, then the outputs for a range of value dims
// (each V row read once likewise), so the cache jobs split evenly however few heads
// there are. Every score and output is the same dot product, scaled and soft-capped
// the same way, as in the prefill loop below, and a head's softmax still runs over
// all its cells at once: results are identical.
// (Not one job per KV head, each thread doing its heads' three phases with no
// hand-off between them: with the caches evicted between layers as in decode that is
// slower, whether a thread takes one head at a time or its share at once, because the
// per-head K reads are strided; docs/performance.md.)
void AttendOneRow(KvCache& cache, const AttentionParams& p, const float* q, int32_t qp, float* out,
                  ThreadPool* pool) {
  const KvLayerShape& s = cache.shape(p.layer);
  const int64_t Hkv = s.n_head_kv, D = s.head_dim_k, Dv = s.head_dim_v, Hq = p.n_head;
  const int64_t group = Hq / Hkv;
  // The cells, as in the prefill loop below: the spans a sliding window shows
  // (KvCache::AttendedCells), n cells laid end to end, cell a.CellAt(j) at index j.
  const KvCache::Attended a = cache.AttendedCells(qp, p.window);
  const int64_t n = a.cells();
  // The calling thread's scratch (no allocation per token once warm), read by the
  // pool's threads through these pointers: queries in f16 [Hq, D], scores [Hq, n],
  // softmax weights in f16 [Hq, n].
  // The f16 rows are also widened to f32 once (qf, wf), so that a group's dots against
  // one K or V^T row share its widening (kernels/dot_f16_queries.h): the same values.
  thread_local std::vector<uint16_t> q16_buf, w16_buf;
  thread_local std::vector<float> w_buf, qf_buf, wf_buf;
  q16_buf.resize(static_cast<size_t>(Hq * D));
  qf_buf.resize(static_cast<size_t>(Hq * D));
  w_buf.resize(static_cast<size_t>(Hq * n));
  w16_buf.resize(static_cast<size_t>(Hq * n));
  wf_buf.resize(static_cast<size_t>(Hq * n));
  uint16_t* q16 = q16_buf.data();
  float* qf = qf_buf.data();
  float* w = w_buf.data();
  uint16_t* w16 = w16_buf.data();
  float* wf = wf_buf.data();
  for (int64_t h = 0; h < Hq; ++h) kernels::ConvertRowF16(q + h * D, q16 + h * D, D);
  kernels::WidenRowF16(q16, qf, Hq * D);
  // Each thread first reads its run's K rows, and the V^T rows of its run in the values
  // job below (the same split), in one sequential pass, then computes on them from its
  // caches. In decode the cache comes from DRAM (the layer's weights have passed
  // through the caches since), and the dots' own loads, spread among the FMAs, draw
  // it in more slowly than the pass does (docs/performance.md). Where a run's K and V
  // would not fit in half this core's L2 (long contexts, or one thread), each range is
  // read just before its dots instead (as fast at one thread; the run pass is faster
  // at two).
  const int64_t threads = pool ? pool->num_threads() : 1;
  const bool stage_runs = n * Hkv * (D + Dv) * 2 / threads <= StageBudgetBytes();
  // The K rows of cells [j0, j1), and the V^T rows [i0, i1) over every cell.
  auto read_k = [&](int64_t j0, int64_t j1) {
    ForCellRuns(a, j0, j1, [&](int64_t, int64_t cell, int64_t count) {
      ReadLines(cache.K(p.layer, cell), count * Hkv * D * 2);
    });
  };
  auto read_vt = [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i)
      ForCellRuns(a, 0, n, [&](int64_t, int64_t cell, int64_t count) {
        ReadLines(cache.Vt(p.layer, i / Dv, i % Dv) + cell, count * 2);
      });
  };
  // A range of cells: every head's dot with each K row (a masked cell's too: its row
  // holds zeros or an old position's values, and the -inf written over it below is all
  // softmax sees), eight rows' reductions at a time (DotF16QueriesRows), then the
  // scores scaled (and soft-capped) head by head over the range.
  auto scores = [&](int64_t j0, int64_t j1) {
    if (!stage_runs) read_k(j0, j1);
    // Eight cells at a time, every KV head's slice of them before the next eight: the
    // rows' bytes are used whole while in L1 and the cache is read as one stream (head
    // by head over the whole range, each pass read a quarter of every row, at a
    // stride the prefetcher did not follow: the dots waited on K). Spans are whole
    // 32-cell blocks, so eight cells never straddle two.
    for (int64_t j = j0; j < j1; j += 8) {
      const int64_t rows = std::min<int64_t>(8, j1 - j);
      for (int64_t hk = 0; hk < Hkv; ++hk) {
        const int64_t h0 = hk * group;
        kernels::DotF16QueriesRows(cache.K(p.layer, a.CellAt(j)) + hk * D, Hkv * D, rows, q16 + h0 * D, qf + h0 * D, D,
                                   static_cast<int>(group), D, w + h0 * n + j, n);
      }
    }
    for (int64_t h = 0; h < Hq; ++h) {
      float* wh = w + h * n;
      if (p.softcap > 0) {
        for (int64_t j = j0; j < j1; ++j) wh[j] = Score(wh[j], p);
      } else {
        for (int64_t j = j0; j < j1; ++j) wh[j] *= p.scale;  // Score without a cap
      }
    }
    for (int64_t j = j0; j < j1; ++j) {
      if (Hidden(cache, p, qp, cache.CellPos(a.CellAt(j))))
        for (int64_t h = 0; h < Hq; ++h) w[h * n + j] = -std::numeric_limits<float>::infinity();  // softmax: 0
    }
  };
  // Heads [h0, h1)'s softmax over all their cells.
  auto softmax = [&](int64_t h0, int64_t h1) {
    for (int64_t h = h0; h < h1; ++h) {
      SoftmaxGgml(w + h * n, n);
      kernels::ConvertRowF16(w + h * n, w16 + h * n, n);
      kernels::WidenRowF16(w16 + h * n, wf + h * n, n);
    }
  };
  // A range of value dims (i = kv head * Dv + dim): each KV head's V^T rows in the
  // range against its group's weights, several rows per pass (DotF16QueriesRows).
  auto values = [&](int64_t i0, int64_t i1) {
    if (!stage_runs) read_vt(i0, i1);
    thread_local std::vector<uint16_t> vt_scratch;
    for (int64_t i = i0; i < i1;) {
      const int64_t hk = i / Dv, d = i % Dv, rows = std::min(i1 - i, Dv - d);
      const int64_t h0 = hk * group;
      int64_t stride = 0;
      const uint16_t* vt = VtRows(cache, p.layer, a, hk, d, rows, vt_scratch, &stride);
      kernels::DotF16QueriesRows(vt, stride, rows, w16 + h0 * n, wf + h0 * n, n, static_cast<int>(group), n,
                                 out + h0 * Dv + d, Dv);
      i += rows;
    }
  };
  constexpr int64_t kCellGrain = 64, kDimGrain = 32;  // a few us of dots each
  const int64_t Hkv_Dv = Hkv * Dv;
  auto stage_in = [&](int64_t r, int64_t runs) {
    if (!stage_runs) return;
    const int64_t c0 = RunBegin(n, kCellGrain, r, runs), c1 = RunBegin(n, kCellGrain, r + 1, runs);
    read_k(c0, c1);
    read_vt(RunBegin(Hkv_Dv, kDimGrain, r, runs), RunBegin(Hkv_Dv, kDimGrain, r + 1, runs));
  };
  RunClaimed(pool, n, kCellGrain, scores, stage_in);
  // Each head's softmax as a job over the heads (serial, it was a fifth of a 512-cell
  // decode step's attention with the other thread idle), in grains of ~4096 cells
  // (several us of exp): Gemma 3's 4 heads at a few hundred cells are one grain, which
  // RunClaimed runs on this thread rather than pay a job's hand-off.
  constexpr int64_t kSoftmaxGrainCells = 4096;
  RunClaimed(pool, Hq, std::max<int64_t>(1, kSoftmaxGrainCells / n), softmax);
  RunClaimed(pool, Hkv_Dv, kDimGrain, values);
}

}  // namespace

void Attention(KvCache& cache, const AttentionParams& p, const float* q, const float* k, const float* v,
               const int32_t* pos, int64_t T, float* out, ThreadPool* pool) {
  const KvLayerShape& s = cache.shape(p.layer);
  const int64_t Hkv = s.n_head_kv, D = s.head_dim_k, Dv = s.head_dim_v, Hq = p.n_head;
  const int64_t group = Hq / Hkv;
  // 1. Store K and V (f16) at their positions; a shared-KV read (k, v null) attends
  // over what the layer's own op stored earlier in the pass.
  int32_t max_pos = 0;
  for (int64_t t = 0; t < T && k != nullptr; ++t) {
    const int64_t c = cache.Cell(pos[t]);  // == pos[t] without a KV window
    cache.SetCellPos(c, pos[t]);
    max_pos = std::max(max_pos, pos[t]);
    uint16_t* kc = cache.K(p.layer, c);
    kernels::ConvertRowF16(k + t * Hkv * D, kc, Hkv * D);
    for (int64_t h = 0; h < Hkv; ++h)
      for (int64_t d = 0; d < Dv; ++d) cache.Vt(p.layer, h, d)[c] = Fp32ToFp16(v[(t * Hkv + h) * Dv + d]);
  }
  if (T == 1) return AttendOneRow(cache, p, q, pos[0], out, pool);
  // 2. One task per (row, KV head): the group's query heads share each K and V^T row
  // (kernels/dot_f16_queries.h), every dot and softmax as for one head at a time.
  auto run = [&](int64_t begin, int64_t end) {
    // Per-thread scratch (pool threads persist): no allocation per token once warm.
    thread_local std::vector<uint16_t> q16, w16, vt_scratch;
    thread_local std::vector<float> qf, w, wf;
    q16.resize(static_cast<size_t>(group * D));
    qf.resize(static_cast<size_t>(group * D));
    for (int64_t task = begin; task < end; ++task) {
      const int64_t t = task / Hkv, hk = task % Hkv, h0 = hk * group;
      const int64_t qp = pos[t];
      // Cells: whole 32-cell blocks covering qp, padded cells holding zeros and masked,
      // less the blocks a sliding window hides (KvCache::AttendedCells): n cells laid
      // end to end, cell a.CellAt(j) at index j. Cells record their position (the
      // resident window's ring puts positions out of cell order once it wraps).
      const KvCache::Attended a = cache.AttendedCells(qp, p.window);
      const int64_t n = a.cells();
      w.resize(static_cast<size_t>(group * n));
      w16.resize(static_cast<size_t>(group * n));
      wf.resize(static_cast<size_t>(group * n));
      kernels::ConvertRowF16(q + (t * Hq + h0) * D, q16.data(), group * D);
      kernels::WidenRowF16(q16.data(), qf.data(), group * D);
      // Every cell's dot, eight K rows' reductions at a time (DotF16QueriesRows, the
      // same bits as one row at a time; one dot per cell left the reductions as costly
      // as the dots at 64 dims), scaled; then each masked cell's scores are overwritten
      // with -inf, all softmax sees of them (as in decode). Spans are whole 32-cell
      // blocks, so eight cells never straddle two.
      for (int64_t j = 0; j < n; j += 8)
        kernels::DotF16QueriesRows(cache.K(p.layer, a.CellAt(j)) + hk * D, Hkv * D, std::min<int64_t>(8, n - j),
                                   q16.data(), qf.data(), D, static_cast<int>(group), D, w.data() + j, n);
      for (int64_t g = 0; g < group; ++g)
        for (int64_t j = 0; j < n; ++j) w[g * n + j] = Score(w[g * n + j], p);
      for (int64_t j = 0; j < n; ++j) {
        if (Hidden(cache, p, qp, cache.CellPos(a.CellAt(j))))
          for (int64_t g = 0; g < group; ++g) w[g * n + j] = -std::numeric_limits<float>::infinity();
      }
      for (int64_t g = 0; g < group; ++g) {
        SoftmaxGgml(w.data() + g * n, n);  // masked cells stay -inf and come out 0
        kernels::ConvertRowF16(w.data() + g * n, w16.data() + g * n, n);
      }
      kernels::WidenRowF16(w16.data(), wf.data(), group * n);
      float* o = out + (t * Hq + h0) * Dv;
      int64_t stride = 0;
      const uint16_t* vt = VtRows(cache, p.layer, a, hk, 0, Dv, vt_scratch, &stride);
      kernels::DotF16QueriesRows(vt, stride, Dv, w16.data(), wf.data(), n, static_cast<int>(group), n, o, Dv);
    }
  };
  const int64_t tasks = T * Hkv;
  RunClaimed(pool, tasks, std::max<int64_t>(1, tasks / (8 * (pool ? pool->num_threads() : 1))), run);
}

}  // namespace uaii::backends::cpu
