#include "storage/read_ring.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "util/str_cat.h"

#if UAII_HAVE_LIBURING  // CMake option UAII_IO_URING (lib/storage/CMakeLists.txt)
#include <liburing.h>
#endif

namespace uaii::storage {
namespace {

// One pread call's longest length: 4 KiB-aligned (a direct read stays aligned) and
// under Linux's per-call limit of 2 GiB - 4 KiB.
constexpr uint64_t kMaxPreadBytes = uint64_t{1} << 30;
constexpr uint64_t kPieceAlign = 4096;

std::string Range(uint64_t offset, uint64_t bytes) { return StrCat("[", offset, ", ", offset + bytes, ")"); }

uint64_t NeededEnd(const ReadRequest& r) { return r.offset + std::min(r.needed, r.bytes); }

absl::Status ReadFailed(const ReadRequest& r, uint64_t at, int err) {
  return absl::DataLossError(
      StrCat(r.name, ": read of bytes ", Range(r.offset, r.bytes), " failed at offset ", at, ": ", std::strerror(err)));
}

// `at`: where a read returned no bytes; the file ends there or before (a piece past
// the end of the file), so the message names the end itself when fstat can tell it.
absl::Status EndOfFile(const ReadRequest& r, int fd, uint64_t at) {
  struct stat st {};
  std::string size;
  if (::fstat(fd, &st) == 0) {
    at = std::min(at, static_cast<uint64_t>(st.st_size));
    size = StrCat(" (the file is ", st.st_size, " bytes: truncated while in use?)");
  }
  return absl::DataLossError(StrCat(r.name, ": unexpected end of file at offset ", at, " reading bytes ",
                                    Range(r.offset, std::min(r.needed, r.bytes)), size));
}

struct PreadCounts {
  uint64_t calls = 0, bytes = 0, tail_bytes = 0;
};

// Reads request `r` with pread: [offset, offset + bytes) on r.fd, after a short read the
// rest of the needed bytes on r.tail_fd when it has one. `any_before`: bytes of the
// batch already arrived (an EINVAL is then a failure, not a refusal).
absl::Status PreadRequest(const ReadRequest& r, const PreadFn& fn, bool any_before, PreadCounts* n,
                          ReadReport* report) {
  const uint64_t need_end = NeededEnd(r), end = r.offset + r.bytes;
  int fd = r.fd;
  bool tail = false;
  uint64_t pos = r.offset;
  while (pos < (tail ? need_end : end)) {
    const uint64_t want = std::min((tail ? need_end : end) - pos, kMaxPreadBytes);
    uint8_t* dst = r.dst + (pos - r.offset);
    const ssize_t got = fn ? fn(fd, dst, want, static_cast<off_t>(pos)) : ::pread(fd, dst, want, static_cast<off_t>(pos));
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got < 0) {
      const int err = errno;
      if (report && report->error == 0) {
        report->error = err;
        report->refused = err == EINVAL && !any_before && pos == r.offset;
      }
      return ReadFailed(r, pos, err);
    }
    if (got == 0) {
      if (pos >= need_end) break;  // alignment padding cut by the end of the file
      return EndOfFile(r, fd, pos);
    }
    ++n->calls;
    (tail ? n->tail_bytes : n->bytes) += static_cast<uint64_t>(got);
    pos += static_cast<uint64_t>(got);
    if (static_cast<uint64_t>(got) < want && r.tail_fd >= 0 && !tail) {
      tail = true;  // a short direct read: the rest (possibly unaligned) buffered
      fd = r.tail_fd;
    }
  }
  return absl::OkStatus();
}

}  // namespace

#if UAII_HAVE_LIBURING
struct ReadRing::Uring {
  io_uring ring{};
  bool broken = false;  // a submit or wait failed on it: nothing more goes through it
  ~Uring() { io_uring_queue_exit(&ring); }
};
#else
struct ReadRing::Uring {};  // never made: every read is a pread
#endif

ReadRing::ReadRing(ReadRingOptions options) : options_(std::move(options)) {
  options_.queue_depth = std::max(1u, options_.queue_depth);
  options_.max_piece_bytes = std::max(kPieceAlign, options_.max_piece_bytes / kPieceAlign * kPieceAlign);
  options_.max_piece_bytes = std::min(options_.max_piece_bytes, kMaxPreadBytes);
#if UAII_HAVE_LIBURING
  // A pread test seam means pread only; io_uring_setup may be refused (old kernel, seccomp).
  if (options_.use_io_uring && !options_.pread) {
    auto u = std::make_unique<Uring>();
    if (io_uring_queue_init(options_.queue_depth, &u->ring, 0) == 0) uring_ = std::move(u);
  }
#endif
}

ReadRing::~ReadRing() = default;

bool ReadRing::uring() const {
#if UAII_HAVE_LIBURING
  return uring_ != nullptr && !uring_->broken;
#else
  return false;
#endif
}

ReadRingStats ReadRing::stats() const {
  ReadRingStats s;
  s.io_uring = uring();
  s.batches = counters_.batches.load(std::memory_order_relaxed);
  s.uring_pieces = counters_.uring_pieces.load(std::memory_order_relaxed);
  s.pread_calls = counters_.pread_calls.load(std::memory_order_relaxed);
  s.bytes = counters_.bytes.load(std::memory_order_relaxed);
  s.retries = counters_.retries.load(std::memory_order_relaxed);
  return s;
}

absl::Status ReadRing::PreadAll(const std::vector<ReadRequest>& requests, ReadReport* report) {
  ReadReport local;
  PreadCounts n;
  absl::Status st;
  for (const ReadRequest& r : requests) {
    st = PreadRequest(r, options_.pread, n.bytes + n.tail_bytes > 0, &n, &local);
    if (!st.ok()) break;
  }
  local.bytes = n.bytes;
  local.tail_bytes = n.tail_bytes;
  counters_.batches.fetch_add(1, std::memory_order_relaxed);
  counters_.pread_calls.fetch_add(n.calls, std::memory_order_relaxed);
  counters_.bytes.fetch_add(n.bytes + n.tail_bytes, std::memory_order_relaxed);
  if (report) *report = local;
  return st;
}

absl::Status ReadRing::Read(const std::vector<ReadRequest>& requests, ReadReport* report) {
  ReadBatch b;
  if (!Submit(requests, &b)) return PreadAll(requests, report);
  return Wait(&b, report);
}

void ReadRing::Begin(const std::vector<ReadRequest>& requests, ReadBatch* b) const {
  *b = ReadBatch{};
  b->requests_ = requests;
  for (size_t i = 0; i < requests.size(); ++i) {
    const ReadRequest& r = requests[i];
    for (uint64_t p = 0; p < r.bytes; p += options_.max_piece_bytes)
      b->pieces_.push_back({b, i, r.dst + p, r.offset + p, std::min(options_.max_piece_bytes, r.bytes - p)});
  }
  b->active_ = true;
}

bool ReadRing::Submit(const std::vector<ReadRequest>& requests, ReadBatch* b) {
  if (!uring() || b->active_) return false;
  Begin(requests, b);
  counters_.batches.fetch_add(1, std::memory_order_relaxed);
  SubmitMore(b);
  return true;
}

void ReadRing::SubmitMore(ReadBatch* b) {
#if UAII_HAVE_LIBURING
  bool any = false;
  while (inflight_ < options_.queue_depth && b->status_.ok() && (!b->retry_.empty() || b->next_ < b->pieces_.size())) {
    io_uring_sqe* sqe = io_uring_get_sqe(&uring_->ring);
    if (!sqe) break;
    size_t i;
    if (!b->retry_.empty()) {
      i = b->retry_.front();
      b->retry_.pop_front();
    } else {
      i = b->next_++;
    }
    ReadBatch::Piece& pc = b->pieces_[i];
    io_uring_prep_read(sqe, b->requests_[pc.request].fd, pc.dst, static_cast<unsigned>(pc.len), pc.offset);
    io_uring_sqe_set_data(sqe, &pc);
    ++inflight_;
    ++b->inflight_;
    any = true;
  }
  if (!any) return;
  // A transient refusal (EINTR, EAGAIN, EBUSY) leaves the pieces queued: Wait's
  // io_uring_submit_and_wait submits them.
  const int e = io_uring_submit(&uring_->ring);
  if (e < 0 && e != -EINTR && e != -EAGAIN && e != -EBUSY) {
    // Cannot happen on a working ring. The queued pieces may still be submitted by the
    // next wait (which then reaps them) or never: Wait stops waiting on a broken ring.
    uring_->broken = true;
    if (b->status_.ok()) b->status_ = absl::InternalError(StrCat("io_uring submit failed: ", std::strerror(-e)));
  }
#else
  (void)b;
#endif
}

void ReadRing::Complete(ReadBatch::Piece* pc, int res) {
  ReadBatch& b = *pc->batch;
  --inflight_;
  --b.inflight_;
  const ReadRequest& r = b.requests_[pc->request];
  const uint64_t need_end = NeededEnd(r);
  const size_t index = static_cast<size_t>(pc - b.pieces_.data());
  if (res == -EINTR || res == -EAGAIN) {
    b.retry_.push_back(index);
    counters_.retries.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (res < 0) {
    if (b.report_.error == 0) {
      b.report_.error = -res;
      b.report_.refused = res == -EINVAL && b.report_.bytes == 0;
    }
    if (b.status_.ok()) b.status_ = ReadFailed(r, pc->offset, -res);
    return;
  }
  if (res == 0) {
    if (pc->offset < need_end && b.status_.ok()) b.status_ = EndOfFile(r, r.fd, pc->offset);
    return;
  }
  const auto got = static_cast<uint64_t>(res);
  b.report_.bytes += got;
  counters_.uring_pieces.fetch_add(1, std::memory_order_relaxed);
  counters_.bytes.fetch_add(got, std::memory_order_relaxed);
  pc->offset += got;
  pc->dst += got;
  pc->len -= got;
  if (pc->len == 0 || pc->offset >= need_end) return;
  if (r.tail_fd >= 0) {
    b.tails_.push_back({pc->request, pc->dst, pc->offset, std::min(pc->offset + pc->len, need_end) - pc->offset});
  } else {
    b.retry_.push_back(index);
    counters_.retries.fetch_add(1, std::memory_order_relaxed);
  }
}

absl::Status ReadRing::Wait(ReadBatch* b, ReadReport* report) {
  if (!b->active_) return absl::FailedPreconditionError("ReadRing::Wait without a batch in flight");
#if UAII_HAVE_LIBURING
  auto more = [&] { return b->status_.ok() && (!b->retry_.empty() || b->next_ < b->pieces_.size()); };
  while (b->inflight_ > 0 || more()) {
    if (more()) SubmitMore(b);
    if (uring_->broken) {
      b->active_ = false;
      return b->status_.ok() ? absl::InternalError("io_uring failed earlier; reads stopped") : b->status_;
    }
    if (inflight_ == 0) {  // nothing could be queued on an empty ring: cannot happen
      b->status_ = absl::InternalError("io_uring accepted no read");
      break;
    }
    // Submits what is still queued and waits for at least one completion.
    const int e = io_uring_submit_and_wait(&uring_->ring, 1);
    if (e < 0 && e != -EINTR && e != -EAGAIN && e != -EBUSY) {
      // Cannot happen on a working ring; the pieces may still land in the buffers.
      uring_->broken = true;
      b->active_ = false;
      return absl::InternalError(StrCat("io_uring wait failed: ", std::strerror(-e)));
    }
    io_uring_cqe* cqe = nullptr;
    while (inflight_ > 0 && io_uring_peek_cqe(&uring_->ring, &cqe) == 0 && cqe != nullptr) {
      auto* pc = static_cast<ReadBatch::Piece*>(io_uring_cqe_get_data(cqe));
      const int res = cqe->res;
      io_uring_cqe_seen(&uring_->ring, cqe);
      Complete(pc, res);  // of any batch in flight: completions come in any order
    }
  }
#endif
  b->active_ = false;
  if (b->status_.ok()) {
    PreadCounts n;
    for (const ReadBatch::Tail& t : b->tails_) {
      const ReadRequest& r = b->requests_[t.request];
      ReadRequest tail{r.tail_fd, t.offset, t.len, t.dst, r.name};
      b->status_ = PreadRequest(tail, options_.pread, true, &n, nullptr);
      if (!b->status_.ok()) break;
    }
    b->report_.tail_bytes += n.bytes;
    counters_.pread_calls.fetch_add(n.calls, std::memory_order_relaxed);
    counters_.bytes.fetch_add(n.bytes, std::memory_order_relaxed);
  }
  if (report) *report = b->report_;
  return b->status_;
}

absl::Status PreadFully(int fd, uint64_t offset, uint64_t bytes, uint8_t* dst, std::string_view name,
                        const PreadFn& pread) {
  PreadCounts n;
  return PreadRequest({fd, offset, bytes, dst, name}, pread, false, &n, nullptr);
}

}  // namespace uaii::storage
