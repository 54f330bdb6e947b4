// The machine figures the storage cost model needs, measured once and cached as JSON
// in `$UAII_HOME/calibration.json` (delete the file to measure again):
//   disk_read_bytes_per_s    cold sequential pread of a scratch file after
//                            POSIX_FADV_DONTNEED (the page cache dropped for it)
//   cached_read_bytes_per_s  the same read again, from the page cache
//   memory_bytes_per_s       memcpy between two buffers larger than the caches
//   matmul_bytes_per_s       packed Q4_0 weight bytes a GEMV consumes per second
//                            (single-token decode is bound by this)
#pragma once
#include <string>

#include "absl/status/statusor.h"
#include "storage/plan.h"

namespace uaii::storage {

struct Calibration {
  double disk_read_bytes_per_s = 0;
  double cached_read_bytes_per_s = 0;
  double memory_bytes_per_s = 0;
  double matmul_bytes_per_s = 0;
  std::string measured_at;  // ISO 8601 UTC
  bool from_cache = false;
};

// Reads `dir`/calibration.json, or measures (about a second) and writes it there.
absl::StatusOr<Calibration> LoadOrMeasureCalibration(const std::string& dir, int threads = 0);

// Predicted decode figures of a plan on this machine (per token, one token at a time).
struct CostPrediction {
  double io_seconds = 0;        // streamed bytes / disk bandwidth (cold) 
  double io_cached_seconds = 0; // streamed bytes / page-cache bandwidth (warm)
  double compute_seconds = 0;   // all matmul bytes / matmul throughput
  double tokens_per_s_cold = 0; // with two staging buffers reads overlap compute: 1 / max(io, compute)
  double tokens_per_s_warm = 0;
};
CostPrediction PredictDecode(const StoragePlan& plan, uint64_t matmul_bytes_per_token, const Calibration& cal);

}  // namespace uaii::storage
