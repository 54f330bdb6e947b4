// An LRU of expert slices (`#e=N` byte slices of packed MoE banks, runtime/moe.h)
// read from disk: how MoE models whose experts do not fit the memory budget run
// (docs/moe.md). The storage plan sizes it (storage/expert_plan.h), StreamedWeights
// owns it, MoeFfn uses it through MoeWeights::cache.
//
// Acquire(slices) makes every requested slice resident at once: hits are touched,
// misses are read together in (file, offset) order after evicting least recently
// used slices that are not part of the same request. A request larger than the
// capacity fails closed, naming both sizes. The misses of one Acquire are submitted
// together to an io_uring (liburing; up to kQueueDepth reads in flight, queued in
// file-offset order); where io_uring is unavailable (old kernel, seccomp) they are
// read one after another with pread, in the same order.
#pragma once
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/weights.h"

namespace uaii::runtime {

struct ExpertCacheStats {
  uint64_t capacity_bytes = 0;
  uint64_t used_bytes = 0;
  uint64_t hits = 0, misses = 0, evictions = 0;
  uint64_t bytes_read = 0;
  double io_wait_s = 0;  // wall time spent waiting for expert reads
  bool io_uring = false; // reads went through io_uring (else pread)
  double hit_rate() const { return hits + misses ? double(hits) / double(hits + misses) : 0.0; }
};

class ExpertCache {
 public:
  static constexpr unsigned kQueueDepth = 32;
  explicit ExpertCache(uint64_t capacity_bytes, bool use_io_uring = true);
  ~ExpertCache();
  ExpertCache(const ExpertCache&) = delete;
  ExpertCache& operator=(const ExpertCache&) = delete;

  // `slices`: 2-D expert views (ExpertSlice) with `file` and `offset` set. On success
  // (*data)[i] points at slice i's bytes until the next Acquire.
  absl::Status Acquire(const std::vector<BoundWeight>& slices, std::vector<const uint8_t*>* data);
  const ExpertCacheStats& stats() const { return stats_; }

 private:
  using Key = std::pair<std::string, uint64_t>;  // (file, offset)
  struct Entry {
    std::vector<uint8_t> bytes;
    std::list<Key>::iterator lru;
  };
  absl::StatusOr<int> Fd(const std::string& file);
  struct Read {
    int fd;
    uint8_t* dst;
    uint64_t offset, bytes;
    const std::string* file;
  };
  absl::Status ReadAll(std::vector<Read>& reads);  // io_uring, else pread
  absl::Status ReadPread(const Read& r);
  struct Ring;

  ExpertCacheStats stats_;
  std::map<Key, Entry> entries_;
  std::list<Key> lru_;  // front = most recently used
  std::map<std::string, int> fds_;
  std::unique_ptr<Ring> ring_;  // null: pread
};

}  // namespace uaii::runtime
