#include "runtime/linear.h"

#include "kernels/matmul.h"

namespace uaii::runtime {

absl::Status Linear(const BoundWeight& w, const float* x, int64_t batch, float* y, ThreadPool* pool) {
  return MatMul(w.type, w.data, w.shape[0], w.shape[1], x, batch, y, pool);
}

absl::Status EmbedRows(const BoundWeight& w, const int32_t* ids, int64_t n, float* y) {
  return GetRows(w.type, w.data, w.shape[0], w.shape[1], ids, n, y);
}

}  // namespace uaii::runtime
