#include "storage/calibration.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "kernels/matmul.h"
#include "kernels/thread_pool.h"
#include "util/json_writer.h"
#include "util/str_cat.h"

namespace uaii::storage {
namespace {

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A number after "key": in a flat JSON object we wrote ourselves.
bool ReadNumber(const std::string& text, const std::string& key, double* v) {
  const auto at = text.find("\"" + key + "\"");
  if (at == std::string::npos) return false;
  const auto colon = text.find(':', at);
  if (colon == std::string::npos) return false;
  char* end = nullptr;
  *v = std::strtod(text.c_str() + colon + 1, &end);
  return end != text.c_str() + colon + 1 && *v > 0;
}

absl::StatusOr<std::pair<double, double>> MeasureDisk(const std::string& dir) {
  constexpr uint64_t kBytes = uint64_t{128} << 20;
  const std::string path = StrCat(dir, "/.calibration-", ::getpid(), ".tmp");
  std::vector<uint8_t> buf(uint64_t{8} << 20);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<uint8_t>(i * 2654435761u >> 24);
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return absl::PermissionDeniedError(StrCat(path, ": cannot create the calibration scratch file: ",
                                                        std::strerror(errno)));
  for (uint64_t done = 0; done < kBytes; done += buf.size())
    if (::pwrite(fd, buf.data(), buf.size(), static_cast<off_t>(done)) != static_cast<ssize_t>(buf.size())) {
      ::close(fd);
      ::unlink(path.c_str());
      return absl::ResourceExhaustedError(StrCat(path, ": cannot write the calibration scratch file"));
    }
  ::fsync(fd);
  auto read_all = [&] {
    auto t0 = Clock::now();
    for (uint64_t done = 0; done < kBytes; done += buf.size())
      if (::pread(fd, buf.data(), buf.size(), static_cast<off_t>(done)) <= 0) break;
    return Since(t0);
  };
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  const double cold = read_all();
  const double warm = read_all();
  ::close(fd);
  ::unlink(path.c_str());
  return std::make_pair(kBytes / cold, kBytes / warm);
}

double MeasureMemory() {
  constexpr size_t kBytes = size_t{64} << 20;
  std::vector<uint8_t> a(kBytes, 1), b(kBytes, 2);
  double best = 1e30;
  for (int r = 0; r < 3; ++r) {
    auto t0 = Clock::now();
    std::memcpy(b.data(), a.data(), kBytes);
    best = std::min(best, Since(t0));
  }
  return 2.0 * kBytes / best;  // read + write
}

double MeasureMatmul(int threads) {
  constexpr int64_t kOut = 4096, kIn = 4096;
  const uint64_t bytes = static_cast<uint64_t>(kOut) * (kIn / 32) * 18;  // Q4_0: 18 bytes per 32
  std::vector<uint8_t> w(bytes);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<uint8_t>(i * 40503u >> 8);
  for (int64_t r = 0; r < kOut * (kIn / 32); ++r) {  // sane f16 scales (0x2c00 ~ 1/16)
    w[r * 18] = 0x00;
    w[r * 18 + 1] = 0x2c;
  }
  std::vector<float> x(kIn, 0.5f), y(kOut);
  ThreadPool pool(threads);
  double best = 1e30;
  for (int r = 0; r < 5; ++r) {
    auto t0 = Clock::now();
    (void)MatMul(TensorType::Q4_0, w.data(), kOut, kIn, x.data(), 1, y.data(), &pool);
    best = std::min(best, Since(t0));
  }
  return bytes / best;
}

std::string NowIso() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

absl::StatusOr<Calibration> LoadOrMeasureCalibration(const std::string& dir, int threads) {
  const std::string path = dir + "/calibration.json";
  Calibration c;
  if (std::ifstream in(path); in) {
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    if (ReadNumber(text, "disk_read_bytes_per_s", &c.disk_read_bytes_per_s) &&
        ReadNumber(text, "cached_read_bytes_per_s", &c.cached_read_bytes_per_s) &&
        ReadNumber(text, "memory_bytes_per_s", &c.memory_bytes_per_s) &&
        ReadNumber(text, "matmul_bytes_per_s", &c.matmul_bytes_per_s)) {
      c.from_cache = true;
      const auto at = text.find("\"measured_at\"");
      if (at != std::string::npos) {
        const auto q1 = text.find('"', text.find(':', at) + 1), q2 = text.find('"', q1 + 1);
        if (q1 != std::string::npos && q2 != std::string::npos) c.measured_at = text.substr(q1 + 1, q2 - q1 - 1);
      }
      return c;
    }
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  auto disk = MeasureDisk(dir);
  if (!disk.ok()) return disk.status();
  c.disk_read_bytes_per_s = disk->first;
  c.cached_read_bytes_per_s = disk->second;
  c.memory_bytes_per_s = MeasureMemory();
  c.matmul_bytes_per_s = MeasureMatmul(threads);
  c.measured_at = NowIso();
  JsonWriter w(2);
  w.BeginObject();
  w.Key("disk_read_bytes_per_s").Double(c.disk_read_bytes_per_s);
  w.Key("cached_read_bytes_per_s").Double(c.cached_read_bytes_per_s);
  w.Key("memory_bytes_per_s").Double(c.memory_bytes_per_s);
  w.Key("matmul_bytes_per_s").Double(c.matmul_bytes_per_s);
  w.Key("measured_at").String(c.measured_at);
  w.EndObject();
  std::ofstream out(path);
  out << w.str() << "\n";  // best effort: an unwritable cache only means measuring again
  return c;
}

CostPrediction PredictDecode(const StoragePlan& plan, uint64_t matmul_bytes_per_token, const Calibration& cal) {
  CostPrediction p;
  const double streamed = static_cast<double>(plan.streamed_bytes_per_token);
  p.io_seconds = cal.disk_read_bytes_per_s > 0 ? streamed / cal.disk_read_bytes_per_s : 0;
  p.io_cached_seconds = cal.cached_read_bytes_per_s > 0 ? streamed / cal.cached_read_bytes_per_s : 0;
  p.compute_seconds = cal.matmul_bytes_per_s > 0 ? matmul_bytes_per_token / cal.matmul_bytes_per_s : 0;
  // Two staging buffers overlap the next read with this slice's compute; one does not.
  auto combine = [&](double io) {
    const double t = plan.staging_buffers >= 2 ? std::max(io, p.compute_seconds) : io + p.compute_seconds;
    return t > 0 ? 1.0 / t : 0.0;
  };
  p.tokens_per_s_cold = combine(p.io_seconds);
  p.tokens_per_s_warm = combine(p.io_cached_seconds);
  return p;
}

}  // namespace uaii::storage
