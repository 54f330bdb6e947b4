// Weight-side operators on bound (packed, memory-mapped) weights.
#pragma once
#include <cstdint>

#include "absl/status/status.h"
#include "backends/backend.h"
#include "kernels/thread_pool.h"
#include "runtime/weights.h"

namespace uaii::backends::cpu {

using runtime::BoundWeight;

// y [batch, out] = x [batch, in] . W^T with W [out, in] packed in its file type,
// through ctx.weights when the run has a weight source (storage-planned sessions),
// else on the binding's bytes (ResidentLinear). ctx.pool splits the rows.
absl::Status Linear(const RunContext& ctx, const BoundWeight& w, const float* x, int64_t batch, float* y);

// The same on W's bytes in memory, never through a weight source: its interleaved copy
// (weights.h) when one was made, else the row-major bytes at w.data. Delegates to the
// kernels' MatMul (ggml's activation formats and f32 order).
absl::Status ResidentLinear(const BoundWeight& w, const float* x, int64_t batch, float* y, ThreadPool* pool);

// y [n, cols] = rows `ids` of W [rows, cols], dequantized (ggml_get_rows), through
// ctx.weights as Linear.
absl::Status EmbedRows(const RunContext& ctx, const BoundWeight& w, const int32_t* ids, int64_t n, float* y);

}  // namespace uaii::backends::cpu
