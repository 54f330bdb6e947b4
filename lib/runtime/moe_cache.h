// An LRU of expert slices (`#e=N` byte slices of packed MoE banks, runtime/moe.h)
// read from disk with pread: the building block for running MoE models whose
// experts do not fit the memory budget (docs/moe.md, "Not done yet"). Not yet
// wired into the storage plan; MoeFfn uses it when MoeWeights::cache is set.
//
// Acquire(slices) makes every requested slice resident at once: hits are touched,
// misses are read together in (file, offset) order after evicting least recently
// used slices that are not part of the same request. A request larger than the
// capacity fails closed, naming both sizes.
#pragma once
#include <cstdint>
#include <list>
#include <map>
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
  double io_wait_s = 0;  // wall time spent in pread
  double hit_rate() const { return hits + misses ? double(hits) / double(hits + misses) : 0.0; }
};

class ExpertCache {
 public:
  explicit ExpertCache(uint64_t capacity_bytes) { stats_.capacity_bytes = capacity_bytes; }
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

  ExpertCacheStats stats_;
  std::map<Key, Entry> entries_;
  std::list<Key> lru_;  // front = most recently used
  std::map<std::string, int> fds_;
};

}  // namespace uaii::runtime
