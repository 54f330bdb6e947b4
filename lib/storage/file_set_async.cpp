// Asynchronous staged reads (FileSet::BeginStaged / WaitStaged, storage/file_set.h):
// the streaming engine submits the next cold slice's direct pieces from the thread that
// computes and waits for them when it needs the slice, on a second io_uring.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "storage/file_set.h"
#include "storage/file_set_internal.h"
#include "util/str_cat.h"

namespace uaii::storage {
using namespace file_set_internal;

bool FileSet::BeginStaged(int file, uint64_t offset, uint64_t bytes, uint8_t* buf, uint64_t capacity,
                          StagedRead* r) const {
#if UAII_HAVE_LIBURING
  if (!async_ring_ || r->active) return false;
  std::lock_guard<std::mutex> staged(staged_mu_);  // direct_fd and mincore_vec_
  const File& f = *files_[file];
  if (!CheckRange(f, offset, bytes).ok() || bytes == 0 || f.direct_fd < 0) return false;
  const uint64_t a0 = AlignDown(offset), a1 = AlignUp(offset + bytes);
  if (reinterpret_cast<uintptr_t>(buf) % kDirectIoAlign != 0 || a1 - a0 > capacity) return false;
  if (f.map) {  // a page in the page cache: copied from there by ReadStaged (a warm run)
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    const uint64_t p0 = offset / page * page, p1 = (offset + bytes + page - 1) / page * page;
    mincore_vec_.resize((p1 - p0) / page);
    if (::mincore(static_cast<uint8_t*>(f.map) + p0, p1 - p0, mincore_vec_.data()) != 0) return false;
    for (unsigned char c : mincore_vec_)
      if (c & 1) return false;
  }
  *r = StagedRead{};
  r->file = file;
  r->offset = offset;
  r->bytes = bytes;
  r->capacity = capacity;
  r->a0 = a0;
  r->buf = buf;
  for (uint64_t p = a0; p < a1; p += options_.piece_bytes)
    r->pieces.push_back({r, p, std::min(options_.piece_bytes, a1 - p)});
  r->active = true;
  r->started = NowSeconds();
  SubmitPieces(r);
  return true;
#else
  (void)file, (void)offset, (void)bytes, (void)buf, (void)capacity, (void)r;
  return false;
#endif
}

void FileSet::SubmitPieces(StagedRead* r) const {
#if UAII_HAVE_LIBURING
  const File& f = *files_[r->file];
  bool any = false;
  while (r->submitted < r->pieces.size()) {
    io_uring_sqe* sqe = io_uring_get_sqe(&async_ring_->ring);
    if (!sqe) break;  // the ring is full: WaitStaged submits the rest as pieces complete
    StagedRead::Piece& pc = r->pieces[r->submitted];
    io_uring_prep_read(sqe, f.direct_fd, r->buf + (pc.off - r->a0), static_cast<unsigned>(pc.len), pc.off);
    io_uring_sqe_set_data(sqe, &pc);
    ++r->submitted;
    ++r->inflight;
    any = true;
  }
  if (any) io_uring_submit(&async_ring_->ring);
#else
  (void)r;
#endif
}

absl::StatusOr<const uint8_t*> FileSet::WaitStaged(StagedRead* r) const {
  if (!r->active) return absl::FailedPreconditionError("WaitStaged without a read in flight");
#if UAII_HAVE_LIBURING
  const File& f = *files_[r->file];
  while (r->inflight > 0 || r->submitted < r->pieces.size()) {
    if (r->submitted < r->pieces.size()) SubmitPieces(r);
    io_uring_cqe* cqe = nullptr;
    const int e = io_uring_wait_cqe(&async_ring_->ring, &cqe);
    if (e == -EINTR || e == -EAGAIN) continue;
    if (e < 0) {  // cannot happen with a valid ring; the pieces may still land in buf
      r->active = false;
      return absl::InternalError(StrCat(f.path, ": io_uring wait failed: ", std::strerror(-e)));
    }
    auto* pc = static_cast<StagedRead::Piece*>(io_uring_cqe_get_data(cqe));
    const int res = cqe->res;
    io_uring_cqe_seen(&async_ring_->ring, cqe);
    StagedRead* owner = pc->read;  // completions come in any order, for any read in flight
    --owner->inflight;
    const uint64_t oend = owner->offset + owner->bytes;
    if (res == -EINVAL && !owner->any_ok) {
      owner->refused = true;
    } else if (res < 0) {
      if (owner->status.ok())
        owner->status = absl::DataLossError(StrCat(files_[owner->file]->path, ": direct read of bytes ",
                                                   Range(pc->off, pc->len), " failed: ", std::strerror(-res)));
    } else {
      owner->any_ok = true;
      owner->direct_bytes += static_cast<uint64_t>(res);
      if (static_cast<uint64_t>(res) < pc->len && pc->off + res < oend)
        owner->rest.push_back({pc->off + res, std::min(pc->off + pc->len, oend)});
    }
  }
  r->active = false;
  if (r->refused || !r->status.ok()) {
    // Read again the synchronous way: it falls back to buffered reads for a filesystem
    // that refuses direct I/O (and says so), or names the failure.
    return ReadStaged(r->file, r->offset, r->bytes, r->buf, r->capacity);
  }
  FileIoCounters io;
  absl::Status st;
  for (auto [s, e] : r->rest) {
    st = ReadFully(f, f.random_fd >= 0 ? f.random_fd : f.fd, s, e - s, r->buf + (s - r->a0));
    io.buffered_bytes += e - s;
    if (!st.ok()) break;
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    counters_.direct_bytes += r->direct_bytes;
    counters_.buffered_bytes += io.buffered_bytes;
    counters_.staged_seconds += NowSeconds() - r->started;
  }
  if (!st.ok()) return st;
  return const_cast<const uint8_t*>(r->buf + (r->offset - r->a0));
#else
  return absl::InternalError("asynchronous staged reads need io_uring");
#endif
}

}  // namespace uaii::storage
