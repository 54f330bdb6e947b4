// A fixed set of worker threads for data-parallel loops. Work is split into
// contiguous chunks, one per thread, so which thread computes which element never
// changes results (kernels never split a reduction across threads).
//
// Waiting: a worker that finishes a job spins for a bounded time (spin_us_, default
// 20 us) on an atomic job counter before it sleeps on a condition variable, and the
// caller spins as long for the workers' chunks before it sleeps. Within a token the
// next job comes a few microseconds later, so a short spin saves the condition
// variable's wake-up of nearly every one of the jobs of a token. A long spin is what
// hurts on a loaded machine (spinning threads hold the cores the other jobs need), so
// it stays short and bounded (the figures behind both: docs/performance.md, "Thread
// pool"); UAII_POOL_SPIN_US (0..1000) overrides it, 0 = sleep at once. An idle pool
// always ends up asleep.
//
// Late workers: each chunk is claimed once, by its worker or by the caller. When the
// caller has run chunk 0 it claims every chunk whose worker has not started yet and
// runs it itself, instead of waiting for a descheduled or sleeping worker to come
// back (on a loaded machine that wait is a scheduler tick, milliseconds, for jobs of
// a few microseconds). A worker that comes back late finds its chunk taken
// and skips it. Which thread runs a chunk never changes its result.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace uaii {

class ThreadPool {
 public:
  // `num_threads` counts the calling thread, which also runs a chunk: 1 starts no
  // worker. <= 0 means DefaultThreadCount().
  explicit ThreadPool(int num_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(begin, end) on disjoint contiguous chunks covering [0, n) and returns
  // when all are done. At most num_threads() chunks, each at least `min_chunk` long
  // (except when n itself is smaller); chunk c covers [n*c/k, n*(c+1)/k). The caller
  // runs chunk 0, and any chunk whose worker has not started when chunk 0 is done.
  // Concurrent calls from different threads are serialized. `fn` must not call
  // ParallelFor on the same pool.
  void ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                   int64_t min_chunk = 1);

  // Physical cores available to this process (hyper-threads of one core count
  // once), at least 1.
  static int DefaultThreadCount();

 private:
  void WorkerLoop(int index);
  // Claims chunk `chunk` of job `generation` (see claimed_); true once per chunk and job.
  bool Claim(int chunk, uint64_t generation);

  int spin_us_ = 20;  // see the comment at the top

  std::vector<std::thread> workers_;
  std::mutex run_mu_;  // serializes ParallelFor callers
  std::mutex mu_;      // guards sleeping and waking; the job itself is in atomics
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  // A sequence lock over the job fields below: odd while ParallelFor writes them,
  // even (and new) once a job is published (the second bump under mu_).
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  std::atomic<int> pending_{0};          // chunks 1.. not yet finished
  // claimed_[c]: the generation of the last job whose chunk c someone claimed; a
  // claim is a compare-exchange from an older generation, so each chunk of a job
  // runs once and a worker still holding an old job's fields claims nothing.
  std::unique_ptr<std::atomic<uint64_t>[]> claimed_;
  int sleepers_ = 0;                     // workers waiting on work_cv_; guarded by mu_
  // The current job, written between generation_'s two bumps.
  std::atomic<int64_t> n_{0};
  std::atomic<int> chunks_{0};
  std::atomic<const std::function<void(int64_t, int64_t)>*> fn_{nullptr};
};

}  // namespace uaii
