#include "runtime/linear.h"

#include "kernels/interleave.h"
#include "kernels/matmul.h"
#include "runtime/weight_source.h"

namespace uaii::runtime {

absl::Status Linear(const BoundWeight& w, const float* x, int64_t batch, float* y, ThreadPool* pool) {
  if (WeightSource* src = WeightSourceScope::Current()) return src->Linear(w, x, batch, y, pool);
  return ResidentLinear(w, x, batch, y, pool);
}

absl::Status ResidentLinear(const BoundWeight& w, const float* x, int64_t batch, float* y, ThreadPool* pool) {
  if (const uint8_t* il = InterleavedData(w))
    return kernels::MatMulInterleaved(w.type, il, w.shape[0], w.shape[1], x, batch, y, pool);
  return MatMul(w.type, w.data, w.shape[0], w.shape[1], x, batch, y, pool);
}

absl::Status EmbedRows(const BoundWeight& w, const int32_t* ids, int64_t n, float* y) {
  if (WeightSource* src = WeightSourceScope::Current()) return src->Embed(w, ids, n, y);
  if (const uint8_t* il = InterleavedData(w))
    return kernels::GetRowsInterleaved(w.type, il, w.shape[0], w.shape[1], ids, n, y);
  return GetRows(w.type, w.data, w.shape[0], w.shape[1], ids, n, y);
}

}  // namespace uaii::runtime

namespace uaii::runtime {
namespace {
thread_local WeightSource* g_source = nullptr;
}  // namespace

WeightSourceScope::WeightSourceScope(WeightSource* s) : prev_(g_source) { g_source = s; }
WeightSourceScope::~WeightSourceScope() { g_source = prev_; }
WeightSource* WeightSourceScope::Current() { return g_source; }

bool IsMatmulWeightInput(const std::string& op_type, size_t input) {
  return (op_type == "matmul" && input == 1) || (op_type == "norm_linear" && input >= 2);
}

}  // namespace uaii::runtime
