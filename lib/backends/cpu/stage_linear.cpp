#include "backends/cpu/stage_linear.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <mutex>
#include <type_traits>

#include "absl/status/statusor.h"
#include "kernels/interleave.h"
#include "kernels/matmul.h"
#include "backends/cpu/cpu_ops.h"

namespace uaii::backends::cpu {
namespace {

constexpr int64_t kGroupRows = kernels::kInterleaveRows;  // grains cut at whole 16-row groups

// About this many weight bytes per grain: a few microseconds of streaming at DRAM
// speed. Every grain reads an activation row prepared once per stage and weight type
// (PreparedByType).
constexpr int64_t kGrainBytes = 128 << 10;
// At most this many grains per thread: the largest matrix (Gemma 3's 178 MB output
// head) gets grains of ~1.4 MB at 2 threads, so the thread that finishes first waits
// at most one such grain's streaming for the other, even after a preemption.
constexpr int64_t kMaxGrainsPerThread = 64;

// The activation row of a stage prepared for one weight type: for the interleaved
// kernels (il), or in the row-major kernels' format (rm, kernels/matmul.h).
struct Prepared {
  const kernels::InterleavedActs* il = nullptr;
  const uint8_t* rm = nullptr;
};

// y[r0, r1) = rows [r0, r1) of W times the prepared x. r0 is a multiple of 16 and r1
// is too, or W's last row: such a slice of the interleaved layout is itself an
// interleaved matrix (its groups, then any tail rows row-major), as a slice of a
// row-major one is.
absl::Status Rows(const BoundWeight& w, int64_t r0, int64_t r1, float* y, const Prepared& x) {
  const uint64_t off = static_cast<uint64_t>(r0) * w.row_bytes;
  if (const uint8_t* il = InterleavedData(w)) return kernels::MatMulInterleavedPrepared(*x.il, il + off, r1 - r0, y + r0);
  return MatMulPrepared(w.type, w.data + off, r1 - r0, w.shape[1], x.rm, 1, y + r0, nullptr);
}

// The activation row prepared once per weight type of a stage, on the calling thread
// before the grains run (then only read, by every thread), not once per grain: a
// token has thousands of grains, and a worker's own scratch would grow the first time
// it took a larger matrix's grain (an allocation in the middle of a decode). Per-thread
// slots of the calling thread: no allocation once warm.
class PreparedByType {
 public:
  static constexpr int kSlots = 8;
  absl::StatusOr<Prepared> For(const BoundWeight& w, const float* x) {
    const bool il = InterleavedData(w) != nullptr;
    for (int i = 0; i < used_; ++i)
      if (types_[i] == w.type && interleaved_[i] == il) return Get(i, il);
    if (used_ == kSlots) return absl::InvalidArgumentError("stage: more than 8 weight types");
    const int i = used_;
    absl::Status st = il ? kernels::PrepareInterleavedActs(w.type, w.shape[1], x, 1, &Interleaved()[i])
                         : PrepareMatMulActs(w.type, w.shape[1], x, 1, &RowMajor()[i]);
    if (!st.ok()) return st;
    types_[i] = w.type;
    interleaved_[i] = il;
    ++used_;
    return Get(i, il);
  }

 private:
  Prepared Get(int i, bool il) const {
    Prepared p;
    if (il) p.il = &Interleaved()[i];
    else p.rm = RowMajor()[i].data();
    return p;
  }
  static kernels::InterleavedActs* Interleaved() {
    thread_local kernels::InterleavedActs slots[kSlots];
    return slots;
  }
  static std::vector<uint8_t>* RowMajor() {
    thread_local std::vector<uint8_t> slots[kSlots];
    return slots;
  }
  TensorType types_[kSlots] = {};
  bool interleaved_[kSlots] = {};
  int used_ = 0;
};

// A position in the stage's concatenated rows: row `row` of part `part`.
struct Pos {
  int part;
  int64_t row;
};

// The parts' rows laid end to end, each row costing its part's bytes.
class RowSpace {
 public:
  RowSpace(const int64_t* rows, const int64_t* row_bytes, int n) : rows_(rows), rb_(row_bytes), n_(n) {
    for (int p = 0; p < n; ++p) total_ += rows[p] * row_bytes[p];
  }
  int64_t total_bytes() const { return total_; }

  // The group boundary nearest to byte offset b (b == total: the end).
  Pos Snap(int64_t b) const {
    for (int p = 0; p < n_; ++p) {
      const int64_t part_bytes = rows_[p] * rb_[p];
      if (b < part_bytes) {
        const int64_t row = std::llround(static_cast<double>(b) / static_cast<double>(rb_[p] * kGroupRows)) * kGroupRows;
        return row >= rows_[p] ? Pos{p + 1, 0} : Pos{p, row};
      }
      b -= part_bytes;
    }
    return Pos{n_, 0};
  }

  // Calls piece(part, r0, r1) for every non-empty part slice in [from, to).
  template <typename Piece>
  absl::Status ForEach(Pos from, Pos to, Piece&& piece) const {
    for (int p = from.part; p < n_ && p <= to.part; ++p) {
      const int64_t r0 = p == from.part ? from.row : 0;
      const int64_t r1 = p == to.part ? to.row : rows_[p];
      if (r1 > r0)
        if (absl::Status st = piece(p, r0, r1); !st.ok()) return st;
    }
    return absl::OkStatus();
  }

 private:
  const int64_t* rows_;
  const int64_t* rb_;
  int n_;
  int64_t total_ = 0;
};

// Runs piece over the whole row space in grains of about equal bytes on the pool (one
// job), or in one go without a pool. The grains are dealt out as one run of
// consecutive grains per thread, each claimed from that run's counter: a thread
// streams its own contiguous bytes, so the hardware prefetcher running ahead of one
// grain has already fetched the next (from one shared counter, the threads' grains
// would alternate and every grain start a cold stream: a slower decode,
// docs/performance.md). A thread
// that has finished its run claims the rest of the others', so a late or preempted
// thread still leaves its share to the one that is running.
template <typename Piece>
absl::Status RunGrains(const RowSpace& space, int64_t grain_bytes, ThreadPool* pool, Piece&& piece) {
  const int threads = pool ? pool->num_threads() : 1;
  const int64_t grains = std::clamp<int64_t>(space.total_bytes() / grain_bytes, threads,
                                             threads * kMaxGrainsPerThread);
  if (threads == 1 || grains <= 1) return space.ForEach(Pos{0, 0}, space.Snap(space.total_bytes()), piece);
  // The job's state, so that the job captures one pointer (std::function keeps it
  // inline: no allocation per stage).
  struct alignas(64) Run {  // one thread's consecutive grains [next, end); own cache line
    std::atomic<int64_t> next{0};
    int64_t end = 0;
  };
  constexpr int kMaxRuns = 64;
  struct Shared {
    const RowSpace* space = nullptr;
    std::remove_reference_t<Piece>* piece = nullptr;
    int64_t grains = 0;
    int runs = 0;
    Run run[kMaxRuns];
    std::atomic<bool> failed{false};
    std::mutex mu;
    absl::Status first_error;
  } shared;
  shared.space = &space;
  shared.piece = &piece;
  shared.grains = grains;
  shared.runs = std::min(threads, kMaxRuns);
  for (int r = 0; r < shared.runs; ++r) {
    shared.run[r].next.store(grains * r / shared.runs, std::memory_order_relaxed);
    shared.run[r].end = grains * (r + 1) / shared.runs;
  }
  Shared* sh = &shared;
  const std::function<void(int64_t, int64_t)> job = [sh](int64_t chunk, int64_t) {
    const int64_t total = sh->space->total_bytes();
    for (int k = 0; k < sh->runs; ++k) {  // its own run first, then the others' rests
      Run& run = sh->run[(chunk + k) % sh->runs];
      for (int64_t g; !sh->failed.load(std::memory_order_relaxed) && (g = run.next.fetch_add(1)) < run.end;) {
        const Pos from = sh->space->Snap(total * g / sh->grains);
        const Pos to = sh->space->Snap(total * (g + 1) / sh->grains);
        if (absl::Status st = sh->space->ForEach(from, to, *sh->piece); !st.ok()) {
          std::lock_guard<std::mutex> lock(sh->mu);
          if (sh->first_error.ok()) sh->first_error = st;
          sh->failed.store(true, std::memory_order_relaxed);
        }
      }
    }
  };
  pool->ParallelFor(threads, job, 1);  // one chunk per thread; chunk t starts on run t
  return shared.first_error;
}

}  // namespace

bool CanRunStage(const StageMatmul* parts, int n_parts) {
  if (n_parts <= 0) return false;
  for (int k = 0; k < n_parts; ++k) {
    const BoundWeight* w = parts[k].w;
    if (w == nullptr || parts[k].y == nullptr || w->shape.size() != 2 || w->row_bytes == 0 ||
        w->shape[1] != parts[0].w->shape[1] || (w->data == nullptr && InterleavedData(*w) == nullptr))
      return false;
  }
  return true;
}

absl::Status StageLinear(const StageMatmul* parts, int n_parts, const float* x, ThreadPool* pool) {
  constexpr int kMaxParts = 8;
  if (n_parts <= 0 || n_parts > kMaxParts) return absl::InvalidArgumentError("stage: 1..8 matrices");
  int64_t rows[kMaxParts], rb[kMaxParts];
  for (int k = 0; k < n_parts; ++k) {
    rows[k] = parts[k].w->shape[0];
    rb[k] = static_cast<int64_t>(parts[k].w->row_bytes);
  }
  const RowSpace space(rows, rb, n_parts);
  PreparedByType prepared;
  Prepared acts[kMaxParts];
  for (int k = 0; k < n_parts; ++k) {
    absl::StatusOr<Prepared> a = prepared.For(*parts[k].w, x);
    if (!a.ok()) return a.status();
    acts[k] = *a;
  }
  return RunGrains(space, kGrainBytes, pool,
                   [&](int p, int64_t r0, int64_t r1) { return Rows(*parts[p].w, r0, r1, parts[p].y, acts[p]); });
}

absl::Status StageGated(const BoundWeight& gate, const BoundWeight& up, StageAct act, const float* x,
                        float* y, float* up_rows, ThreadPool* pool) {
  if (gate.shape != up.shape) return absl::InvalidArgumentError("stage: gate and up differ in shape");
  // One row of the space = one gate row and the matching up row.
  const int64_t rows[1] = {gate.shape[0]};
  const int64_t rb[1] = {static_cast<int64_t>(gate.row_bytes + up.row_bytes)};
  const RowSpace space(rows, rb, 1);
  PreparedByType prepared;
  absl::StatusOr<Prepared> gate_acts = prepared.For(gate, x);
  if (!gate_acts.ok()) return gate_acts.status();
  absl::StatusOr<Prepared> up_acts = prepared.For(up, x);
  if (!up_acts.ok()) return up_acts.status();
  return RunGrains(space, kGrainBytes, pool, [&](int, int64_t r0, int64_t r1) {
    absl::Status st = Rows(gate, r0, r1, y, *gate_acts);
    if (st.ok()) st = Rows(up, r0, r1, up_rows, *up_acts);
    // Element-wise, so a row range gives each element what the whole call gives it.
    if (st.ok()) (act == StageAct::kSwiglu ? Swiglu : Geglu)(y + r0, up_rows + r0, r1 - r0, y + r0);
    return st;
  });
}

}  // namespace uaii::backends::cpu
