#include "kernels/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <chrono>
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
  if (const char* env = std::getenv("UAII_POOL_SPIN_US")) spin_us_ = std::clamp(std::atoi(env), 0, 1000);
  if (num_threads <= 0) num_threads = DefaultThreadCount();
  claimed_ = std::make_unique<std::atomic<uint64_t>[]>(static_cast<size_t>(num_threads));
  for (int i = 0; i < num_threads; ++i) claimed_[i].store(0, std::memory_order_relaxed);
  workers_.reserve(static_cast<size_t>(num_threads - 1));
  for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true);
  }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

namespace {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spins until done() or `micros` passed; true when done() became true.
template <typename Done>
bool SpinUntil(Done done, int micros) {
  if (micros <= 0) return done();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(micros);
  for (int i = 0;; ++i) {
    if (done()) return true;
    CpuRelax();
    if ((i & 63) == 63 && std::chrono::steady_clock::now() >= deadline) return done();
  }
}

}  // namespace

bool ThreadPool::Claim(int chunk, uint64_t generation) {
  uint64_t last = claimed_[chunk].load(std::memory_order_acquire);
  return last < generation &&
         claimed_[chunk].compare_exchange_strong(last, generation, std::memory_order_acq_rel);
}

void ThreadPool::WorkerLoop(int index) {
  uint64_t seen = 0;
  for (;;) {
    auto fresh = [&] {
      if (stop_.load(std::memory_order_acquire)) return true;
      const uint64_t g = generation_.load(std::memory_order_acquire);
      return g != seen && (g & 1) == 0;
    };
    if (!SpinUntil(fresh, spin_us_)) {
      std::unique_lock<std::mutex> lock(mu_);
      ++sleepers_;
      work_cv_.wait(lock, fresh);
      --sleepers_;
    }
    if (stop_.load(std::memory_order_acquire)) return;
    // Read the job under the sequence lock: a worker that takes no part in a job is
    // not waited for, so by the time it reads, ParallelFor may be writing the next
    // job's fields. An odd or changed generation means a torn read: read again.
    // (Without the lock such a worker could pair one job's function with another's
    // size and run it: a rare crash under preemption.)
    uint64_t g;
    const std::function<void(int64_t, int64_t)>* fn;
    int64_t n;
    int chunks;
    for (;;) {
      g = generation_.load(std::memory_order_acquire);
      if (g & 1) {
        CpuRelax();
        continue;
      }
      fn = fn_.load(std::memory_order_relaxed);
      n = n_.load(std::memory_order_relaxed);
      chunks = chunks_.load(std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_acquire);
      if (generation_.load(std::memory_order_relaxed) == g) break;
    }
    seen = g;
    if (index < chunks && Claim(index, g)) {
      (*fn)(n * index / chunks, n * (index + 1) / chunks);
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(mu_);
        done_cv_.notify_one();
      }
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
  // Sequence lock (thread_pool.h): odd, write the job, even.
  generation_.fetch_add(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  fn_.store(&fn, std::memory_order_relaxed);
  n_.store(n, std::memory_order_relaxed);
  chunks_.store(chunks, std::memory_order_relaxed);
  pending_.store(chunks - 1, std::memory_order_relaxed);
  int sleepers;
  {
    // Under mu_, so that a worker about to sleep either sees the new job in its wait
    // predicate or is counted in sleepers_ and gets the notification.
    std::lock_guard<std::mutex> lock(mu_);
    generation_.fetch_add(1, std::memory_order_release);
    sleepers = sleepers_;
  }
  if (sleepers > 0) work_cv_.notify_all();
  fn(0, n / chunks);
  // Chunks whose workers have not started by now: run them here (see the top).
  const uint64_t g = generation_.load(std::memory_order_relaxed);
  for (int c = 1; c < chunks; ++c)
    if (Claim(c, g)) {
      fn(n * c / chunks, n * (c + 1) / chunks);
      pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
  auto done = [&] { return pending_.load(std::memory_order_acquire) == 0; };
  if (!SpinUntil(done, spin_us_)) {
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, done);
  }
}

}  // namespace uaii
