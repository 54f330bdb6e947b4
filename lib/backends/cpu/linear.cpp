#include "backends/cpu/linear.h"

#include "kernels/interleave.h"
#include "kernels/matmul.h"
#include "runtime/weight_source.h"

namespace uaii::backends::cpu {

absl::Status Linear(const RunContext& ctx, const BoundWeight& w, const float* x, int64_t batch, float* y) {
  if (ctx.weights != nullptr) return ctx.weights->Linear(w, x, batch, y, ctx.pool);
  return ResidentLinear(w, x, batch, y, ctx.pool);
}

absl::Status ResidentLinear(const BoundWeight& w, const float* x, int64_t batch, float* y, ThreadPool* pool) {
  if (const uint8_t* il = InterleavedData(w))
    return kernels::MatMulInterleaved(w.type, il, w.shape[0], w.shape[1], x, batch, y, pool);
  return MatMul(w.type, w.data, w.shape[0], w.shape[1], x, batch, y, pool);
}

absl::Status EmbedRows(const RunContext& ctx, const BoundWeight& w, const int32_t* ids, int64_t n, float* y) {
  if (ctx.weights != nullptr) return ctx.weights->Embed(w, ids, n, y);
  if (const uint8_t* il = InterleavedData(w))
    return kernels::GetRowsInterleaved(w.type, il, w.shape[0], w.shape[1], ids, n, y);
  return GetRows(w.type, w.data, w.shape[0], w.shape[1], ids, n, y);
}

}  // namespace uaii::backends::cpu
