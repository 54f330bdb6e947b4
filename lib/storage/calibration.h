// The machine figures the storage cost model (storage/cost_model.h) needs, measured
// once and cached as JSON in `$UAII_HOME/calibration.json` (delete it to measure
// again):
//   disk_read_bytes_per_s    512 MiB of the model file read with direct I/O through
//                            the engine's own read path (FileSet::ReadStaged, pieces
//                            in flight); without one, a 256 MiB scratch file read
//                            cold (POSIX_FADV_DONTNEED first) the same way
//   cached_read_bytes_per_s  the same file read again through the page cache
//   memory_bytes_per_s       streaming read bandwidth of the run's threads over a
//                            buffer larger than the caches (memcpy's rate, which
//                            also writes, only when that is missing)
//   matmul[key][TYPE]        weight bytes per second of the public MatMul
//                            (kernels/matmul.h) at batch 1, the run's thread count,
//                            weights streaming from DRAM (a rotating working set
//                            larger than the caches; median of 5 passes), per
//                            weight type of the model;
//                            key = "<cpu model>|threads=N|kernels=V" with V =
//                            kMatMulKernelVersion, so a kernel change, another
//                            thread count or another machine measures again;
//                            "TYPE/interleaved": the same through the interleaved
//                            group kernels (kernels/interleave.h), which resident
//                            (pinned or mapped) weights run;
//                            "TYPE/warm_stream": slices streamed from the page
//                            cache while MatMul computes the previous one (the
//                            copy's CPU and memory traffic included).
//   observed[key][FIGURE]    what this model's own runs got (FoldObservation after
//                            every non-dry run): {bytes_per_s, samples, recent,
//                            updated_at} per ObservedFigure ("disk", "cold_compute",
//                            "warm_stream", "resident"): bytes_per_s is the median
//                            of `recent`, the last kRecentRuns fitted rates (their
//                            spread is the prediction's range); key = "<model file>|
//                            <its size>|<matmul key>": a tiny model's runs (weights in
//                            the CPU caches) say nothing about a 7B's. The cost model
//                            uses an observed figure instead of the probe's.
// An unreadable or corrupt file is measured again (Calibration::note says so); an
// observed entry that is not a positive rate is ignored, with a note. Writes are
// whole-file renames; a file that cannot be written never fails a run.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "formats/tensor_type.h"
#include "storage/cost_model.h"

namespace uaii::storage {

// A figure learned from runs: the median of the last kRecentRuns fitted rates, and
// their spread.
struct ObservedRate {
  double bytes_per_s = 0;      // the median of `recent`: what the cost model uses
  int64_t samples = 0;         // runs folded in, all time
  std::vector<double> recent;  // the last kRecentRuns fitted rates, oldest first
  std::string updated_at;      // ISO 8601 UTC of the last run folded in
  double low() const;          // the slowest of `recent` (bytes_per_s when empty)
  double high() const;         // the fastest
};

// Runs a figure remembers. A median of several, not a weighted mean: a virtual disk's
// rate can move by a third between runs a minute apart (docs/performance.md,
// "Storage"), and a mean follows one fast or slow run halfway, a median of three or
// more does not; the spread of the same runs is the prediction's range.
constexpr size_t kRecentRuns = 8;

struct Calibration {
  double disk_read_bytes_per_s = 0;
  double cached_read_bytes_per_s = 0;
  double memory_bytes_per_s = 0;
  std::map<TensorType, double> matmul_bytes_per_s;       // the requested types, at `threads`
  std::map<TensorType, double> interleaved_bytes_per_s;  // the same on the 16-row interleaved layout
  std::map<TensorType, double> warm_stream_bytes_per_s;  // MatMul overlapped with page-cache copies
  double main_matmul_bytes_per_s = 0;  // the first requested type's (the model's most bytes)
  int threads = 1;
  int cores = 1;
  int kernel_version = 0;
  std::string cpu;
  std::string matmul_key;
  std::string measured_at;  // ISO 8601 UTC of the disk / memory figures
  bool from_cache = false;  // every figure came from the file
  // Learned from this model's runs (empty without a model key or before its first run).
  std::string observed_key;
  std::map<ObservedFigure, ObservedRate> observed;
  std::string note;  // why (part of) the cache was not used, empty when it was
};

// Reads `dir`/calibration.json and measures what it lacks for `threads` and `types`
// (about a second for the disk, ~0.1 s per type), writing the file back. `types`
// empty: Q4_0. threads <= 0: the machine's cores.
// `probe_file` (optional, e.g. the model file): the disk figure is measured on it with
// direct reads (512 MiB from its middle; the page cache is neither used nor changed)
// instead of the scratch file, when it is large enough and takes direct I/O.
// `model_key` (ModelCalibrationKey of the model; optional): the figures observed on
// that model's runs at `threads` are loaded too.
absl::StatusOr<Calibration> LoadOrMeasureCalibration(const std::string& dir, int threads = 0,
                                                     std::vector<TensorType> types = {},
                                                     const std::string& probe_file = "",
                                                     const std::string& model_key = "");

// What the cache holds for `threads`, `types` and `model_key`, measuring nothing and
// writing nothing (figures it lacks are 0: the cost model then leaves their terms out).
Calibration LoadCachedCalibration(const std::string& dir, int threads, std::vector<TensorType> types,
                                  const std::string& model_key);

// Which value of each observed figure RatesOf takes: the median, or the slowest /
// fastest of its recent runs (the ends of the prediction's range).
enum class Spread { kCentral, kLow, kHigh };

// The cost model's rates from a calibration: the observed figures where there are
// some (use_observed), else the probes'.
MachineRates RatesOf(const Calibration& c, bool use_observed = true, Spread spread = Spread::kCentral);

// "<canonical path>|<size in bytes>" of a model file ("<canonical path>" for a
// directory): the model part of an observation's key.
std::string ModelCalibrationKey(const std::string& model_path);

// Folds one run's fitted `figure` (bytes/s; cost_model.h, FitObservedRate) into
// `dir`/calibration.json under `model_key` at `threads`: the new mean. Fails (and
// leaves the file as it was) only when the file cannot be written.
absl::StatusOr<ObservedRate> FoldObservation(const std::string& dir, const std::string& model_key, int threads,
                                             ObservedFigure figure, double bytes_per_s);

// "<cpu model>|threads=N|kernels=V" (the matmul cache key).
std::string MatMulCalibrationKey(int threads);

// One type's MatMul throughput (bytes of packed weights per second) with `threads`:
// kernels/matmul.h's MatMul on row-major weights (streamed slices), or (interleaved)
// the group kernels of kernels/interleave.h that resident weights run.
// 0 when there is no such kernel for the type.
double MeasureMatMulBytesPerSecond(TensorType type, int threads, bool interleaved = false);

// Weight bytes per second of a warm streaming pipeline alone: 24 MiB slices copied
// from the page cache (a scratch file in `dir`) by a second thread while MatMul with
// `threads` computes the previous slice. 0 when it cannot be measured.
double MeasureWarmStreamBytesPerSecond(const std::string& dir, TensorType type, int threads);

}  // namespace uaii::storage
