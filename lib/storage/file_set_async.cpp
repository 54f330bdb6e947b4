// Asynchronous staged reads (FileSet::BeginStaged / WaitStaged, storage/file_set.h):
// the streaming engine submits the next cold slice's direct pieces from the thread that
// computes and waits for them when it needs the slice, on a second io_uring
// (storage/read_ring.h).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

#include "storage/file_set.h"
#include "storage/file_set_internal.h"
#include "util/str_cat.h"

namespace uaii::storage {
using namespace file_set_internal;

bool FileSet::BeginStaged(int file, uint64_t offset, uint64_t bytes, uint8_t* buf, uint64_t capacity,
                          StagedRead* r) const {
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
  r->file = file;
  r->offset = offset;
  r->bytes = bytes;
  r->capacity = capacity;
  r->a0 = a0;
  r->buf = buf;
  r->started = NowSeconds();
  // A short piece's remainder is read buffered, without readahead (file_set.h, Read).
  const int tail_fd = f.random_fd >= 0 ? f.random_fd : f.fd;
  r->active = async_ring_->Submit({{f.direct_fd, a0, a1 - a0, buf, f.path, offset + bytes - a0, tail_fd}}, &r->batch);
  return r->active;
}

absl::StatusOr<const uint8_t*> FileSet::WaitStaged(StagedRead* r) const {
  if (!r->active) return absl::FailedPreconditionError("WaitStaged without a read in flight");
  ReadReport report;
  const absl::Status st = async_ring_->Wait(&r->batch, &report);
  r->active = false;
  if (!st.ok()) {
    // Read again the synchronous way: it falls back to buffered reads for a filesystem
    // that refuses direct I/O (and says so), or names the failure.
    return ReadStaged(r->file, r->offset, r->bytes, r->buf, r->capacity);
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    counters_.direct_bytes += report.bytes;
    counters_.buffered_bytes += report.tail_bytes;
    counters_.staged_seconds += NowSeconds() - r->started;
  }
  return const_cast<const uint8_t*>(r->buf + (r->offset - r->a0));
}

}  // namespace uaii::storage
