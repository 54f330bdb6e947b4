// The streaming read path (storage/file_set.h): direct reads of unaligned ranges give
// the file's bytes (through io_uring and through pread), a filesystem refusing
// O_DIRECT at open or at the first read falls back to buffered reads, short reads are
// continued, a range past the end of the file (or a file truncated while open) fails
// naming the cause, and bytes the page cache holds are copied from it.
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "kernel_io_uring.h"  // the build's UAII_IO_URING (this suite links uaii_io_uring)
#include "storage/file_set.h"

using namespace uaii::storage;

namespace {

std::vector<uint8_t> Pattern(size_t n) {
  std::vector<uint8_t> d(n);
  for (size_t i = 0; i < n; ++i) d[i] = static_cast<uint8_t>(i * 131 + (i >> 9) + 7);
  return d;
}

std::string WriteFile(const std::string& name, const std::vector<uint8_t>& data) {
  std::filesystem::create_directories(UAII_FIXTURE_DIR);
  const std::string path = std::string(UAII_FIXTURE_DIR) + "/" + name;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  return path;
}

void DropCache(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

bool IsDirectFd(int fd) { return (::fcntl(fd, F_GETFL) & O_DIRECT) != 0; }

// Reads random unaligned ranges (and the tail of the file) with ReadStaged and checks
// the bytes and where they land in the buffer.
void CheckRandomRanges(FileSet& files, int fi, const std::vector<uint8_t>& data, bool expect_direct) {
  std::mt19937_64 rng(42);
  const uint64_t max_chunk = std::min<uint64_t>(300000, data.size() / 2);
  auto buf = AlignedBytes::Allocate(max_chunk + kDirectIoSlack);
  std::vector<std::pair<uint64_t, uint64_t>> ranges = {{0, 4096}, {1, 4095}, {4095, 2}, {data.size() - 777, 777},
                                                       {data.size() - max_chunk, max_chunk}};
  for (int i = 0; i < 40; ++i) {
    const uint64_t bytes = 1 + rng() % max_chunk;
    ranges.push_back({rng() % (data.size() - bytes), bytes});
  }
  for (auto [off, bytes] : ranges) {
    INFO("offset " << off << " bytes " << bytes);
    auto r = files.ReadStaged(fi, off, bytes, buf.data.get(), buf.size);
    REQUIRE(r.ok());
    CHECK(std::equal(*r, *r + bytes, data.begin() + off));
    if (expect_direct) CHECK(static_cast<uint64_t>(*r - buf.data.get()) == off % kDirectIoAlign);
  }
}

}  // namespace

TEST_CASE("file set: direct reads of unaligned ranges return the file's bytes", "[storage][io]") {
  const auto data = Pattern(3 * 1000 * 1000 + 123);  // not a multiple of the alignment
  const std::string path = WriteFile("file_set_direct.bin", data);
  for (bool uring : {true, false}) {
    FileSetOptions o;
    o.uring = uring;
    o.use_page_cache = false;  // every byte from the device
    o.piece_bytes = 64 * 1024;  // several pieces per range
    o.queue_depth = 3;
    FileSet files(o);
    auto fi = files.Open(path);
    REQUIRE(fi.ok());
    if (!files.direct(*fi)) WARN("SKIP direct path: the fixture filesystem refuses O_DIRECT");
    DropCache(path);
    CheckRandomRanges(files, *fi, data, files.direct(*fi));
    const auto c = files.counters();
    if (files.direct(*fi)) {
      CHECK(c.direct_bytes > 0);
      CHECK(c.cached_bytes == 0);
    }
  }
  std::remove(path.c_str());
}

TEST_CASE("file set: a chunk without alignment room in its buffer is read buffered", "[storage][io]") {
  const auto data = Pattern(100000);
  const std::string path = WriteFile("file_set_noroom.bin", data);
  FileSet files;
  auto fi = files.Open(path);
  REQUIRE(fi.ok());
  auto buf = AlignedBytes::Allocate(5000);
  auto r = files.ReadStaged(*fi, 1234, 5000, buf.data.get(), buf.size);
  REQUIRE(r.ok());
  CHECK(*r == buf.data.get());
  CHECK(std::equal(*r, *r + 5000, data.begin() + 1234));
  CHECK(files.counters().direct_bytes == 0);
  auto too_big = files.ReadStaged(*fi, 0, 6000, buf.data.get(), buf.size);
  CHECK(!too_big.ok());
  std::remove(path.c_str());
}

TEST_CASE("file set: O_DIRECT refused at open falls back to buffered reads", "[storage][io]") {
  const auto data = Pattern(200000);
  const std::string path = WriteFile("file_set_refused_open.bin", data);
  FileSetOptions o;
  o.use_page_cache = false;
  o.hooks.open = [](const char* p, int flags) {
    if (flags & O_DIRECT) {
      errno = EINVAL;  // what a filesystem without direct I/O answers
      return -1;
    }
    return ::open(p, flags);
  };
  FileSet files(o);
  auto fi = files.Open(path);
  REQUIRE(fi.ok());
  CHECK(!files.direct(*fi));
  CheckRandomRanges(files, *fi, data, false);
  CHECK(files.counters().direct_bytes == 0);
  CHECK(files.counters().buffered_bytes > 0);
  std::remove(path.c_str());
}

TEST_CASE("file set: O_DIRECT refused at the first read falls back for good", "[storage][io]") {
  const auto data = Pattern(200000);
  const std::string path = WriteFile("file_set_refused_read.bin", data);
  int direct_calls = 0;
  FileSetOptions o;
  o.use_page_cache = false;
  o.hooks.pread = [&](int fd, void* b, size_t n, off_t off) -> ssize_t {
    if (IsDirectFd(fd)) {
      ++direct_calls;
      errno = EINVAL;
      return -1;
    }
    return ::pread(fd, b, n, off);
  };
  FileSet files(o);
  auto fi = files.Open(path);
  REQUIRE(fi.ok());
  CheckRandomRanges(files, *fi, data, false);
  CHECK(!files.direct(*fi));
  CHECK(direct_calls <= 1);  // refused once, never tried again
  std::remove(path.c_str());
}

TEST_CASE("file set: short reads are continued", "[storage][io]") {
  const auto data = Pattern(500000);
  const std::string path = WriteFile("file_set_short.bin", data);
  for (size_t cap : {size_t{1000}, size_t{8192}}) {  // unaligned and aligned short reads
    int calls = 0;
    FileSetOptions o;
    o.use_page_cache = false;
    o.hooks.pread = [&, cap](int fd, void* b, size_t n, off_t off) -> ssize_t {
      ++calls;
      if (calls % 7 == 3) {  // an interrupted call now and then
        errno = EINTR;
        return -1;
      }
      // The whole read happens, fewer bytes are reported (lengths stay aligned for O_DIRECT).
      const ssize_t r = ::pread(fd, b, n, off);
      return r > 0 ? std::min<ssize_t>(r, static_cast<ssize_t>(cap)) : r;
    };
    FileSet files(o);
    auto fi = files.Open(path);
    REQUIRE(fi.ok());
    CheckRandomRanges(files, *fi, data, false);
    std::vector<uint8_t> row(30000);
    REQUIRE(files.Read(*fi, 4321, row.size(), row.data()).ok());
    CHECK(std::equal(row.begin(), row.end(), data.begin() + 4321));
    CHECK(calls > 50);
  }
  std::remove(path.c_str());
}

TEST_CASE("file set: a range past the end of the file names the file and its size", "[storage][io]") {
  const auto data = Pattern(10000);
  const std::string path = WriteFile("file_set_truncated.bin", data);
  FileSet files;
  auto fi = files.Open(path);
  REQUIRE(fi.ok());
  auto buf = AlignedBytes::Allocate(8192 + kDirectIoSlack);
  auto r = files.ReadStaged(*fi, 6000, 8000, buf.data.get(), buf.size);
  REQUIRE(!r.ok());
  const std::string msg(r.status().message());
  CHECK(msg.find(path) != std::string::npos);
  CHECK(msg.find("past the end of the file (10000 bytes)") != std::string::npos);
  std::vector<uint8_t> dst(8000);
  CHECK(!files.Read(*fi, 6000, 8000, dst.data()).ok());

  // Truncated after it was opened: the read hits the end of the file and says so.
  REQUIRE(::truncate(path.c_str(), 5000) == 0);
  for (bool uring : {true, false}) {
    FileSetOptions o;
    o.uring = uring;
    o.use_page_cache = false;
    FileSet late(o);
    auto li = late.Open(path);
    REQUIRE(li.ok());
    REQUIRE(::truncate(path.c_str(), 3000) == 0);
    auto t = late.ReadStaged(*li, 1000, 3500, buf.data.get(), buf.size);
    REQUIRE(!t.ok());
    const std::string m(t.status().message());
    INFO(m);
    CHECK(m.find(path) != std::string::npos);
    CHECK(m.find("unexpected end of file") != std::string::npos);
    CHECK(m.find("3000 bytes") != std::string::npos);
    REQUIRE(::truncate(path.c_str(), 5000) == 0);
  }
  std::remove(path.c_str());
}

TEST_CASE("file set: bytes in the page cache are copied from it", "[storage][io]") {
  const auto data = Pattern(1 << 20);
  const std::string path = WriteFile("file_set_cached.bin", data);
  FileSet files;
  auto fi = files.Open(path);
  REQUIRE(fi.ok());
  std::vector<uint8_t> all(data.size());
  REQUIRE(files.Read(*fi, 0, all.size(), all.data()).ok());  // now in the page cache
  auto buf = AlignedBytes::Allocate(500000 + kDirectIoSlack);
  auto r = files.ReadStaged(*fi, 7, 500000, buf.data.get(), buf.size);
  REQUIRE(r.ok());
  CHECK(std::equal(*r, *r + 500000, data.begin() + 7));
  CHECK(files.counters().cached_bytes > 0);
  std::remove(path.c_str());
}

// Pages of [offset, offset + bytes) the page cache holds, from a residency vector.
uint64_t CachedIn(const std::vector<unsigned char>& v, uint64_t offset, uint64_t bytes) {
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  uint64_t n = 0;
  for (uint64_t p = offset / page; p < (offset + bytes + page - 1) / page && p < v.size(); ++p) n += v[p] & 1;
  return n * page;
}

TEST_CASE("file set: small reads read no ahead — DropReadahead drops only what this process pulled in",
          "[storage][io]") {
  constexpr uint64_t MiB = 1 << 20;
  const auto data = Pattern(16 * MiB);
  const std::string path = WriteFile("file_set_readahead.bin", data);
  DropCache(path);
  FileSet files;
  auto fi = files.Open(path);
  REQUIRE(fi.ok());
  if (!files.direct(*fi) || files.PageCacheResidency(*fi).empty()) {
    std::remove(path.c_str());
    WARN("skipped: no direct I/O or no page-cache residency on this filesystem");
    return;
  }
  // Someone else's cached pages, inside what will be dropped: they must stay.
  {
    const int fd = ::open(path.c_str(), O_RDONLY);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
    std::vector<uint8_t> page(64 << 10);
    REQUIRE(::pread(fd, page.data(), page.size(), 10 * MiB) == static_cast<ssize_t>(page.size()));
    ::close(fd);
  }
  // A small read (a norm right after a pinned matrix) caches its own pages only: with
  // readahead the kernel, seeing the cached pages before it as a sequential stream,
  // pulls in hundreds of KiB after it.
  {
    const int fd = ::open(path.c_str(), O_RDONLY);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
    std::vector<uint8_t> pinned(1 * MiB);
    REQUIRE(::pread(fd, pinned.data(), pinned.size(), 1 * MiB) == static_cast<ssize_t>(pinned.size()));
    ::close(fd);
  }
  std::vector<uint8_t> small(16 << 10);
  REQUIRE(files.Read(*fi, 2 * MiB + 100, small.size(), small.data()).ok());
  CHECK(std::equal(small.begin(), small.end(), data.begin() + 2 * MiB + 100));
  auto now = files.PageCacheResidency(*fi);
  CHECK(CachedIn(now, 2 * MiB + 32 * 1024, 2 * MiB) == 0);
  // A large read (a pinned matrix) keeps readahead, which may run past its end.
  const auto before = files.PageCacheResidency(*fi);
  std::vector<uint8_t> big(6 * MiB);
  REQUIRE(files.Read(*fi, 0, big.size(), big.data()).ok());
  CHECK(std::equal(big.begin(), big.end(), data.begin()));
  ::usleep(200000);  // readahead still in flight is not dropped (its pages are locked)
  files.DropReadahead(*fi, before, 6 * MiB, 10 * MiB);
  now = files.PageCacheResidency(*fi);
  CHECK(CachedIn(now, 6 * MiB, 4 * MiB) == 0);
  CHECK(CachedIn(now, 10 * MiB, 64 << 10) == (64 << 10));  // cached before: kept
  CHECK(CachedIn(now, 10 * MiB + (64 << 10), 6 * MiB - (64 << 10)) == 0);
  CHECK(CachedIn(now, 4096, 6 * MiB - 8192) == 6 * MiB - 8192);  // the read's own pages: not in the range
  std::remove(path.c_str());
}

TEST_CASE("file set: asynchronous staged reads, several in flight, return the file's bytes", "[storage][io]") {
  const auto data = Pattern(3 << 20);
  const std::string path = WriteFile("file_set_async.bin", data);
  DropCache(path);
  FileSetOptions o;
  o.piece_bytes = 64 << 10;  // several pieces per chunk, more pieces than fit the ring at once
  FileSet files(o);
  auto fi = files.Open(path);
  REQUIRE(fi.ok());
  std::vector<AlignedBytes> bufs;
  std::vector<StagedRead> reads(4);
  for (int k = 0; k < 4; ++k) bufs.push_back(AlignedBytes::Allocate((700 << 10) + kDirectIoSlack));
  std::mt19937_64 rng(7);
  int started = 0;
  for (int round = 0; round < 10; ++round) {
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    for (int k = 0; k < 4; ++k) {
      const uint64_t bytes = 1 + rng() % (700 << 10);
      ranges.push_back({rng() % (data.size() - bytes), bytes});
      if (files.BeginStaged(*fi, ranges[k].first, bytes, bufs[k].data.get(), bufs[k].size, &reads[k])) ++started;
      else ranges[k].second = 0;
    }
    for (int k = 0; k < 4; ++k) {
      if (ranges[k].second == 0) continue;
      auto r = files.WaitStaged(&reads[k]);
      REQUIRE(r.ok());
      CHECK(*r == bufs[k].data.get() + ranges[k].first % kDirectIoAlign);
      CHECK(std::equal(*r, *r + ranges[k].second, data.begin() + ranges[k].first));
    }
  }
  if (files.direct(*fi) && files.uring()) {
    CHECK(started > 0);
    CHECK(files.counters().direct_bytes > 0);
    CHECK(files.counters().cached_bytes == 0);
  } else {
    CHECK(started == 0);  // nothing to do asynchronously: ReadStaged's fallbacks apply
  }
  // A chunk with a page in the page cache is not started: ReadStaged copies it.
  std::vector<uint8_t> one(4096);
  REQUIRE(files.Read(*fi, 1 << 20, one.size(), one.data()).ok());
  StagedRead r;
  CHECK(!files.BeginStaged(*fi, (1 << 20) - 100, 8192, bufs[0].data.get(), bufs[0].size, &r));
  CHECK(!r.active);
  // Nor a buffer without alignment room.
  CHECK(!files.BeginStaged(*fi, 100, 700 << 10, bufs[0].data.get(), 700 << 10, &r));
  std::remove(path.c_str());
}

TEST_CASE("file set: staging-sized buffers start on a 2 MiB boundary (huge pages), small ones on 4 KiB",
          "[storage][io]") {
  for (uint64_t bytes : {uint64_t{100}, uint64_t{4096}, (uint64_t{2} << 20) - 1, uint64_t{2} << 20,
                         (uint64_t{5} << 20) + 123}) {
    INFO("bytes " << bytes);
    AlignedBytes a = AlignedBytes::Allocate(bytes);
    REQUIRE(a.data);
    CHECK(a.size == bytes);
    const auto addr = reinterpret_cast<uintptr_t>(a.data.get());
    CHECK(addr % kDirectIoAlign == 0);
    if (bytes >= kHugeAllocBytes) CHECK(addr % kHugeAllocBytes == 0);
    std::fill(a.data.get(), a.data.get() + bytes, uint8_t{0x5a});  // all of it is ours
    CHECK(a.data.get()[bytes - 1] == 0x5a);
  }
}

TEST_CASE("file set: io_uring only where the build and the kernel have it, else pread", "[storage][io]") {
  // Asked of the kernel directly (seccomp or an old kernel refuse); false in a build
  // without liburing (CMake option UAII_IO_URING off), where every read is a pread.
  const bool kernel = uaii::testing::ExpectIoUring(8);
  CHECK(FileSet().uring() == kernel);
  FileSetOptions no_uring;
  no_uring.uring = false;
  CHECK(!FileSet(no_uring).uring());
}
