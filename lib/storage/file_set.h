// The files weights are streamed from, and how their bytes are read.
//
// Two read paths:
//   Read        exact buffered pread into any memory (pinned tensors, embedding rows).
//               When the file streams with direct I/O, reads under kSequentialReadBytes
//               (norms, biases, embedding rows) and ReadStaged's page-cache copies go
//               through a second descriptor with POSIX_FADV_RANDOM: without it every
//               such read starts the kernel's readahead (up to the device's
//               read_ahead_kb) into the streamed tensors around it, and the page-cache
//               copies of those pages start more, so a cold run would find streamed
//               bytes cached and copy them instead of reading them. Larger reads keep
//               readahead, which a large pread needs for its speed (docs/storage.md).
//   ReadStaged  a large range into an aligned staging buffer, the streaming path:
//               1. bytes already in the page cache are copied from it (mincore() on
//                  an untouched mapping tells which; warm runs stay warm);
//               2. the rest is read with direct I/O (O_DIRECT: the disk DMAs into the
//                  staging buffer, no page-cache copy on the CPU, nothing added to the
//                  page cache), as kDirectIoAlign-aligned pieces of `piece_bytes`,
//                  `queue_depth` of them in flight through io_uring so the device
//                  queue stays full; plain pread when io_uring is unavailable (both
//                  through storage/read_ring.h).
//   The range is widened to kDirectIoAlign boundaries, so a staging buffer needs
//   kDirectIoSlack bytes beyond its largest chunk (the storage plan counts them);
//   a chunk that does not fit with the slack is read buffered.
//
// Fallbacks, decided per file: a filesystem that refuses O_DIRECT at open (EINVAL) or
// at the first direct read (EINVAL) is read buffered from then on. A short read (a
// signal, the end of the file) is continued with pread; a range past the end of the
// file fails naming the file, the range and the file's size.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/read_ring.h"

namespace uaii::storage {

// Direct I/O offsets, lengths and buffers are multiples of this (the logical block
// size of common devices is 512 or 4096; 4096 satisfies both).
constexpr uint64_t kDirectIoAlign = 4096;
// A staging buffer needs this much beyond its chunk to read it with direct I/O: the
// range is widened down to an aligned start and up to an aligned end.
constexpr uint64_t kDirectIoSlack = 2 * kDirectIoAlign;
// Read() of at least this many bytes keeps the kernel's readahead (a pinned matrix);
// smaller ones read exactly their pages when the file streams with direct I/O.
constexpr uint64_t kSequentialReadBytes = uint64_t{4} << 20;

// Owned, kDirectIoAlign-aligned bytes (usable as a direct I/O destination). From
// kHugeAllocBytes up they are mapped 2 MiB-aligned and advised MADV_HUGEPAGE (the
// mapping is the size rounded to 4 KiB: only whole 2 MiB ranges inside it become huge
// pages, so nothing beyond the plan's bytes is committed). Why: a direct read's
// request is cut at the device's max_segments runs of physically contiguous memory
// (a few hundred on a virtio disk); 4 KiB pages make a 4 MiB request 1024 segments,
// i.e. several requests, and 2 MiB pages make it two segments.
// UAII_HUGE_PAGES=0 skips the advice (A/B), as util/huge_pages.h does.
struct AlignedBytes {
  struct Free {
    Free() noexcept : mapped(0) {}
    explicit Free(uint64_t m) noexcept : mapped(m) {}
    void operator()(uint8_t* p) const;
    uint64_t mapped;  // bytes mapped (0: from posix_memalign)
  };
  std::unique_ptr<uint8_t, Free> data;
  uint64_t size = 0;
  static AlignedBytes Allocate(uint64_t bytes);
};
constexpr uint64_t kHugeAllocBytes = uint64_t{2} << 20;

// Test seams: replace the system calls (nullptr = the real one).
struct FileIoHooks {
  std::function<int(const char* path, int flags)> open;
  std::function<ssize_t(int fd, void* buf, size_t n, off_t offset)> pread;
};

struct FileSetOptions {
  bool direct = true;                       // try O_DIRECT for ReadStaged
  bool uring = true;                        // io_uring for direct pieces (else pread)
  bool use_page_cache = true;               // copy what the page cache holds first
  int queue_depth = 8;                      // direct pieces in flight
  uint64_t piece_bytes = uint64_t{8} << 20; // size of one direct read
  FileIoHooks hooks;
};

// What the reads did (for the benchmark and the --json memory fields).
struct FileIoCounters {
  uint64_t direct_bytes = 0;    // read from the device with O_DIRECT (aligned range)
  uint64_t cached_bytes = 0;    // copied from the page cache by ReadStaged
  uint64_t buffered_bytes = 0;  // read by buffered pread (Read, fallbacks)
  double staged_seconds = 0;    // time inside ReadStaged
};

// One chunk read asynchronously with direct I/O (FileSet::BeginStaged / WaitStaged).
struct StagedRead {
  int file = -1;
  uint64_t offset = 0, bytes = 0, capacity = 0, a0 = 0;
  uint8_t* buf = nullptr;
  ReadBatch batch;      // its direct pieces on the asynchronous ring
  bool active = false;  // started and not yet waited for
  double started = 0;   // steady-clock seconds at BeginStaged
};

class FileSet {
 public:
  explicit FileSet(FileSetOptions options = {});
  ~FileSet();
  FileSet(const FileSet&) = delete;
  FileSet& operator=(const FileSet&) = delete;

  // Opens (or finds) `path`; returns its index.
  absl::StatusOr<int> Open(const std::string& path);
  // Reads exactly `bytes` at `offset` into dst (buffered); errors name the file and range.
  absl::Status Read(int file, uint64_t offset, uint64_t bytes, uint8_t* dst) const;
  // Reads [offset, offset + bytes) into `buf` (kDirectIoAlign-aligned, `capacity`
  // bytes); returns where the range starts inside buf.
  absl::StatusOr<const uint8_t*> ReadStaged(int file, uint64_t offset, uint64_t bytes, uint8_t* buf,
                                            uint64_t capacity) const;

  // Which pages of `file` the page cache holds now (bit 0 of one byte per page); empty
  // when that cannot be told (no mapping: buffered-only files, mincore refused).
  std::vector<unsigned char> PageCacheResidency(int file) const;
  // Drops from the page cache the pages of [offset, offset + bytes) that it holds now
  // and did not hold in `before` (PageCacheResidency taken earlier): what this
  // process's own buffered reads pulled in around them (the readahead of a pinned
  // tensor's read runs tens of MiB into the streamed tensors after it), never a page
  // that was cached before. A cold run then reads every streamed byte from the device
  // (file_set_test checks it; docs/storage.md). Returns the bytes dropped.
  uint64_t DropReadahead(int file, const std::vector<unsigned char>& before, uint64_t offset, uint64_t bytes) const;

  // Asynchronous staged reads, for the streaming engine: BeginStaged submits the
  // chunk's direct pieces (io_uring) and returns at once; WaitStaged returns when they
  // are all in. The thread that computes starts the next slice's read itself, so the
  // device gets it without a thread hand-over (a reader thread woken on a core the
  // compute threads hold starts late, the device idle meanwhile; docs/storage.md).
  // BeginStaged starts nothing and returns false when the chunk cannot be read this
  // way as a whole (a page of it in the page cache, no direct I/O or io_uring, a buffer
  // without alignment room): ReadStaged then. Reads may be in flight together; one
  // thread calls both (for a given FileSet), and `r` stays put until WaitStaged. A
  // refusal of direct I/O or a failed piece is read again through ReadStaged, which
  // names the cause. The buffer belongs to the kernel until WaitStaged returns.
  bool BeginStaged(int file, uint64_t offset, uint64_t bytes, uint8_t* buf, uint64_t capacity, StagedRead* r) const;
  absl::StatusOr<const uint8_t*> WaitStaged(StagedRead* r) const;

  const std::string& path(int file) const { return files_[file]->path; }
  uint64_t size(int file) const { return files_[file]->size; }
  // True while ReadStaged may use direct I/O on this file (false after a refusal).
  bool direct(int file) const;
  bool uring() const;
  FileIoCounters counters() const;

 private:
  struct File {
    std::string path;
    int fd = -1;         // buffered, with readahead
    int random_fd = -1;  // buffered, POSIX_FADV_RANDOM (no readahead); -1: use fd
    int direct_fd = -1;  // O_DIRECT, -1 when refused or disabled
    uint64_t size = 0;
    void* map = nullptr; // PROT_READ mapping for mincore(), never read; null: no page-cache probe
  };
  absl::Status CheckRange(const File& f, uint64_t offset, uint64_t bytes) const;
  absl::Status ReadFully(const File& f, int fd, uint64_t offset, uint64_t bytes, uint8_t* dst) const;

  FileSetOptions options_;
  std::vector<std::unique_ptr<File>> files_;
  std::unique_ptr<ReadRing> ring_;        // ReadStaged's direct pieces (io_uring, else pread)
  std::unique_ptr<ReadRing> async_ring_;  // BeginStaged / WaitStaged; null without io_uring
  mutable std::mutex staged_mu_;  // one ReadStaged at a time: the ring, the per-file flags
  mutable std::mutex mu_;         // the counters
  mutable FileIoCounters counters_;
  mutable std::vector<unsigned char> mincore_vec_;  // under staged_mu_
};

}  // namespace uaii::storage
