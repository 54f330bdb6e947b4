#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <thread>
#include <mutex>
#include <vector>

#include "kernels/thread_pool.h"

TEST_CASE("thread pool: chunks cover the range once, contiguous and in order", "[thread_pool]") {
  for (int threads : {1, 2, 3, 4}) {
    uaii::ThreadPool pool(threads);
    CHECK(pool.num_threads() == threads);
    for (int64_t n : {0, 1, 2, 5, 17, 1000}) {
      std::vector<int> hits(static_cast<size_t>(n), 0);
      std::mutex mu;
      std::vector<std::pair<int64_t, int64_t>> chunks;
      pool.ParallelFor(n, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) ++hits[static_cast<size_t>(i)];
        std::lock_guard<std::mutex> lock(mu);
        chunks.emplace_back(b, e);
      });
      for (int h : hits) CHECK(h == 1);
      CHECK(static_cast<int64_t>(chunks.size()) <= std::max<int64_t>(1, std::min<int64_t>(threads, n)));
      for (auto [b, e] : chunks) CHECK(b < e);
    }
  }
}

TEST_CASE("thread pool: min_chunk limits the number of chunks", "[thread_pool]") {
  uaii::ThreadPool pool(4);
  std::atomic<int> calls{0};
  pool.ParallelFor(20, [&](int64_t b, int64_t e) { ++calls; CHECK(e - b >= 10); }, 10);
  CHECK(calls == 2);
}

TEST_CASE("thread pool: many back-to-back jobs and concurrent callers", "[thread_pool]") {
  uaii::ThreadPool pool(3);
  std::atomic<int64_t> total{0};
  auto job = [&] {
    for (int r = 0; r < 300; ++r) {
      pool.ParallelFor(7, [&](int64_t b, int64_t e) { total += e - b; });
    }
  };
  std::thread other(job);
  job();
  other.join();
  CHECK(total == 2 * 300 * 7);
  CHECK(uaii::ThreadPool::DefaultThreadCount() >= 1);
}

// Jobs of alternating sizes, so that most workers sit out every other job: a worker
// that sits one out is not waited for and may still be reading that job's fields
// while the next is written. Each job's function checks its ranges against its own
// size; before the sequence lock a torn read could hand a worker one job's function
// with another's size (a rare out-of-range crash in the matmul tests under load).
TEST_CASE("thread pool: workers that sit a job out never run a torn job", "[thread_pool]") {
  uaii::ThreadPool pool(4);
  std::atomic<int64_t> bad{0}, runs{0};
  for (int it = 0; it < 100000; ++it) {
    const int64_t n = (it % 3 == 0) ? 4 : 1 + it % 2;  // 4 chunks, then 2 or 1
    std::vector<int> hits(static_cast<size_t>(n), 0);
    pool.ParallelFor(n, [&, n](int64_t b, int64_t e) {
      if (b < 0 || e > n || b >= e) {
        bad.fetch_add(1);
        return;
      }
      for (int64_t i = b; i < e; ++i) ++hits[static_cast<size_t>(i)];
      runs.fetch_add(1);
    });
    for (int h : hits) REQUIRE(h == 1);
  }
  CHECK(bad.load() == 0);
  CHECK(runs.load() > 0);
}

// Workers that sleep at once (no spin) wake 10-50 us after a job is published, long
// after the caller has run its own empty chunk: the caller claims and runs theirs
// instead of waiting, and a worker that wakes to a claimed chunk skips it. Every
// element is still run exactly once.
TEST_CASE("thread pool: the caller runs the chunks of workers that have not started", "[thread_pool]") {
  setenv("UAII_POOL_SPIN_US", "0", 1);
  uaii::ThreadPool pool(3);
  unsetenv("UAII_POOL_SPIN_US");
  const std::thread::id caller = std::this_thread::get_id();
  int by_caller = 0;
  for (int it = 0; it < 2000; ++it) {
    std::vector<int> hits(3, 0);
    std::vector<std::thread::id> who(3);
    pool.ParallelFor(3, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        ++hits[static_cast<size_t>(i)];
        who[static_cast<size_t>(i)] = std::this_thread::get_id();
      }
    });
    for (int h : hits) REQUIRE(h == 1);
    by_caller += (who[1] == caller) + (who[2] == caller);
  }
  CHECK(by_caller > 0);
}
