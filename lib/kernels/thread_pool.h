// A fixed set of worker threads for data-parallel loops. Work is split into
// contiguous chunks, one per thread, so which thread computes which element never
// changes results (kernels never split a reduction across threads). Idle workers
// sleep on a condition variable; nothing spins.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <functional>
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
  // runs chunk 0. Concurrent calls from different threads are serialized. `fn` must
  // not call ParallelFor on the same pool.
  void ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                   int64_t min_chunk = 1);

  // Physical cores available to this process (hyper-threads of one core count
  // once), at least 1.
  static int DefaultThreadCount();

 private:
  void WorkerLoop(int index);

  std::vector<std::thread> workers_;
  std::mutex run_mu_;  // serializes ParallelFor callers
  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  uint64_t generation_ = 0;  // bumped per job; guarded by mu_
  bool stop_ = false;
  int pending_ = 0;          // worker chunks not yet finished
  int64_t n_ = 0;
  int chunks_ = 0;
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
};

}  // namespace uaii
