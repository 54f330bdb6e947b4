// An LRU of expert slices (`#e=N` byte slices of packed MoE banks, runtime/moe.h)
// read from disk: how MoE models whose experts do not fit the memory budget run
// (docs/moe.md). The storage plan sizes it (storage/expert_plan.h), StreamedWeights
// owns it, MoeFfn uses it through MoeWeights::cache.
//
// Acquire(slices) makes every requested slice resident at once: hits are touched,
// misses are read together in (file, offset) order after evicting least recently
// used slices that are not part of the same request. A request larger than the
// capacity fails closed, naming both sizes. The misses of one Acquire are read as one
// batch of storage::ReadRing (storage/read_ring.h): through io_uring, up to kQueueDepth
// reads in flight, queued in file-offset order; where io_uring is unavailable (old
// kernel, seccomp, a build configured without it: CMake option UAII_IO_URING) one
// after another with pread, in the same order (stats().io_uring says which).
//
// Prefetch (optional, off unless enabled): NoteStep records each MoE step's weights
// (keyed by its bank) and the order steps come in; during a decode step MoeFfn
// predicts the next step's experts by applying the next layer's router to this
// layer's input (runtime/moe.cpp) and Prefetch asks a background thread to read them
// while this step computes. Prefetched slices enter the LRU like misses, never evict the slices of
// the latest Acquire (their pointers are in use), never exceed the capacity, and an
// Acquire waits for reads in flight instead of reading a slice twice. Results do not
// change; only when reads happen.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/weights.h"
#include "storage/read_ring.h"

namespace uaii::runtime {

struct ExpertCacheStats {
  uint64_t capacity_bytes = 0;
  uint64_t used_bytes = 0;
  uint64_t hits = 0, misses = 0, evictions = 0;
  uint64_t bytes_read = 0;
  double io_wait_s = 0;  // wall time spent waiting for expert reads
  bool io_uring = false; // reads went through io_uring (else pread)
  bool prefetch = false;  // prefetch enabled
  uint64_t prefetch_reads = 0;   // slices read ahead by the prefetch thread (in bytes_read too)
  uint64_t prefetch_hits = 0;    // of those, found by an Acquire before eviction
  uint64_t prefetch_wasted = 0;  // of those, evicted unused
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
  ExpertCacheStats stats() const;

  // Prefetch (see above). EnablePrefetch before the first Acquire.
  void EnablePrefetch(bool on);
  bool prefetch_enabled() const { return prefetch_; }
  // A MoE step's router (resident) and banks (file-backed), recorded for prediction.
  struct StepWeights {
    BoundWeight router, up, gate, down;
  };
  // Records step `step` (any stable id, e.g. its up bank's file offset) and the order of steps.
  void NoteStep(uint64_t step, const StepWeights& w);
  // The step that came after `step` last time, if any.
  std::optional<StepWeights> NextStep(uint64_t step) const;
  // Starts reading `slices` in the background (dropping any older request).
  void Prefetch(std::vector<BoundWeight> slices);
  // Blocks until the prefetch thread has nothing queued or in progress (tests).
  void WaitForPrefetch();

 private:
  using Key = std::pair<std::string, uint64_t>;  // (file, offset)
  // Slice memory straight from mmap, returned with munmap on eviction: through
  // malloc, slices allocated on the prefetch thread and freed on the engine's land in
  // another arena and below glibc's growing mmap threshold, and freed memory stays
  // resident, so the process outgrows its memory budget (docs/performance.md).
  struct PageFree {
    PageFree() : size(0) {}
    explicit PageFree(uint64_t n) : size(n) {}
    uint64_t size;
    void operator()(uint8_t* p) const;
  };
  struct Entry {
    std::unique_ptr<uint8_t, PageFree> bytes;  // not zero-filled: the read overwrites it
    uint64_t size = 0;
    void Allocate(uint64_t n);
    std::list<Key>::iterator lru;
    bool prefetched = false;  // read ahead and not yet acquired
  };
  bool EvictFor(uint64_t incoming, const std::set<Key>& keep);  // mu_ held
  void Worker();
  absl::StatusOr<int> Fd(const std::string& file);

  ExpertCacheStats stats_;
  std::map<Key, Entry> entries_;
  std::list<Key> lru_;  // front = most recently used
  std::map<std::string, int> fds_;
  storage::ReadRing reader_;  // Acquire's misses (under mu_); the prefetch thread uses pread

  // Prefetch state, all under mu_ (Acquire holds it throughout).
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool prefetch_ = false, stop_ = false;
  std::set<Key> in_use_;      // the latest Acquire's slices
  int reading_ = 0;           // prefetch reads in flight
  uint64_t reserved_ = 0;     // bytes reserved by them
  std::vector<BoundWeight> job_;  // the latest prefetch request (older ones are dropped)
  bool has_job_ = false;
  bool busy_ = false;         // the worker is working through a request
  std::map<uint64_t, StepWeights> steps_;              // step -> its weights
  std::map<uint64_t, uint64_t> next_;                  // step -> the step after it
  uint64_t prev_step_ = 0;
  bool has_prev_ = false;
  std::thread worker_;
};

}  // namespace uaii::runtime
