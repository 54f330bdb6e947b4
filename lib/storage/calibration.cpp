#include "storage/calibration.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <simdjson.h>
#include <sstream>
#include <thread>
#include <vector>

#include "kernels/interleave.h"
#include "kernels/matmul.h"
#include "kernels/thread_pool.h"
#include "storage/file_set.h"
#include "util/json_writer.h"
#include "util/str_cat.h"

namespace uaii::storage {
namespace {

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

int LogicalCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0 || line.rfind("Model", 0) == 0) {
      const auto c = line.find(':');
      if (c != std::string::npos) {
        std::string m = line.substr(c + 1);
        m.erase(0, m.find_first_not_of(' '));
        return m;
      }
    }
  return "unknown cpu";
}

// The device's bandwidth through the engine's read path, on `probe` (a model file of
// at least kProbeBytes): direct reads only, so the page cache is neither used nor
// changed. It reads the file's last kProbeBytes (the last layers, which a plan
// streams first) twice in 64 MiB chunks (8 pieces in flight) and times the second
// pass: streaming re-reads the same blocks every token, and some devices serve a
// re-read faster than a first read (a virtual disk whose host caches them; figures in
// docs/performance.md, "Figures behind the code's choices"). 0 when the file is too
// small or refuses direct I/O.
constexpr uint64_t kProbeBytes = uint64_t{512} << 20;
double MeasureDeviceOn(const std::string& probe) {
  FileSetOptions o;
  o.use_page_cache = false;
  FileSet files(o);
  auto fi = files.Open(probe);
  if (!fi.ok() || !files.direct(*fi) || files.size(*fi) < kProbeBytes) return 0;
  constexpr uint64_t kChunk = uint64_t{64} << 20;
  AlignedBytes buf = AlignedBytes::Allocate(kChunk + kDirectIoSlack);
  const uint64_t start = (files.size(*fi) - kProbeBytes) / kDirectIoAlign * kDirectIoAlign;
  double s = 0;
  for (int pass = 0; pass < 2; ++pass) {
    const auto t0 = Clock::now();
    for (uint64_t done = 0; done < kProbeBytes; done += kChunk)
      if (!files.ReadStaged(*fi, start + done, kChunk, buf.data.get(), buf.size).ok()) return 0;
    s = Since(t0);
  }
  return files.direct(*fi) && files.counters().buffered_bytes == 0 ? kProbeBytes / s : 0;
}

// Cold and warm reads of a scratch file through the engine's read path.
absl::StatusOr<std::pair<double, double>> MeasureDisk(const std::string& dir) {
  constexpr uint64_t kBytes = uint64_t{256} << 20, kChunk = uint64_t{32} << 20;
  const std::string path = StrCat(dir, "/.calibration-", ::getpid(), ".tmp");
  AlignedBytes buf = AlignedBytes::Allocate(kChunk + kDirectIoSlack);
  if (!buf.data) return absl::ResourceExhaustedError("cannot allocate the calibration read buffer");
  for (uint64_t i = 0; i < kChunk; ++i) buf.data.get()[i] = static_cast<uint8_t>(i * 2654435761u >> 24);
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    return absl::PermissionDeniedError(
        StrCat(path, ": cannot create the calibration scratch file: ", std::strerror(errno)));
  for (uint64_t done = 0; done < kBytes; done += kChunk)
    if (::pwrite(fd, buf.data.get(), kChunk, static_cast<off_t>(done)) != static_cast<ssize_t>(kChunk)) {
      ::close(fd);
      ::unlink(path.c_str());
      return absl::ResourceExhaustedError(StrCat(path, ": cannot write the calibration scratch file"));
    }
  ::fsync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  double cold = 0, warm = 0;
  absl::Status st;
  {
    FileSet files;  // the engine's path: page cache if it holds the bytes, else direct
    auto fi = files.Open(path);
    if (!fi.ok()) st = fi.status();
    auto t0 = Clock::now();
    for (uint64_t done = 0; st.ok() && done < kBytes; done += kChunk)
      if (auto r = files.ReadStaged(*fi, done, kChunk, buf.data.get(), buf.size); !r.ok()) st = r.status();
    cold = Since(t0);
    // Warm: into the page cache, then timed from it.
    for (uint64_t done = 0; st.ok() && done < kBytes; done += kChunk)
      st = files.Read(*fi, done, kChunk, buf.data.get());
    t0 = Clock::now();
    for (uint64_t done = 0; st.ok() && done < kBytes; done += kChunk)
      if (auto r = files.ReadStaged(*fi, done, kChunk, buf.data.get(), buf.size); !r.ok()) st = r.status();
    warm = Since(t0);
  }
  ::close(fd);
  ::unlink(path.c_str());
  if (!st.ok()) return st;
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

// Streaming read bandwidth with `threads` threads, each summing its share of a
// 256 MiB buffer (larger than any last-level cache): what a pass over resident
// weights can reach. A memcpy figure (MeasureMemory) is lower than this: it also
// writes, and one thread rarely saturates the memory controller.
double MeasureReadBandwidth(int threads) {
  constexpr size_t kWords = (size_t{256} << 20) / sizeof(uint64_t);
  std::vector<uint64_t> a(kWords, 0x0101010101010101ULL);
  ThreadPool pool(threads);
  std::vector<uint64_t> sink(static_cast<size_t>(threads) * 8);
  double best = 1e30;
  for (int r = 0; r < 4; ++r) {
    auto t0 = Clock::now();
    pool.ParallelFor(threads, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        const size_t b = kWords * static_cast<size_t>(c) / static_cast<size_t>(threads);
        const size_t e = kWords * static_cast<size_t>(c + 1) / static_cast<size_t>(threads);
        uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (size_t i = b; i + 4 <= e; i += 4) {
          s0 += a[i];
          s1 += a[i + 1];
          s2 += a[i + 2];
          s3 += a[i + 3];
        }
        sink[static_cast<size_t>(c) * 8] = s0 + s1 + s2 + s3;
      }
    });
    if (r > 0) best = std::min(best, Since(t0));  // the first pass faults the pages in
  }
  return static_cast<double>(kWords * sizeof(uint64_t)) / best;
}

std::string NowIso() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

struct CacheFile {
  double disk = 0, cached = 0, memory = 0;
  std::string measured_at;
  std::map<std::string, std::map<std::string, double>> matmul;  // key -> type name -> rate
  // observation key -> figure name -> rate (names this version does not know are kept)
  std::map<std::string, std::map<std::string, ObservedRate>> observed;
  std::string note;  // what was not usable, for Calibration::note
};

// "<model key>|<matmul key>": where a model's observed figures live.
std::string ObservationKey(const std::string& model_key, int threads) {
  return StrCat(model_key, "|", MatMulCalibrationKey(threads));
}

void ReadObserved(simdjson::dom::element doc, const std::string& path, CacheFile* c) {
  simdjson::dom::element all;
  if (doc["observed"].get(all) != simdjson::SUCCESS) return;  // none yet
  simdjson::dom::object keys;
  if (all.get_object().get(keys) != simdjson::SUCCESS) {
    c->note = StrCat(path, ": \"observed\" is not an object; the observed figures were ignored (the probes apply)");
    return;
  }
  for (auto kv : keys) {
    simdjson::dom::object figures;
    if (kv.value.get_object().get(figures) != simdjson::SUCCESS) {
      c->note = StrCat(path, ": observed[\"", std::string(kv.key), "\"] is not an object; ignored");
      continue;
    }
    for (auto fv : figures) {
      ObservedRate r;
      simdjson::dom::object o;
      double rate = 0;
      if (fv.value.get_object().get(o) != simdjson::SUCCESS || o["bytes_per_s"].get_double().get(rate) != simdjson::SUCCESS ||
          !(rate > 0) || !std::isfinite(rate)) {
        c->note = StrCat(path, ": observed[\"", std::string(kv.key), "\"][\"", std::string(fv.key),
                         "\"] has no positive bytes_per_s; ignored (the probe applies)");
        continue;
      }
      r.bytes_per_s = rate;
      int64_t n = 0;
      r.samples = o["samples"].get_int64().get(n) == simdjson::SUCCESS && n > 0 ? n : 1;
      // The recent runs (a cache written before they were kept has none: the figure
      // stands for one). Entries that are not positive rates are left out.
      simdjson::dom::array recent;
      if (o["recent"].get_array().get(recent) == simdjson::SUCCESS)
        for (auto v : recent) {
          double x = 0;
          if (v.get_double().get(x) == simdjson::SUCCESS && x > 0 && std::isfinite(x)) r.recent.push_back(x);
        }
      if (r.recent.size() > kRecentRuns) r.recent.erase(r.recent.begin(), r.recent.end() - kRecentRuns);
      if (r.recent.empty()) r.recent.push_back(rate);
      std::string_view at;
      if (o["updated_at"].get_string().get(at) == simdjson::SUCCESS) r.updated_at = std::string(at);
      c->observed[std::string(kv.key)][std::string(fv.key)] = r;
    }
  }
}

CacheFile ReadCache(const std::string& path) {
  CacheFile c;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return c;  // not measured yet: no note
  const auto err = parser.load(path).get(doc);
  if (err != simdjson::SUCCESS || !doc.is_object()) {
    c.note = StrCat(path, ": ", err != simdjson::SUCCESS ? simdjson::error_message(err) : "not a JSON object",
                    "; the calibration was measured again and the file rewritten (observed figures lost)");
    return c;
  }
  auto num = [&](const char* key, double* v) {
    double d = 0;
    if (doc[key].get_double().get(d) == simdjson::SUCCESS && d > 0) *v = d;
  };
  num("disk_read_bytes_per_s", &c.disk);
  num("cached_read_bytes_per_s", &c.cached);
  num("memory_bytes_per_s", &c.memory);
  std::string_view at;
  if (doc["measured_at"].get_string().get(at) == simdjson::SUCCESS) c.measured_at = std::string(at);
  simdjson::dom::object mm;
  if (doc["matmul"].get_object().get(mm) == simdjson::SUCCESS)
    for (auto kv : mm) {
      simdjson::dom::object types;
      if (kv.value.get_object().get(types) != simdjson::SUCCESS) continue;
      for (auto tv : types) {
        double d = 0;
        if (tv.value.get_double().get(d) == simdjson::SUCCESS) c.matmul[std::string(kv.key)][std::string(tv.key)] = d;
      }
    }
  ReadObserved(doc, path, &c);
  return c;
}

absl::Status WriteCache(const std::string& path, const CacheFile& c) {
  JsonWriter w(2);
  w.BeginObject();
  w.Key("disk_read_bytes_per_s").Double(c.disk);
  w.Key("cached_read_bytes_per_s").Double(c.cached);
  w.Key("memory_bytes_per_s").Double(c.memory);
  w.Key("measured_at").String(c.measured_at);
  w.Key("matmul").BeginObject();
  for (const auto& [key, types] : c.matmul) {
    w.Key(key).BeginObject();
    for (const auto& [t, r] : types) w.Key(t).Double(r);
    w.EndObject();
  }
  w.EndObject();
  w.Key("observed").BeginObject();
  for (const auto& [key, figures] : c.observed) {
    w.Key(key).BeginObject();
    for (const auto& [name, r] : figures) {
      w.Key(name).BeginObject();
      w.Key("bytes_per_s").Double(r.bytes_per_s);
      w.Key("samples").Int(r.samples);
      w.Key("recent").BeginArray();
      for (double x : r.recent) w.Double(x);
      w.EndArray();
      w.Key("updated_at").String(r.updated_at);
      w.EndObject();
    }
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  // Written whole to a temporary name, then renamed: concurrent runs never see half a
  // file (two runs folding at once may lose one of the two updates, never the file).
  const std::string tmp = StrCat(path, ".", ::getpid(), ".tmp");
  std::error_code ec;
  {
    std::ofstream out(tmp);
    out << w.str() << "\n";
    if (!out) {
      std::filesystem::remove(tmp, ec);
      return absl::PermissionDeniedError(StrCat(tmp, ": cannot write the calibration cache"));
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    const std::string why = ec.message();
    std::filesystem::remove(tmp, ec);
    return absl::PermissionDeniedError(StrCat(path, ": cannot replace the calibration cache: ", why));
  }
  return absl::OkStatus();
}

constexpr ObservedFigure kFigures[] = {ObservedFigure::kDisk, ObservedFigure::kColdCompute, ObservedFigure::kWarmStream,
                                      ObservedFigure::kResident};

void FillObserved(const CacheFile& file, const std::string& model_key, Calibration* c) {
  if (model_key.empty()) return;
  c->observed_key = ObservationKey(model_key, c->threads);
  auto it = file.observed.find(c->observed_key);
  if (it == file.observed.end()) return;
  for (ObservedFigure f : kFigures)
    if (auto r = it->second.find(ObservedFigureName(f)); r != it->second.end()) c->observed[f] = r->second;
}

}  // namespace

std::string MatMulCalibrationKey(int threads) {
  return StrCat(CpuModel(), "|threads=", threads, "|kernels=", kMatMulKernelVersion);
}

double MeasureMatMulBytesPerSecond(TensorType type, int threads, bool interleaved) {
  if (interleaved ? !kernels::HasInterleavedKernel(type) : !HasMatMulKernel(type)) return 0;
  const TensorTypeTraits* tr = FindTensorType(static_cast<uint32_t>(type));
  if (!tr) return 0;
  // Decode-shaped GEMVs (in = 4096, a multiple of every block size) over a working set
  // of 8 matrices, 160 MiB in all: larger than any last-level cache, so the weights
  // come from DRAM as a model's do. Bytes 0x11 give normal f16 / bf16 / f32 values
  // and scales everywhere (no denormals to slow the arithmetic).
  constexpr int64_t kIn = 4096;
  constexpr int kMatrices = 8;
  const uint64_t row = *RowBytes(*tr, kIn);
  // Rows a multiple of 64, as models' matrices are (no ragged tail of row-major rows
  // in a probe meant to stand for them).
  const int64_t out = std::max<int64_t>(64, static_cast<int64_t>((uint64_t{20} << 20) / row) / 64 * 64);
  const uint64_t bytes = static_cast<uint64_t>(out) * row;
  std::vector<std::vector<uint8_t>> w(kMatrices, std::vector<uint8_t>(bytes, 0x11));
  if (interleaved) {
    std::vector<uint8_t> packed(bytes);
    for (auto& m : w) {
      if (!kernels::RepackInterleaved(type, m.data(), out, kIn, packed.data()).ok()) return 0;
      m.swap(packed);
    }
  }
  std::vector<float> x(kIn), y(out);
  for (int64_t i = 0; i < kIn; ++i) x[i] = 0.5f - static_cast<float>(i % 7) * 0.1f;
  ThreadPool pool(threads);
  // The median of 5 passes (after one warm-up): a decode run lasts seconds and meets
  // the machine's typical load, not its best moment.
  std::vector<double> times;
  for (int pass = 0; pass < 6; ++pass) {
    auto t0 = Clock::now();
    for (int m = 0; m < kMatrices; ++m)
      if (!(interleaved ? kernels::MatMulInterleaved(type, w[m].data(), out, kIn, x.data(), 1, y.data(), &pool)
                        : MatMul(type, w[m].data(), out, kIn, x.data(), 1, y.data(), &pool))
               .ok())
        return 0;
    if (pass > 0) times.push_back(Since(t0));
  }
  std::sort(times.begin(), times.end());
  return static_cast<double>(bytes) * kMatrices / times[times.size() / 2];
}

double MeasureWarmStreamBytesPerSecond(const std::string& dir, TensorType type, int threads) {
  if (!HasMatMulKernel(type)) return 0;
  const TensorTypeTraits* tr = FindTensorType(static_cast<uint32_t>(type));
  if (!tr) return 0;
  // A page-cached scratch file of 0x11 bytes (valid weights of every type, as above)
  // streamed as the engine streams a warm file: a background thread copies slice i+1
  // from the page cache (FileSet::ReadStaged) while MatMul computes slice i. The rate
  // includes what the two cost each other: CPU (the copy needs a core the compute
  // threads want) and memory bandwidth (the copy reads and writes).
  constexpr int64_t kIn = 4096;
  constexpr int kSlices = 8;
  const uint64_t row = *RowBytes(*tr, kIn);
  const int64_t rows = std::max<int64_t>(64, static_cast<int64_t>((uint64_t{24} << 20) / row));
  const uint64_t slice = static_cast<uint64_t>(rows) * row;
  const std::string path = StrCat(dir, "/.calibration-stream-", ::getpid(), ".tmp");
  {
    std::vector<uint8_t> fill(slice, 0x11);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    for (int i = 0; i <= kSlices; ++i) out.write(reinterpret_cast<const char*>(fill.data()), static_cast<std::streamsize>(slice));
    if (!out) {
      std::filesystem::remove(path);
      return 0;
    }
  }  // not synced: the pages stay in the page cache, which is the point
  double rate = 0;
  {
    FileSet files;
    auto fi = files.Open(path);
    AlignedBytes a = AlignedBytes::Allocate(slice + kDirectIoSlack), b = AlignedBytes::Allocate(slice + kDirectIoSlack);
    std::vector<float> x(kIn, 0.25f), y(rows);
    ThreadPool pool(threads);
    if (fi.ok()) {
      auto cur = files.ReadStaged(*fi, 0, slice, a.data.get(), a.size);
      bool ok = cur.ok();
      const auto t0 = Clock::now();
      for (int i = 1; ok && i <= kSlices; ++i) {
        AlignedBytes& next_buf = (i % 2) ? b : a;
        absl::StatusOr<const uint8_t*> next;
        std::thread reader([&] { next = files.ReadStaged(*fi, static_cast<uint64_t>(i) * slice, slice,
                                                         next_buf.data.get(), next_buf.size); });
        ok = MatMul(type, *cur, rows, kIn, x.data(), 1, y.data(), &pool).ok();
        reader.join();
        ok = ok && next.ok();
        if (ok) cur = next;
      }
      if (ok) rate = static_cast<double>(slice) * kSlices / Since(t0);
    }
  }
  std::filesystem::remove(path);
  return rate;
}

namespace {

// What identifies a calibration (and keys its cached matmul figures): threads, this
// CPU and the matmul kernels' version.
Calibration CalibrationFor(int threads) {
  Calibration c;
  c.threads = threads;
  c.cores = LogicalCpus();
  c.kernel_version = kMatMulKernelVersion;
  c.cpu = CpuModel();
  c.matmul_key = MatMulCalibrationKey(threads);
  return c;
}

}  // namespace

absl::StatusOr<Calibration> LoadOrMeasureCalibration(const std::string& dir, int threads,
                                                     std::vector<TensorType> types, const std::string& probe_file,
                                                     const std::string& model_key) {
  if (threads <= 0) threads = ThreadPool::DefaultThreadCount();
  if (types.empty()) types.push_back(TensorType::Q4_0);
  const std::string path = dir + "/calibration.json";
  CacheFile file = ReadCache(path);
  Calibration c = CalibrationFor(threads);
  bool changed = false;
  if (file.disk <= 0 || file.cached <= 0 || file.memory <= 0) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    auto disk = MeasureDisk(dir);
    if (!disk.ok()) return disk.status();
    // The scratch file was just written (some virtual disks read fresh writes at
    // another speed than old data): a model file, when there is one, is the better probe.
    const double device = probe_file.empty() ? 0 : MeasureDeviceOn(probe_file);
    file.disk = device > 0 ? device : disk->first;
    file.cached = disk->second;
    file.memory = MeasureMemory();
    file.measured_at = NowIso();
    changed = true;
  }
  auto& rates = file.matmul[c.matmul_key];
  // Resident weights stream at the read bandwidth of the run's threads (per key).
  if (!rates.count("memory_read")) {
    rates["memory_read"] = MeasureReadBandwidth(threads);
    changed = true;
  }
  for (TensorType t : types) {
    const std::string warm = StrCat(TensorTypeName(static_cast<uint32_t>(t)), "/warm_stream");
    if (!rates.count(warm)) {
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      rates[warm] = MeasureWarmStreamBytesPerSecond(dir, t, threads);
      changed = true;
    }
    if (rates[warm] > 0) c.warm_stream_bytes_per_s[t] = rates[warm];
    for (bool il : {false, true}) {
      // A rate <= 0 is cached too ("no kernel"): the cost model then uses the
      // slowest measured type (row-major) or the row-major rate (interleaved).
      const std::string name = StrCat(TensorTypeName(static_cast<uint32_t>(t)), il ? "/interleaved" : "");
      if (!rates.count(name)) {
        rates[name] = MeasureMatMulBytesPerSecond(t, threads, il);
        changed = true;
      }
      if (rates[name] > 0) (il ? c.interleaved_bytes_per_s : c.matmul_bytes_per_s)[t] = rates[name];
    }
  }
  c.disk_read_bytes_per_s = file.disk;
  c.cached_read_bytes_per_s = file.cached;
  c.memory_bytes_per_s = rates["memory_read"] > 0 ? rates["memory_read"] : file.memory;
  c.measured_at = file.measured_at;
  c.main_matmul_bytes_per_s = c.matmul_bytes_per_s.count(types[0]) ? c.matmul_bytes_per_s[types[0]] : 0;
  c.from_cache = !changed;
  c.note = file.note;
  FillObserved(file, model_key, &c);
  if (changed) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    (void)WriteCache(path, file);  // best effort: an unwritable cache only means measuring again
  }
  return c;
}

Calibration LoadCachedCalibration(const std::string& dir, int threads, std::vector<TensorType> types,
                                  const std::string& model_key) {
  if (threads <= 0) threads = ThreadPool::DefaultThreadCount();
  if (types.empty()) types.push_back(TensorType::Q4_0);
  const CacheFile file = ReadCache(dir + "/calibration.json");
  Calibration c = CalibrationFor(threads);
  c.disk_read_bytes_per_s = file.disk;
  c.cached_read_bytes_per_s = file.cached;
  c.memory_bytes_per_s = file.memory;
  c.measured_at = file.measured_at;
  if (auto it = file.matmul.find(c.matmul_key); it != file.matmul.end()) {
    const auto& rates = it->second;
    auto get = [&](const std::string& name) {
      auto r = rates.find(name);
      return r != rates.end() ? r->second : 0.0;
    };
    if (get("memory_read") > 0) c.memory_bytes_per_s = get("memory_read");
    for (TensorType t : types) {
      const std::string name(TensorTypeName(static_cast<uint32_t>(t)));
      if (get(name) > 0) c.matmul_bytes_per_s[t] = get(name);
      if (get(name + "/interleaved") > 0) c.interleaved_bytes_per_s[t] = get(name + "/interleaved");
      if (get(name + "/warm_stream") > 0) c.warm_stream_bytes_per_s[t] = get(name + "/warm_stream");
    }
  }
  c.main_matmul_bytes_per_s = c.matmul_bytes_per_s.count(types[0]) ? c.matmul_bytes_per_s[types[0]] : 0;
  c.from_cache = true;
  c.note = file.note;
  FillObserved(file, model_key, &c);
  return c;
}

std::string ModelCalibrationKey(const std::string& model_path) {
  std::error_code ec;
  auto canon = std::filesystem::weakly_canonical(model_path, ec);
  const std::string p = ec ? model_path : canon.string();
  const auto size = std::filesystem::is_regular_file(p, ec) ? std::filesystem::file_size(p, ec) : 0;
  return size > 0 && !ec ? StrCat(p, "|", static_cast<uint64_t>(size)) : p;
}

absl::StatusOr<ObservedRate> FoldObservation(const std::string& dir, const std::string& model_key, int threads,
                                             ObservedFigure figure, double bytes_per_s) {
  if (!(bytes_per_s > 0) || !std::isfinite(bytes_per_s))
    return absl::InvalidArgumentError(
        StrCat("observed ", ObservedFigureName(figure), " rate must be a positive number, got ", bytes_per_s));
  if (threads <= 0) threads = ThreadPool::DefaultThreadCount();
  const std::string path = dir + "/calibration.json";
  CacheFile file = ReadCache(path);  // corrupt: rewritten with this observation alone
  ObservedRate& o = file.observed[ObservationKey(model_key, threads)][ObservedFigureName(figure)];
  // The first run replaces the probe; then the median of the last kRecentRuns.
  o.recent.push_back(bytes_per_s);
  if (o.recent.size() > kRecentRuns) o.recent.erase(o.recent.begin(), o.recent.end() - kRecentRuns);
  std::vector<double> sorted = o.recent;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  o.bytes_per_s = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  ++o.samples;
  o.updated_at = NowIso();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (auto st = WriteCache(path, file); !st.ok()) return st;
  return o;
}

double ObservedRate::low() const {
  return recent.empty() ? bytes_per_s : *std::min_element(recent.begin(), recent.end());
}

double ObservedRate::high() const {
  return recent.empty() ? bytes_per_s : *std::max_element(recent.begin(), recent.end());
}

MachineRates RatesOf(const Calibration& c, bool use_observed, Spread spread) {
  auto observed = [&](ObservedFigure f) {
    auto it = c.observed.find(f);
    if (!use_observed || it == c.observed.end()) return 0.0;
    return spread == Spread::kLow ? it->second.low() : spread == Spread::kHigh ? it->second.high() : it->second.bytes_per_s;
  };
  MachineRates r;
  r.disk_bytes_per_s = observed(ObservedFigure::kDisk) > 0 ? observed(ObservedFigure::kDisk) : c.disk_read_bytes_per_s;
  r.observed_resident_bytes_per_s = observed(ObservedFigure::kResident);
  r.observed_warm_stream_bytes_per_s = observed(ObservedFigure::kWarmStream);
  r.observed_cold_compute_bytes_per_s = observed(ObservedFigure::kColdCompute);
  r.cached_bytes_per_s = c.cached_read_bytes_per_s;
  r.memory_bytes_per_s = c.memory_bytes_per_s;
  r.matmul_bytes_per_s = c.matmul_bytes_per_s;
  r.interleaved_bytes_per_s = c.interleaved_bytes_per_s;
  r.warm_stream_bytes_per_s = c.warm_stream_bytes_per_s;
  r.threads = c.threads;
  r.cores = c.cores;
  return r;
}

}  // namespace uaii::storage
