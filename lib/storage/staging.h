// Reads weight bytes from disk into staging buffers, prefetching the next chunk on a
// background thread while the current one computes (ARCHITECTURE.md, "storage").
//
// A chunk is a byte range of a file (a whole tensor or a row slice of one). The
// engine consumes chunks in a fixed cyclic sequence (the order the graph's matmuls
// read them, token after token), so with two buffers chunk i+1 is read while chunk i
// is used. A request out of sequence is read synchronously (a staging miss). Reads
// go through FileSet::ReadStaged (page cache when it holds the bytes, else direct
// I/O with several reads in flight; storage/file_set.h), never the mapping, so the
// process's resident memory is the buffers, not the file.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/file_set.h"

namespace uaii::storage {

struct Chunk {
  int file = 0;         // index into the reader's files
  uint64_t offset = 0;  // absolute file offset
  uint64_t bytes = 0;
};

struct StagingStats {
  uint64_t bytes_read = 0;      // chunk bytes read (disk or page cache)
  double read_seconds = 0;      // time spent reading them (worker and misses)
  double io_wait_seconds = 0;   // time the engine waited for bytes
  uint64_t hits = 0;            // chunks already staged when asked for
  uint64_t misses = 0;          // chunks read synchronously
  // Prefetches the engine started itself (direct reads submitted from the computing
  // thread, FileSet::BeginStaged) and those handed to the worker thread (page-cache
  // copies, fallbacks), and the worker's hand-over time: from the engine's request to
  // the worker starting the read (the device idle meanwhile when the chunk is cold,
  // which is why cold slices do not go there; docs/storage.md).
  uint64_t engine_reads = 0;
  uint64_t worker_reads = 0;
  double handoff_seconds = 0;
};

class StagingPipeline {
 public:
  // `buffers` (1 or 2) of `buffer_bytes` each; every chunk must fit a buffer (with
  // kDirectIoSlack to spare for a direct read; a chunk without it is read buffered).
  StagingPipeline(const FileSet* files, std::vector<Chunk> sequence, int buffers, uint64_t buffer_bytes);
  ~StagingPipeline();
  StagingPipeline(const StagingPipeline&) = delete;
  StagingPipeline& operator=(const StagingPipeline&) = delete;

  // Bytes of sequence chunk `i`, valid until the next Acquire. Starts the prefetch of
  // chunk i+1 (cyclic) when there is a second buffer.
  absl::StatusOr<const uint8_t*> Acquire(size_t i);

  // Reads a range outside the sequence (embedding rows) into `dst`, counted as I/O wait.
  absl::Status ReadDirect(int file, uint64_t offset, uint64_t bytes, uint8_t* dst);

  StagingStats stats() const;
  size_t size() const { return sequence_.size(); }

 private:
  struct Slot {
    AlignedBytes buf;
    const uint8_t* data = nullptr;  // the chunk's first byte inside buf
    int64_t chunk = -1;   // chunk held (valid when !loading)
    bool loading = false;
    absl::Status status;
    // A direct read the engine started itself (FileSet::BeginStaged) of chunk
    // `async_chunk`: waited for by the engine, never by the worker.
    StagedRead async;
    int64_t async_chunk = -1;
  };
  void Worker();
  // Waits for slot k's asynchronous read (engine thread, mu_ not held) and records it.
  void FinishAsync(size_t k, std::unique_lock<std::mutex>& l);

  const FileSet* files_;
  std::vector<Chunk> sequence_;
  std::vector<Slot> slots_;
  int current_ = -1;            // slot the engine is using
  int64_t request_ = -1;        // chunk the worker should load
  int request_slot_ = -1;
  bool stop_ = false;
  bool engine_reads_ = true;  // BeginStaged for cold chunks; UAII_STAGING_ASYNC=0: the worker reads all (A/B)
  std::chrono::steady_clock::time_point request_at_{};      // engine: when request_ was posted
  mutable std::mutex mu_;
  std::condition_variable cv_;
  StagingStats stats_;
  std::thread worker_;
};

}  // namespace uaii::storage
