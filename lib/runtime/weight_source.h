// A program's weight-access hook: where a weight's bytes come from while a graph
// runs (backends::RunContext::weights). Without a source a program reads the
// bindings (the memory mapping; everything resident).
// A storage-planned session (runtime/streamed_weights.h) passes one that serves
// pinned weights from owned memory and streams the rest from disk in row slices.
#pragma once
#include <cstdint>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "kernels/thread_pool.h"
#include "runtime/weights.h"

namespace uaii::runtime {

class ExpertCache;  // runtime/moe_cache.h

// A source yields bytes and never computes: the backend runs the matmul or the
// lookup over them (backends/cpu/linear.h), so results are the kernels' on the same
// bytes whichever source served them.
class WeightSource {
 public:
  virtual ~WeightSource() = default;
  // Bytes of a weight that is read element-wise (norms, biases): always resident.
  virtual const uint8_t* Resident(const BoundWeight& w) const = 0;

  // A matmul or embedding weight held in memory: its bytes, row-major or in the
  // kernels' 16-row interleaved layout (kernels/interleave.h). Null data: it streams.
  struct Matrix {
    const uint8_t* data = nullptr;
    bool interleaved = false;
  };
  // Errors name a weight the source does not know.
  virtual absl::StatusOr<Matrix> Held(const BoundWeight& w) const = 0;

  // A streamed matrix's rows in order, slice by slice: fn(r0, r1, bytes) with the
  // row-major bytes of rows [r0, r1), valid during the call. Stops at fn's first error.
  using SliceFn = absl::FunctionRef<absl::Status(int64_t r0, int64_t r1, const uint8_t* rows)>;
  virtual absl::Status ForEachRowSlice(const BoundWeight& w, SliceFn fn) = 0;

  // Rows `ids` of a streamed table, read into dst (n rows of w.row_bytes each, in
  // order); only those rows are read. Fails naming an id outside the table.
  virtual absl::Status ReadRows(const BoundWeight& w, const int32_t* ids, int64_t n, uint8_t* dst) = 0;

  // The LRU that serves moe_ffn expert banks which are not resident (Resident() gives
  // null for them); null when every bank is resident.
  virtual ExpertCache* Experts() { return nullptr; }
};

// Input indices of `op_type` that are matmul weights (read row by row, every token):
// matmul {1}, norm_linear {2, 3, ...}. Embedding tables are input 0 of "embed".
bool IsMatmulWeightInput(const std::string& op_type, size_t input);

}  // namespace uaii::runtime
