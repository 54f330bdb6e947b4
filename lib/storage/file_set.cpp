#include "storage/file_set.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "storage/file_set_internal.h"
#include "util/str_cat.h"

namespace uaii::storage {
using namespace file_set_internal;

void AlignedBytes::Free::operator()(uint8_t* p) const {
  if (mapped) ::munmap(p, mapped);
  else std::free(p);
}

AlignedBytes AlignedBytes::Allocate(uint64_t bytes) {
  AlignedBytes a;
  if (bytes >= kHugeAllocBytes) {
    // Over-map by 2 MiB and trim both ends: the kept range starts on a 2 MiB boundary.
    const uint64_t size = AlignUp(bytes), huge = kHugeAllocBytes;
    void* p = ::mmap(nullptr, size + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) {
      const auto raw = reinterpret_cast<uintptr_t>(p);
      const uintptr_t start = (raw + huge - 1) / huge * huge;
      if (start > raw) ::munmap(p, start - raw);
      if (raw + size + huge > start + size)
        ::munmap(reinterpret_cast<void*>(start + size), raw + size + huge - (start + size));
#ifdef MADV_HUGEPAGE
      const char* env = std::getenv("UAII_HUGE_PAGES");
      if (env == nullptr || std::string(env) != "0")
        ::madvise(reinterpret_cast<void*>(start), size / huge * huge, MADV_HUGEPAGE);
#endif
      a.data = std::unique_ptr<uint8_t, Free>(reinterpret_cast<uint8_t*>(start), Free{size});
      a.size = bytes;
      return a;
    }  // else: posix_memalign below
  }
  void* p = nullptr;
  if (::posix_memalign(&p, kDirectIoAlign, std::max<uint64_t>(bytes, 1)) != 0) p = nullptr;
  a.data.reset(static_cast<uint8_t*>(p));
  a.size = p ? bytes : 0;
  return a;
}


FileSet::FileSet(FileSetOptions options) : options_(std::move(options)) {
  options_.queue_depth = std::clamp(options_.queue_depth, 1, 64);
  options_.piece_bytes = std::max(kDirectIoAlign, AlignDown(options_.piece_bytes));
  // The test seam replaces pread, so a hooked FileSet reads with pread only.
  ReadRingOptions ro;
  ro.use_io_uring = options_.direct && options_.uring;
  ro.queue_depth = static_cast<unsigned>(options_.queue_depth);
  ro.max_piece_bytes = options_.piece_bytes;
  ro.pread = options_.hooks.pread;
  ring_ = std::make_unique<ReadRing>(ro);
  if (ring_->uring()) {
    ro.queue_depth = kAsyncEntries;
    auto a = std::make_unique<ReadRing>(ro);
    if (a->uring()) async_ring_ = std::move(a);
  }
}

FileSet::~FileSet() {
  ring_.reset();
  async_ring_.reset();
  for (auto& f : files_) {
    if (f->fd >= 0) ::close(f->fd);
    if (f->random_fd >= 0) ::close(f->random_fd);
    if (f->direct_fd >= 0) ::close(f->direct_fd);
    if (f->map) ::munmap(f->map, f->size);
  }
}

absl::StatusOr<int> FileSet::Open(const std::string& path) {
  for (size_t i = 0; i < files_.size(); ++i)
    if (files_[i]->path == path) return static_cast<int>(i);
  auto do_open = [&](int flags) {
    return options_.hooks.open ? options_.hooks.open(path.c_str(), flags) : ::open(path.c_str(), flags);
  };
  auto f = std::make_unique<File>();
  f->path = path;
  f->fd = do_open(O_RDONLY | O_CLOEXEC);
  if (f->fd < 0) return absl::NotFoundError(StrCat(path, ": cannot open for streaming: ", std::strerror(errno)));
  struct stat st {};
  if (::fstat(f->fd, &st) != 0) {
    const int e = errno;
    ::close(f->fd);
    return absl::InternalError(StrCat(path, ": cannot stat: ", std::strerror(e)));
  }
  f->size = static_cast<uint64_t>(st.st_size);
  // Filesystems without direct I/O (some network and FUSE filesystems, old tmpfs)
  // refuse the flag here with EINVAL; those files are read through the page cache.
  if (options_.direct) f->direct_fd = do_open(O_RDONLY | O_CLOEXEC | O_DIRECT);
  // Streamed with direct I/O: the small buffered reads between streamed tensors (and
  // the page-cache copies) read exactly their pages (file_set.h, Read). A file read
  // buffered throughout keeps readahead everywhere: it needs it.
  if (f->direct_fd >= 0) {
    f->random_fd = do_open(O_RDONLY | O_CLOEXEC);
    if (f->random_fd >= 0 && ::posix_fadvise(f->random_fd, 0, 0, POSIX_FADV_RANDOM) != 0) {
      ::close(f->random_fd);
      f->random_fd = -1;
    }
  }
  // A read-only shared mapping only for mincore (page-cache residency); never read.
  if (options_.use_page_cache && f->direct_fd >= 0 && f->size > 0) {
    void* m = ::mmap(nullptr, f->size, PROT_READ, MAP_SHARED, f->fd, 0);
    if (m != MAP_FAILED) f->map = m;
  }
  files_.push_back(std::move(f));
  return static_cast<int>(files_.size() - 1);
}

bool FileSet::direct(int file) const {
  std::lock_guard<std::mutex> l(staged_mu_);
  return files_[file]->direct_fd >= 0;
}

bool FileSet::uring() const { return ring_->uring(); }

std::vector<unsigned char> FileSet::PageCacheResidency(int file) const {
  const File& f = *files_[file];
  if (!f.map) return {};
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> v((f.size + page - 1) / page);
  if (::mincore(f.map, f.size, v.data()) != 0) return {};
  return v;
}

uint64_t FileSet::DropReadahead(int file, const std::vector<unsigned char>& before, uint64_t offset,
                                uint64_t bytes) const {
  const File& f = *files_[file];
  if (before.empty() || !f.map || offset >= f.size) return 0;
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t p0 = offset / page, p1 = std::min<uint64_t>((std::min(f.size, offset + bytes) + page - 1) / page,
                                                             before.size());
  if (p0 >= p1) return 0;
  std::vector<unsigned char> now(p1 - p0);
  if (::mincore(static_cast<uint8_t*>(f.map) + p0 * page, (p1 - p0) * page, now.data()) != 0) return 0;
  uint64_t dropped = 0;
  // Runs of pages cached now and not before, each dropped with one fadvise.
  for (uint64_t k = p0; k < p1;) {
    if (!(now[k - p0] & 1) || (before[k] & 1)) {
      ++k;
      continue;
    }
    uint64_t e = k;
    while (e < p1 && (now[e - p0] & 1) && !(before[e] & 1)) ++e;
    if (::posix_fadvise(f.fd, static_cast<off_t>(k * page), static_cast<off_t>((e - k) * page), POSIX_FADV_DONTNEED) == 0)
      dropped += (e - k) * page;
    k = e;
  }
  return dropped;
}

FileIoCounters FileSet::counters() const {
  std::lock_guard<std::mutex> l(mu_);
  return counters_;
}

absl::Status FileSet::CheckRange(const File& f, uint64_t offset, uint64_t bytes) const {
  if (offset > f.size || bytes > f.size - offset)
    return absl::DataLossError(StrCat(f.path, ": bytes ", Range(offset, bytes), " extend past the end of the file (",
                                      f.size, " bytes): the file is truncated or changed since it was loaded"));
  return absl::OkStatus();
}

absl::Status FileSet::ReadFully(const File& f, int fd, uint64_t offset, uint64_t bytes, uint8_t* dst) const {
  return PreadFully(fd, offset, bytes, dst, f.path, options_.hooks.pread);
}

absl::Status FileSet::Read(int file, uint64_t offset, uint64_t bytes, uint8_t* dst) const {
  const File& f = *files_[file];
  if (auto st = CheckRange(f, offset, bytes); !st.ok()) return st;
  const int fd = bytes < kSequentialReadBytes && f.random_fd >= 0 ? f.random_fd : f.fd;
  auto st = ReadFully(f, fd, offset, bytes, dst);
  std::lock_guard<std::mutex> l(mu_);
  counters_.buffered_bytes += bytes;
  return st;
}

absl::StatusOr<const uint8_t*> FileSet::ReadStaged(int file, uint64_t offset, uint64_t bytes, uint8_t* buf,
                                                   uint64_t capacity) const {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  File& f = *files_[file];
  if (auto st = CheckRange(f, offset, bytes); !st.ok()) return st;
  if (bytes > capacity)
    return absl::InternalError(StrCat(f.path, ": chunk of ", bytes, " bytes exceeds its ", capacity,
                                      "-byte staging buffer"));
  FileIoCounters io;  // this call's, added to counters_ at the end
  auto finish = [&](absl::StatusOr<const uint8_t*> r) {
    io.staged_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    std::lock_guard<std::mutex> l(mu_);
    counters_.direct_bytes += io.direct_bytes;
    counters_.cached_bytes += io.cached_bytes;
    counters_.buffered_bytes += io.buffered_bytes;
    counters_.staged_seconds += io.staged_seconds;
    return r;
  };
  std::lock_guard<std::mutex> staged(staged_mu_);
  const uint64_t a0 = AlignDown(offset), a1 = AlignUp(offset + bytes), end = offset + bytes;
  const bool aligned_buf = reinterpret_cast<uintptr_t>(buf) % kDirectIoAlign == 0;
  if (f.direct_fd < 0 || !aligned_buf || a1 - a0 > capacity || bytes == 0) {
    auto st = ReadFully(f, f.fd, offset, bytes, buf);
    if (!st.ok()) return finish(st);
    io.buffered_bytes += bytes;
    return finish(const_cast<const uint8_t*>(buf));
  }
  uint8_t* const out = buf + (offset - a0);
  uint64_t pos = offset;  // bytes [offset, pos) are in buf
  // 1. What the page cache holds: mincore() on a mapping of the file (never touched,
  // so it costs no resident memory) tells which pages are cached, and the cached
  // prefix is copied with pread. (preadv2 with RWF_NOWAIT would also not wait, but it
  // starts readahead of the uncached pages: extra device reads per slice, and a cold
  // run's page cache filling up; docs/storage.md.)
  if (f.map) {
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    const uint64_t p0 = offset / page * page, p1 = (end + page - 1) / page * page;
    mincore_vec_.resize((p1 - p0) / page);
    if (::mincore(static_cast<uint8_t*>(f.map) + p0, p1 - p0, mincore_vec_.data()) == 0) {
      size_t k = 0;
      while (k < mincore_vec_.size() && (mincore_vec_[k] & 1)) ++k;
      const uint64_t cached_end = std::min(end, p0 + k * page);
      if (cached_end > offset) {
        // Without readahead: these pages are cached, the ones after them are not (and
        // are about to be read with direct I/O).
        if (auto st = ReadFully(f, f.random_fd >= 0 ? f.random_fd : f.fd, offset, cached_end - offset, out); !st.ok())
          return finish(st);
        pos = cached_end;
        io.cached_bytes += cached_end - offset;
      }
    }
  }
  if (pos >= end) return finish(const_cast<const uint8_t*>(out));
  // 2. The rest from the device, from the aligned block holding pos: pieces in flight
  // through io_uring, else one large pread (storage/read_ring.h). A short direct read's
  // remainder (an unaligned end of file, a split request) is read buffered.
  const uint64_t d0 = AlignDown(pos);
  ReadReport report;
  absl::Status status =
      ring_->Read({{f.direct_fd, d0, a1 - d0, buf + (d0 - a0), f.path, end - d0, f.fd}}, &report);
  io.direct_bytes += report.bytes;
  io.buffered_bytes += report.tail_bytes;
  if (report.refused) {
    // The filesystem took O_DIRECT at open but refuses the reads: buffered from now on.
    ::close(f.direct_fd);
    f.direct_fd = -1;
    status = ReadFully(f, f.fd, pos, end - pos, buf + (pos - a0));
    io.buffered_bytes += end - pos;
  }
  if (!status.ok()) return finish(status);
  return finish(const_cast<const uint8_t*>(out));
}

}  // namespace uaii::storage
