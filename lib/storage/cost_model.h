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
#pragma once
#include <cstdint>
#include <map>
#include <vector>

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
};

struct CpuShare {
  int threads = 1;             // compute threads
  int cores = 1;               // cores the process may use
  bool reads_use_cpu = false;  // page-cache copies (warm) rather than DMA (direct, cold)
};

// Steady-state seconds of one pass over `steps` (cyclic: the first slice of the next
// pass is prefetched during the last of this one) with `staging_buffers` buffers.
double SimulatePass(const std::vector<CostStep>& steps, int staging_buffers, const CpuShare& cpu);

struct MachineRates {
  double disk_bytes_per_s = 0;    // device, cold
  double cached_bytes_per_s = 0;  // page cache, warm
  double memory_bytes_per_s = 0;
  std::map<TensorType, double> matmul_bytes_per_s;  // measured types; others use the slowest measured
  std::map<TensorType, double> interleaved_bytes_per_s;  // the interleaved group kernels, where they exist
  std::map<TensorType, double> warm_stream_bytes_per_s;  // MatMul + page-cache copy of the next slice, overlapped
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
};

// `types[i]` is the weight type of in.tensors[i]; `plan` is PlanStorage(in, ...).
// `resident_interleaved`: resident weights run the interleaved group kernels where
// their type has them (runtime/session.cpp, runtime/streamed_weights.cpp).
CostPrediction PredictDecode(const PlanInputs& in, const std::vector<TensorType>& types, const StoragePlan& plan,
                             const MachineRates& rates, bool resident_interleaved = false);

}  // namespace uaii::storage
