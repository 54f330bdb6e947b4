// The storage read path alone (storage/file_set.h): a file read cold in staging-sized
// chunks, the way the streaming engine reads weights, next to plain buffered pread.
//
//   uaii_bench_read FILE [--chunk-mib 24] [--limit-mib 2048] [--mode all|buffered|direct|uring]
//                        [--queue-depth 8] [--piece-mib 8] [--warm] [--tail]
//
// --tail reads the last limit-mib of the file instead of the first (where a budgeted
// run's streamed layers are: the same blocks, so the same disk and host caching).
//
// Each mode drops the file from the page cache first (POSIX_FADV_DONTNEED) unless
// --warm. Prints one JSON object per mode: bytes, seconds, bytes_per_s and how the
// bytes were read (direct / page cache / buffered).
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "storage/file_set.h"

namespace {

struct Mode {
  const char* name;
  bool direct, uring, page_cache;
};

void DropCache(const char* path) {
  const int fd = ::open(path, O_RDONLY);
  if (fd < 0) return;
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE [--chunk-mib N] [--limit-mib N] [--mode all|buffered|direct|uring] "
                         "[--queue-depth N] [--piece-mib N] [--warm] [--tail]\n", argv[0]);
    return 2;
  }
  const char* path = argv[1];
  uint64_t chunk = uint64_t{24} << 20, limit = uint64_t{2048} << 20, piece = uint64_t{8} << 20;
  int qd = 8;
  std::string which = "all";
  bool warm = false, tail = false;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::strtoull(argv[++i], nullptr, 10) : 0ull; };
    if (a == "--chunk-mib") chunk = next() << 20;
    else if (a == "--limit-mib") limit = next() << 20;
    else if (a == "--piece-mib") piece = next() << 20;
    else if (a == "--queue-depth") qd = static_cast<int>(next());
    else if (a == "--mode" && i + 1 < argc) which = argv[++i];
    else if (a == "--warm") warm = true;
    else if (a == "--tail") tail = true;
    else {
      std::fprintf(stderr, "unknown flag %s\n", a.c_str());
      return 2;
    }
  }
  const Mode modes[] = {{"buffered", false, false, false}, {"direct", true, false, false}, {"uring", true, true, false}};
  for (const Mode& m : modes) {
    if (which != "all" && which != m.name) continue;
    uaii::storage::FileSetOptions o;
    o.direct = m.direct;
    o.uring = m.uring;
    o.use_page_cache = warm;
    o.queue_depth = qd;
    o.piece_bytes = piece;
    uaii::storage::FileSet files(o);
    auto fi = files.Open(path);
    if (!fi.ok()) {
      std::fprintf(stderr, "%s\n", std::string(fi.status().message()).c_str());
      return 1;
    }
    const uint64_t total = std::min(limit, files.size(*fi));
    const uint64_t start = tail ? (files.size(*fi) - total) / uaii::storage::kDirectIoAlign * uaii::storage::kDirectIoAlign : 0;
    auto buf = uaii::storage::AlignedBytes::Allocate(chunk + uaii::storage::kDirectIoSlack);
    if (!warm) DropCache(path);
    const auto t0 = std::chrono::steady_clock::now();
    for (uint64_t off = 0; off < total; off += chunk) {
      auto r = files.ReadStaged(*fi, start + off, std::min(chunk, total - off), buf.data.get(), buf.size);
      if (!r.ok()) {
        std::fprintf(stderr, "%s\n", std::string(r.status().message()).c_str());
        return 1;
      }
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto c = files.counters();
    std::printf("{\"mode\": \"%s\", \"cache\": \"%s\", \"offset\": %llu, \"bytes\": %llu, \"seconds\": %.4f, \"bytes_per_s\": %.0f, "
                "\"direct_bytes\": %llu, \"cached_bytes\": %llu, \"buffered_bytes\": %llu, \"direct\": %s, "
                "\"uring\": %s, \"chunk_bytes\": %llu, \"queue_depth\": %d, \"piece_bytes\": %llu}\n",
                m.name, warm ? "warm" : "cold", (unsigned long long)start, (unsigned long long)total, s, total / s,
                (unsigned long long)c.direct_bytes, (unsigned long long)c.cached_bytes,
                (unsigned long long)c.buffered_bytes, files.direct(*fi) ? "true" : "false",
                files.uring() ? "true" : "false", (unsigned long long)chunk, qd, (unsigned long long)piece);
    std::fflush(stdout);
  }
  return 0;
}
