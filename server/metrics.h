// What the server counts, and its Prometheus text form (GET /metrics; the dashboard
// reads it too). Counters only grow; gauges are read when /metrics is asked.
#pragma once
#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "uaii/session.h"

namespace uaii::server {

// The figures read at scrape time.
struct Gauges {
  bool loaded = false;
  int slots = 0, busy = 0, queued = 0;
  int64_t rss_bytes = 0;
  StorageStats storage;  // budget, pinned / streamed weights, KV, expert cache
  ComputeThreads::BatchStats batch;  // the slots' batched forward passes
  std::string model;     // the model's id (a label of uaii_model_info)
  std::string device;
};

class Metrics {
 public:
  // A finished request: its route and the status answered (499: the client left).
  void CountRequest(std::string_view route, int status);
  // A generation's tokens, added as it ends.
  void CountTokens(int64_t prompt, int64_t cached, int64_t generated, int64_t reasoning);
  // One generated token, now: the live tokens/s figure counts these.
  void TokenGenerated();
  // Generated tokens per second over the last few seconds, all slots together.
  double RecentTokensPerSecond() const;

  std::string Prometheus(const Gauges& g) const;

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr int kWindowSeconds = 5;
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  int64_t prompt_ = 0, cached_ = 0, generated_ = 0, reasoning_ = 0;
  // Tokens per whole second, a ring indexed by second % size (with the second it holds).
  std::array<std::pair<int64_t, int64_t>, kWindowSeconds + 1> per_second_{};
  const Clock::time_point start_ = Clock::now();
};

// This process's resident set now (/proc/self/statm), in bytes; 0 where unknown.
int64_t CurrentRssBytes();

}  // namespace uaii::server
