// Batched positional reads into caller buffers: the one place that drives io_uring
// (liburing). The file set's staged reads (storage/file_set.h) and the MoE expert cache
// (runtime/moe_cache.h) read through it.
//
// A batch is a list of ReadRequests. Each request is cut into pieces of at most
// max_piece_bytes (one SQE's length is 32-bit; the file set's direct reads use smaller
// pieces so that several are in the device queue at once); up to queue_depth pieces are
// in flight, submitted in the batch's order. Every submitted piece is waited for before
// a batch returns, whatever happens, because the kernel writes into the caller's buffers.
//
// Short reads and retries: a piece completing with EINTR or EAGAIN is submitted again;
// a short piece is continued from where it stopped, on the ring with the same
// descriptor or, for a request with a tail_fd (direct I/O, whose remainder may be
// unaligned), with pread on tail_fd once the ring's pieces are in. The end of the file
// before a request's `needed` bytes arrived is an error naming the file, the offset and
// the file's size; bytes past `needed` (a direct read's alignment padding) may be cut
// short by the end of the file.
//
// Without io_uring (the build's UAII_IO_URING off, a kernel or seccomp policy that
// refuses io_uring_setup, use_io_uring false, or a pread test seam) every request is
// read with pread, one after another in the batch's order, each in as few calls as the
// kernel allows: the block layer splits one large pread into device-sized requests and
// keeps them in flight together, so pieces are not needed there. stats() says which
// path ran. The bytes are the same either way.
//
// One thread at a time submits to and waits on a ReadRing (io_uring's queues are not
// shared between threads); stats() may be read from any thread.
#pragma once
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace uaii::storage {

// Replaces ::pread (a test seam); empty: the real one.
using PreadFn = std::function<ssize_t(int fd, void* buf, size_t n, off_t offset)>;

struct ReadRequest {
  static constexpr uint64_t kAll = ~uint64_t{0};
  int fd = -1;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  uint8_t* dst = nullptr;
  std::string_view name;   // the file, for errors; outlives the batch
  uint64_t needed = kAll;  // bytes from `offset` that must arrive (at most `bytes`)
  int tail_fd = -1;        // a short read's remainder is read with pread here; -1: on fd
};

// What one batch did.
struct ReadReport {
  uint64_t bytes = 0;       // bytes the requests' own descriptors returned
  uint64_t tail_bytes = 0;  // remainders read with pread on tail_fd
  int error = 0;            // errno of the first failed read (0: none, or the end of the file)
  // The first failure was EINVAL before any byte of the batch arrived: the descriptor
  // refuses these reads (O_DIRECT on a filesystem without direct I/O).
  bool refused = false;
};

struct ReadRingOptions {
  bool use_io_uring = true;
  unsigned queue_depth = 32;                     // pieces in flight
  uint64_t max_piece_bytes = uint64_t{1} << 30;  // longest piece (rounded down to 4 KiB)
  PreadFn pread;                                 // set: every read is a pread through it
};

struct ReadRingStats {
  bool io_uring = false;      // batches go through io_uring (else pread)
  uint64_t batches = 0;
  uint64_t uring_pieces = 0;  // piece completions with bytes, through io_uring
  uint64_t pread_calls = 0;   // pread calls that returned bytes (the fallback, tails)
  uint64_t bytes = 0;         // bytes read either way
  uint64_t retries = 0;       // pieces submitted again (short, EINTR, EAGAIN)
};

class ReadRing;

// A batch in flight (ReadRing::Submit / Wait), owned by the caller. It stays put from
// Submit until Wait returns (the kernel's completions point into it); copying or
// moving one is allowed only while it is not active.
class ReadBatch {
 public:
  bool active() const { return active_; }

 private:
  friend class ReadRing;
  struct Piece {
    ReadBatch* batch;
    size_t request;
    uint8_t* dst;
    uint64_t offset, len;
  };
  struct Tail {
    size_t request;
    uint8_t* dst;
    uint64_t offset, len;
  };
  std::vector<ReadRequest> requests_;
  std::vector<Piece> pieces_;
  std::deque<size_t> retry_;  // pieces to submit again, before the next new one
  size_t next_ = 0;           // pieces_[next_..] not yet submitted
  unsigned inflight_ = 0;
  std::vector<Tail> tails_;
  absl::Status status_;
  ReadReport report_;
  bool active_ = false;
};

class ReadRing {
 public:
  explicit ReadRing(ReadRingOptions options = {});
  ~ReadRing();
  ReadRing(const ReadRing&) = delete;
  ReadRing& operator=(const ReadRing&) = delete;

  // True when batches go through io_uring (the build has it, the kernel allowed it).
  bool uring() const;
  // Reads every request; returns when all bytes are in or the first failure (every
  // piece in flight waited for). `report`, when given, says what was read and how.
  absl::Status Read(const std::vector<ReadRequest>& requests, ReadReport* report = nullptr);
  // Asynchronous: Submit hands the batch's first pieces to the kernel and returns at
  // once (false, starting nothing, without io_uring or when `b` is active); Wait
  // submits the rest as pieces complete (completions of other batches in flight are
  // recorded for them) and returns when `b` is complete.
  bool Submit(const std::vector<ReadRequest>& requests, ReadBatch* b);
  absl::Status Wait(ReadBatch* b, ReadReport* report = nullptr);

  ReadRingStats stats() const;

 private:
  struct Uring;
  void Begin(const std::vector<ReadRequest>& requests, ReadBatch* b) const;
  void SubmitMore(ReadBatch* b);
  void Complete(ReadBatch::Piece* piece, int res);
  absl::Status PreadAll(const std::vector<ReadRequest>& requests, ReadReport* report);

  ReadRingOptions options_;
  std::unique_ptr<Uring> uring_;  // null: pread
  unsigned inflight_ = 0;         // pieces in the kernel, all batches
  struct Counters {
    std::atomic<uint64_t> batches{0}, uring_pieces{0}, pread_calls{0}, bytes{0}, retries{0};
  };
  mutable Counters counters_;
};

// Reads exactly `bytes` at `offset` of `fd` into dst with pread, continuing short reads
// and retrying EINTR and EAGAIN; errors name `name`, the range and the failing offset
// (at the end of the file, the file's size now).
absl::Status PreadFully(int fd, uint64_t offset, uint64_t bytes, uint8_t* dst, std::string_view name,
                        const PreadFn& pread = {});

}  // namespace uaii::storage
