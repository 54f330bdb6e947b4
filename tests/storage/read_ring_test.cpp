// The io_uring read layer (storage/read_ring.h): a batch gives the bytes pread gives,
// with more requests than the queue depth and requests longer than one piece; through
// io_uring exactly where the build and the kernel have it (kernel_io_uring.h), else
// pread, with the same bytes; short reads, EINTR and EAGAIN are continued; a
// remainder goes to the tail descriptor; the end of the file names the file and the
// offset; EINVAL before any byte is reported as a refusal; several asynchronous
// batches may be in flight at once and are waited for in any order.
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "kernel_io_uring.h"
#include "storage/read_ring.h"

using namespace uaii::storage;

namespace {

// A temporary file of `n` pseudo-random bytes, removed with the object.
struct TempFile {
  std::string path;
  std::vector<uint8_t> data;
  int fd = -1;
  explicit TempFile(size_t n, const std::string& name) {
    path = (std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()) + ".bin")).string();
    std::mt19937_64 rng(n);
    data.resize(n);
    for (auto& b : data) b = static_cast<uint8_t>(rng());
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(data.data()), data.size());
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  }
  ~TempFile() {
    ::close(fd);
    std::filesystem::remove(path);
  }
};

// What pread itself returns for [offset, offset + bytes): the reference.
std::vector<uint8_t> Pread(int fd, uint64_t offset, uint64_t bytes) {
  std::vector<uint8_t> out(bytes);
  uint64_t done = 0;
  while (done < bytes) {
    const ssize_t r = ::pread(fd, out.data() + done, bytes - done, static_cast<off_t>(offset + done));
    REQUIRE(r > 0);
    done += static_cast<uint64_t>(r);
  }
  return out;
}

// `count` random ranges of up to `max_bytes` inside the file, each with its own buffer.
struct Batch {
  std::vector<std::vector<uint8_t>> bufs;
  std::vector<ReadRequest> requests;
  Batch(const TempFile& f, size_t count, uint64_t max_bytes, uint64_t seed) {
    std::mt19937_64 rng(seed);
    bufs.resize(count);
    for (size_t i = 0; i < count; ++i) {
      const uint64_t bytes = 1 + rng() % max_bytes;
      const uint64_t offset = rng() % (f.data.size() - bytes + 1);
      bufs[i].assign(bytes, 0xee);
      requests.push_back({f.fd, offset, bytes, bufs[i].data(), f.path});
    }
  }
  void CheckAgainstPread(int fd) const {
    for (size_t i = 0; i < requests.size(); ++i) {
      INFO("request " << i << " at " << requests[i].offset << ", " << requests[i].bytes << " bytes");
      CHECK(bufs[i] == Pread(fd, requests[i].offset, requests[i].bytes));
    }
  }
};

ReadRingOptions Options(bool uring, unsigned depth, uint64_t piece) {
  ReadRingOptions o;
  o.use_io_uring = uring;
  o.queue_depth = depth;
  o.max_piece_bytes = piece;
  return o;
}

}  // namespace

TEST_CASE("read ring: io_uring where the build and the kernel have it, else pread, with pread's bytes",
          "[storage][io]") {
  TempFile f(3 << 20, "uaii_read_ring_paths");
  REQUIRE(f.fd >= 0);
  for (bool uring : {true, false}) {
    INFO((uring ? "io_uring asked for" : "pread forced"));
    ReadRing ring(Options(uring, 8, 64 << 10));
    CHECK(ring.uring() == (uring && uaii::testing::ExpectIoUring(8)));
    Batch b(f, 20, 200000, 1);
    ReadReport report;
    REQUIRE(ring.Read(b.requests, &report).ok());
    b.CheckAgainstPread(f.fd);
    uint64_t total = 0;
    for (const auto& r : b.requests) total += r.bytes;
    CHECK(report.bytes == total);
    CHECK(report.tail_bytes == 0);
    CHECK(report.error == 0);
    const ReadRingStats s = ring.stats();
    CHECK(s.io_uring == ring.uring());
    CHECK(s.bytes == total);
    CHECK(s.batches == 1);
    if (ring.uring()) {
      CHECK(s.uring_pieces >= b.requests.size());
      CHECK(s.pread_calls == 0);
    } else {
      CHECK(s.uring_pieces == 0);
      CHECK(s.pread_calls >= b.requests.size());
    }
  }
}

TEST_CASE("read ring: more requests than the queue depth, and requests longer than a piece", "[storage][io]") {
  TempFile f(2 << 20, "uaii_read_ring_depth");
  REQUIRE(f.fd >= 0);
  for (bool uring : {true, false}) {
    INFO((uring ? "io_uring asked for" : "pread forced"));
    ReadRing ring(Options(uring, 4, 4096));  // 4 in flight, 4 KiB pieces
    Batch many(f, 300, 3000, 2);             // 300 requests > depth 4
    REQUIRE(ring.Read(many.requests).ok());
    many.CheckAgainstPread(f.fd);
    Batch long_ones(f, 6, 700000, 3);  // each cut into up to 171 pieces
    long_ones.requests.push_back({f.fd, 4096 * 3 + 17, 4096 * 40 + 5, nullptr, f.path});
    long_ones.bufs.emplace_back(4096 * 40 + 5);
    long_ones.requests.back().dst = long_ones.bufs.back().data();
    REQUIRE(ring.Read(long_ones.requests).ok());
    long_ones.CheckAgainstPread(f.fd);
    if (ring.uring()) CHECK(ring.stats().uring_pieces > long_ones.requests.size() + many.requests.size());
  }
}

TEST_CASE("read ring: a read past the end of the file names the file and the offset", "[storage][io]") {
  TempFile f(10000, "uaii_read_ring_eof");
  REQUIRE(f.fd >= 0);
  for (bool uring : {true, false}) {
    INFO((uring ? "io_uring asked for" : "pread forced"));
    ReadRing ring(Options(uring, 8, 4096));
    std::vector<uint8_t> ok(100), past(5000);
    const std::vector<ReadRequest> reqs = {{f.fd, 0, ok.size(), ok.data(), f.path},
                                           {f.fd, 8000, past.size(), past.data(), f.path}};
    const absl::Status st = ring.Read(reqs);
    REQUIRE(!st.ok());
    const std::string m(st.message());
    INFO(m);
    CHECK(st.code() == absl::StatusCode::kDataLoss);
    CHECK(m.find(f.path) != std::string::npos);
    CHECK(m.find("unexpected end of file at offset 10000") != std::string::npos);
    CHECK(m.find("the file is 10000 bytes") != std::string::npos);
    // Bytes past `needed` (alignment padding) may be cut by the end of the file.
    std::vector<uint8_t> padded(8192);
    ReadRequest r{f.fd, 8192, 8192, padded.data(), f.path};
    r.needed = 10000 - 8192;
    ReadReport report;
    REQUIRE(ring.Read({r}, &report).ok());
    CHECK(report.bytes == 10000 - 8192);
    CHECK(std::equal(padded.begin(), padded.begin() + (10000 - 8192), f.data.begin() + 8192));
  }
  CHECK(!PreadFully(f.fd, 9000, 2000, std::vector<uint8_t>(2000).data(), f.path).ok());
}

TEST_CASE("read ring: short reads, EINTR and EAGAIN are continued — a remainder goes to the tail descriptor",
          "[storage][io]") {
  TempFile f(300000, "uaii_read_ring_short");
  REQUIRE(f.fd >= 0);
  const int tail_fd = ::open(f.path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(tail_fd >= 0);
  int calls = 0, tail_calls = 0;
  ReadRingOptions o = Options(true, 8, 4096);
  o.pread = [&](int fd, void* b, size_t n, off_t off) -> ssize_t {
    ++calls;
    if (fd == tail_fd) ++tail_calls;
    if (calls % 5 == 2) {
      errno = calls % 2 ? EINTR : EAGAIN;
      return -1;
    }
    const ssize_t r = ::pread(fd, b, std::min<size_t>(n, 1000), off);  // at most 1000 bytes a call
    return r;
  };
  ReadRing ring(o);
  CHECK(!ring.uring());  // a pread seam means pread
  Batch b(f, 10, 20000, 4);
  REQUIRE(ring.Read(b.requests).ok());
  b.CheckAgainstPread(f.fd);
  CHECK(tail_calls == 0);
  // With a tail descriptor, the rest after the first short read is read there.
  std::vector<uint8_t> buf(50000);
  ReadRequest r{f.fd, 1234, buf.size(), buf.data(), f.path};
  r.tail_fd = tail_fd;
  ReadReport report;
  REQUIRE(ring.Read({r}, &report).ok());
  CHECK(buf == Pread(f.fd, 1234, buf.size()));
  CHECK(tail_calls > 0);
  CHECK(report.bytes == 1000);
  CHECK(report.tail_bytes == buf.size() - 1000);
  // PreadFully continues the same way.
  std::vector<uint8_t> row(12345);
  REQUIRE(PreadFully(f.fd, 777, row.size(), row.data(), f.path, o.pread).ok());
  CHECK(row == Pread(f.fd, 777, row.size()));
  ::close(tail_fd);
}

TEST_CASE("read ring: EINVAL before any byte is a refusal, after one a failure", "[storage][io]") {
  TempFile f(100000, "uaii_read_ring_refused");
  REQUIRE(f.fd >= 0);
  int calls = 0;
  ReadRingOptions o;
  o.pread = [&](int fd, void* b, size_t n, off_t off) -> ssize_t {
    if (++calls > 1 || off >= 50000) {
      errno = EINVAL;
      return -1;
    }
    return ::pread(fd, b, n, off);
  };
  ReadRing ring(o);
  std::vector<uint8_t> a(1000), c(1000);
  ReadReport report;
  absl::Status st = ring.Read({{f.fd, 60000, c.size(), c.data(), f.path}}, &report);
  CHECK(!st.ok());
  CHECK(report.refused);
  CHECK(report.error == EINVAL);
  calls = 0;
  st = ring.Read({{f.fd, 0, a.size(), a.data(), f.path}, {f.fd, 60000, c.size(), c.data(), f.path}}, &report);
  CHECK(!st.ok());
  CHECK(!report.refused);  // bytes had arrived: the descriptor reads, this read failed
  CHECK(std::string(st.message()).find("failed at offset 60000") != std::string::npos);
}

TEST_CASE("read ring: asynchronous batches in flight together, waited for in any order", "[storage][io]") {
  TempFile f(4 << 20, "uaii_read_ring_async");
  REQUIRE(f.fd >= 0);
  ReadRing ring(Options(true, 16, 16 << 10));
  std::vector<ReadBatch> batches(4);
  std::vector<Batch> data;
  for (int k = 0; k < 4; ++k) data.emplace_back(f, 5, 300000, 10 + k);  // more pieces than the depth
  bool started = true;
  for (int k = 0; k < 4; ++k) started = ring.Submit(data[k].requests, &batches[k]) && started;
  if (!ring.uring()) {
    CHECK(!started);  // nothing asynchronous without io_uring
    CHECK(!batches[0].active());
    return;
  }
  REQUIRE(started);
  CHECK(!ring.Submit(data[0].requests, &batches[0]));  // still active
  for (int k : {2, 0, 3, 1}) {
    REQUIRE(ring.Wait(&batches[k]).ok());
    CHECK(!batches[k].active());
    data[k].CheckAgainstPread(f.fd);
  }
  CHECK(!ring.Wait(&batches[0]).ok());  // nothing in flight
}
