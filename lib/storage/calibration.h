// The machine figures the storage cost model (storage/cost_model.h) needs, measured
// once and cached as JSON in `$UAII_HOME/calibration.json` (delete it to measure
// again):
//   disk_read_bytes_per_s    a 256 MiB scratch file read cold (POSIX_FADV_DONTNEED
//                            first) through the engine's own read path
//                            (FileSet::ReadStaged: direct I/O, pieces in flight)
//   cached_read_bytes_per_s  the same file read again through the page cache
//   memory_bytes_per_s       memcpy between two buffers larger than the caches
//   matmul[key][TYPE]        weight bytes per second of the public MatMul
//                            (kernels/matmul.h) at batch 1, the run's thread count,
//                            weights streaming from DRAM (a rotating working set
//                            larger than the caches), per weight type of the model;
//                            key = "<cpu model>|threads=N|kernels=V" with V =
//                            kMatMulKernelVersion, so a kernel change, another
//                            thread count or another machine measures again.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "formats/tensor_type.h"
#include "storage/cost_model.h"

namespace uaii::storage {

struct Calibration {
  double disk_read_bytes_per_s = 0;
  double cached_read_bytes_per_s = 0;
  double memory_bytes_per_s = 0;
  std::map<TensorType, double> matmul_bytes_per_s;  // the requested types, at `threads`
  double main_matmul_bytes_per_s = 0;  // the first requested type's (the model's most bytes)
  int threads = 1;
  int cores = 1;
  int kernel_version = 0;
  std::string cpu;
  std::string matmul_key;
  std::string measured_at;  // ISO 8601 UTC of the disk / memory figures
  bool from_cache = false;  // every figure came from the file
};

// Reads `dir`/calibration.json and measures what it lacks for `threads` and `types`
// (about a second for the disk, ~0.1 s per type), writing the file back. `types`
// empty: Q4_0. threads <= 0: the machine's cores.
absl::StatusOr<Calibration> LoadOrMeasureCalibration(const std::string& dir, int threads = 0,
                                                     std::vector<TensorType> types = {});

// The cost model's rates from a calibration.
MachineRates RatesOf(const Calibration& c);

// "<cpu model>|threads=N|kernels=V" (the matmul cache key).
std::string MatMulCalibrationKey(int threads);

// One type's MatMul throughput (bytes of packed weights per second) with `threads`.
// Exposed for benchmarks/tests; 0 when MatMul has no kernel for the type.
double MeasureMatMulBytesPerSecond(TensorType type, int threads);

}  // namespace uaii::storage
