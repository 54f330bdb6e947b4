// A program's weight-access hook: where a weight's bytes come from while a graph
// runs (backends::RunContext::weights). Without a source a program reads the
// bindings (the memory mapping; everything resident).
// A storage-planned session (runtime/streamed_weights.h) passes one that serves
// pinned weights from owned memory and streams the rest from disk in row slices.
#pragma once
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "kernels/thread_pool.h"
#include "runtime/weights.h"

namespace uaii::runtime {

class ExpertCache;  // runtime/moe_cache.h

class WeightSource {
 public:
  virtual ~WeightSource() = default;
  // Bytes of a weight that is read element-wise (norms, biases): always resident.
  virtual const uint8_t* Resident(const BoundWeight& w) const = 0;
  // y [batch, out] = x [batch, in] . W^T (runtime/linear.h), W pinned or streamed.
  virtual absl::Status Linear(const BoundWeight& w, const float* x, int64_t batch, float* y, ThreadPool* pool) = 0;
  // y [n, cols] = rows `ids` of W, reading only those rows when W streams.
  virtual absl::Status Embed(const BoundWeight& w, const int32_t* ids, int64_t n, float* y) = 0;
  // The LRU that serves moe_ffn expert banks which are not resident (Resident() gives
  // null for them); null when every bank is resident.
  virtual ExpertCache* Experts() { return nullptr; }
};

// Input indices of `op_type` that are matmul weights (read row by row, every token):
// matmul {1}, norm_linear {2, 3, ...}. Embedding tables are input 0 of "embed".
bool IsMatmulWeightInput(const std::string& op_type, size_t input);

}  // namespace uaii::runtime
