// The storage cost model: predicted decode time of one token under a storage plan
// (`uaii generate --dry-run`, benchmarks/bench_storage.py).
//
// A decode step runs every matmul weight once, in graph order. Per weight:
//   compute  = bytes / (the measured MatMul throughput of its type, batch 1, the
//              run's threads, weights coming from DRAM; storage/calibration.h; the
//              interleaved kernels' for resident weights, which the runtime repacks
//              at load where the type has such kernels),
//              and for a resident weight at least bytes / memory bandwidth;
//   read     = (streamed only) bytes / disk bandwidth (cold) or page-cache
//              bandwidth (warm), per row slice as the engine reads it.
// Overlap follows the staging pipeline (storage/staging.h), slice by slice: with two
// buffers, slice k+1 is read while slice k computes, and the read starts when slice
// k is handed to the engine, so
//   acquire(k) = max(engine reaches k, read(k) done);  read(k+1) = [acquire(k), +read_{k+1});
// resident weights compute meanwhile. Summed over a pass this is close to
// sum_k max(read_{k+1}, compute between acquisitions) — not read + compute. With one
// buffer (phone) every read is synchronous: sum(read + compute).
// A read that copies on the CPU (page cache, warm) competes with the compute threads
// for cores and memory bandwidth: a step then takes at least (threads * compute +
// read) / cores when threads + 1 > cores, and at least bytes / (the calibrated rate
// of MatMul overlapped with such a copy). Direct reads (cold) are DMA: no CPU.
//
// Observed figures (storage/calibration.h, learned from the model's own runs) replace
// the probes' where present: a cold streamed slice computes at the rate the engine's
// own compute time (decode time not waiting for reads) shows, which on a small VM is
// well below the MatMul probe's (the device's interrupts and completions take CPU
// too); the disk rate is the one that then makes this simulation reproduce the run's
// decode time, so compute and I/O wait per token match the engine's; a warm streamed slice
// takes bytes / the observed warm streaming rate (compute, the page-cache copy and
// their contention together: the run measured them together); a resident matmul
// takes bytes / the observed resident rate (a whole resident decode pass per weight
// byte, attention, norms and sampling included). FitObservedRate finds the figure
// that makes this model give a measured decode time.
#pragma once
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "formats/tensor_type.h"
#include "storage/plan.h"

namespace uaii::storage {

// One matmul of a decode pass, in execution order.
struct CostStep {
  double read_seconds = 0;     // streamed slice: its read; resident: 0
  double compute_seconds = 0;
  bool streamed = false;
  // Streamed: the least time this compute takes while the next slice is being read
  // (measured contention of a page-cache copy with MatMul; 0: none).
  double overlap_seconds = 0;
  // compute_seconds already includes what the reader's copies cost it (an observed
  // warm rate): no CPU-sharing penalty on top.
  bool contention_included = false;
};

struct CpuShare {
  int threads = 1;             // compute threads
  int cores = 1;               // cores the process may use
  bool reads_use_cpu = false;  // page-cache copies (warm) rather than DMA (direct, cold)
};

// Steady-state seconds of one pass over `steps` (cyclic: the first slice of the next
// pass is prefetched during the last of this one) with `staging_buffers` buffers.
// `wait_seconds` (optional): of that, the time the engine waits for reads (what
// `--json` reports as io_wait_seconds, per pass).
double SimulatePass(const std::vector<CostStep>& steps, int staging_buffers, const CpuShare& cpu,
                    double* wait_seconds = nullptr);

struct MachineRates {
  double disk_bytes_per_s = 0;    // device, cold
  double cached_bytes_per_s = 0;  // page cache, warm
  double memory_bytes_per_s = 0;
  std::map<TensorType, double> matmul_bytes_per_s;  // measured types; others use the slowest measured
  std::map<TensorType, double> interleaved_bytes_per_s;  // the interleaved group kernels, where they exist
  std::map<TensorType, double> warm_stream_bytes_per_s;  // MatMul + page-cache copy of the next slice, overlapped
  // Observed on this model's runs (0: none, the probes above apply). The observed disk
  // rate, when there is one, is disk_bytes_per_s itself (RatesOf).
  double observed_resident_bytes_per_s = 0;     // resident matmul bytes per second of a resident pass
  double observed_warm_stream_bytes_per_s = 0;  // warm streamed bytes per second of their steps, copy included
  double observed_cold_compute_bytes_per_s = 0; // cold streamed slices' MatMul while direct reads run
  int threads = 1;
  int cores = 1;
};

struct CostPrediction {
  double io_seconds = 0;         // streamed bytes / disk bandwidth (cold)
  double io_cached_seconds = 0;  // streamed bytes / page-cache bandwidth (warm)
  double compute_seconds = 0;    // every matmul at its measured throughput
  double resident_seconds = 0;   // resident matmul bytes / memory bandwidth (a floor of their compute)
  double token_seconds_cold = 0; // the simulated pass, reads from the disk
  double token_seconds_warm = 0; // the simulated pass, reads from the page cache
  double tokens_per_s_cold = 0;
  double tokens_per_s_warm = 0;
  double io_wait_seconds_cold = 0;  // of token_seconds_cold, waiting for reads
  double io_wait_seconds_warm = 0;
};

// `types[i]` is the weight type of in.tensors[i]; `plan` is PlanStorage(in, ...).
// `resident_interleaved`: resident weights run the interleaved group kernels where
// their type has them (runtime/session.cpp, runtime/streamed_weights.cpp).
CostPrediction PredictDecode(const PlanInputs& in, const std::vector<TensorType>& types, const StoragePlan& plan,
                             const MachineRates& rates, bool resident_interleaved = false);

// The figures a run can teach (storage/calibration.h keeps them per model).
enum class ObservedFigure {
  kDisk,         // a cold streaming run: MachineRates::disk_bytes_per_s
  kColdCompute,  // the same run's compute time: observed_cold_compute_bytes_per_s
  kWarmStream,  // a warm streaming run: observed_warm_stream_bytes_per_s
  kResident,    // a run with nothing streamed: observed_resident_bytes_per_s
};
const char* ObservedFigureName(ObservedFigure f);  // "disk", "cold_compute", "warm_stream", "resident"

// The value of `figure` (bytes/s) for which PredictDecode's token_seconds_cold (kDisk),
// its compute part token_seconds_cold - io_wait_seconds_cold (kColdCompute), or
// token_seconds_warm (the others) equals `token_seconds`, the other rates as given. Fails when
// no value does: the figure's term is not what limited the run (it was at most 10%
// slower than the other terms alone allow), or the plan has nothing it governs.
absl::StatusOr<double> FitObservedRate(const PlanInputs& in, const std::vector<TensorType>& types,
                                       const StoragePlan& plan, MachineRates rates, bool resident_interleaved,
                                       ObservedFigure figure, double token_seconds);

// One decode run as the engine measured it.
struct RunTimings {
  bool cold = false;             // the streamed bytes came from the device (else the page cache)
  double token_seconds = 0;      // per decode step
  double io_wait_seconds = 0;    // per decode step, waiting for streamed reads
};

// The figures a run teaches, fitted in order with `rates` as cached: nothing streamed:
// kResident; warm: kWarmStream; cold: kColdCompute to the time not waiting, then kDisk
// with it to the whole time. A figure whose term did not limit the run is left out,
// except that a cold run that never waited yields, for a disk figure below it, the
// rate at which reads would add 10% to its compute-bound pass (a lower bound).
std::vector<std::pair<ObservedFigure, double>> LearnFromRun(const PlanInputs& in, const std::vector<TensorType>& types,
                                                            const StoragePlan& plan, MachineRates rates,
                                                            bool resident_interleaved, const RunTimings& run);

}  // namespace uaii::storage
