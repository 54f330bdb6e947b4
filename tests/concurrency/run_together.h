// Runs work(i) for i in [0, n) on n threads released at the same moment (each waits
// until all have started), then joins them: the most overlap a test can ask for.
#pragma once

#include <atomic>
#include <thread>
#include <vector>

namespace uaii::test {

template <typename Work>
void RunTogether(int n, const Work& work) {
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      ready.fetch_add(1);
      while (ready.load() < n) std::this_thread::yield();
      work(i);
    });
  }
  for (auto& t : threads) t.join();
}

}  // namespace uaii::test
