#include "kernels/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <utility>

namespace uaii {
namespace {

// Reads a small integer file under /sys; -1 when absent.
int ReadSysInt(const std::string& path) {
  std::ifstream in(path);
  int v = -1;
  if (!(in >> v)) return -1;
  return v;
}

}  // namespace

int ThreadPool::DefaultThreadCount() {
  cpu_set_t set;
  CPU_ZERO(&set);
  int logical = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return logical;
  std::set<std::pair<int, int>> cores;  // (package, core) of each allowed CPU
  int allowed = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    ++allowed;
    const std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    const int core = ReadSysInt(base + "core_id");
    const int pkg = ReadSysInt(base + "physical_package_id");
    cores.insert(core < 0 ? std::make_pair(-1, cpu) : std::make_pair(pkg, core));
  }
  return std::max(1, static_cast<int>(cores.empty() ? allowed : cores.size()));
}

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads <= 0) num_threads = DefaultThreadCount();
  workers_.reserve(static_cast<size_t>(num_threads - 1));
  for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::WorkerLoop(int index) {
  uint64_t seen = 0;
  for (;;) {
    const std::function<void(int64_t, int64_t)>* fn;
    int64_t n;
    int chunks;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      fn = fn_;
      n = n_;
      chunks = chunks_;
    }
    if (index < chunks) {
      (*fn)(n * index / chunks, n * (index + 1) / chunks);
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_cv_.notify_one();
    }
  }
}

void ThreadPool::ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                             int64_t min_chunk) {
  if (n <= 0) return;
  min_chunk = std::max<int64_t>(1, min_chunk);
  const int64_t by_size = std::max<int64_t>(1, n / min_chunk);
  const int chunks = static_cast<int>(std::min<int64_t>(num_threads(), by_size));
  if (chunks == 1) {
    fn(0, n);
    return;
  }
  std::lock_guard<std::mutex> run_lock(run_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = &fn;
    n_ = n;
    chunks_ = chunks;
    pending_ = chunks - 1;
    ++generation_;
  }
  work_cv_.notify_all();
  fn(0, n / chunks);
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return pending_ == 0; });
}

}  // namespace uaii
