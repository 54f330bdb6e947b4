#include "backends/cpu/linear.h"

#include <cstring>
#include <vector>

#include "kernels/interleave.h"
#include "kernels/matmul.h"
#include "runtime/weight_source.h"

namespace uaii::backends::cpu {

namespace {

// y = W x over a source's bytes: held ones whole, streamed ones slice by slice. A
// row slice gives the whole matrix's bits for its rows (kernels/matmul.h: every
// output element is one dot product), so streaming does not change results.
absl::Status SourceLinear(runtime::WeightSource& src, const BoundWeight& w, const float* x, int64_t batch, float* y,
                          ThreadPool* pool) {
  auto held = src.Held(w);
  if (!held.ok()) return held.status();
  const int64_t out = w.shape[0], in = w.shape[1];
  if (held->data != nullptr && held->interleaved)
    return kernels::MatMulInterleaved(w.type, held->data, out, in, x, batch, y, pool);
  if (held->data != nullptr) return MatMul(w.type, held->data, out, in, x, batch, y, pool);
  thread_local std::vector<float> slice_out;  // a batch's rows of one slice, scattered into y
  return src.ForEachRowSlice(w, [&](int64_t r0, int64_t r1, const uint8_t* rows) -> absl::Status {
    const int64_t m = r1 - r0;
    if (batch == 1) return MatMul(w.type, rows, m, in, x, batch, y + r0, pool);
    slice_out.resize(static_cast<size_t>(batch * m));
    if (auto st = MatMul(w.type, rows, m, in, x, batch, slice_out.data(), pool); !st.ok()) return st;
    for (int64_t b = 0; b < batch; ++b) std::memcpy(y + b * out + r0, slice_out.data() + b * m, m * sizeof(float));
    return absl::OkStatus();
  });
}

absl::Status SourceEmbed(runtime::WeightSource& src, const BoundWeight& w, const int32_t* ids, int64_t n, float* y) {
  auto held = src.Held(w);
  if (!held.ok()) return held.status();
  const int64_t rows = w.shape[0], cols = w.shape[1];
  if (held->data != nullptr && held->interleaved)
    return kernels::GetRowsInterleaved(w.type, held->data, rows, cols, ids, n, y);
  if (held->data != nullptr) return GetRows(w.type, held->data, rows, cols, ids, n, y);
  // Only the looked-up rows are read, then looked up in the scratch copy.
  thread_local std::vector<uint8_t> row_bytes;
  thread_local std::vector<int32_t> local;
  row_bytes.resize(static_cast<size_t>(n * w.row_bytes));
  if (auto st = src.ReadRows(w, ids, n, row_bytes.data()); !st.ok()) return st;
  local.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) local[i] = static_cast<int32_t>(i);
  return GetRows(w.type, row_bytes.data(), n, cols, local.data(), n, y);
}

}  // namespace

absl::Status Linear(const RunContext& ctx, const BoundWeight& w, const float* x, int64_t batch, float* y) {
  if (ctx.weights != nullptr) return SourceLinear(*ctx.weights, w, x, batch, y, ctx.pool);
  return ResidentLinear(w, x, batch, y, ctx.pool);
}

absl::Status ResidentLinear(const BoundWeight& w, const float* x, int64_t batch, float* y, ThreadPool* pool) {
  if (const uint8_t* il = InterleavedData(w))
    return kernels::MatMulInterleaved(w.type, il, w.shape[0], w.shape[1], x, batch, y, pool);
  return MatMul(w.type, w.data, w.shape[0], w.shape[1], x, batch, y, pool);
}

absl::Status EmbedRows(const RunContext& ctx, const BoundWeight& w, const int32_t* ids, int64_t n, float* y) {
  if (ctx.weights != nullptr) return SourceEmbed(*ctx.weights, w, ids, n, y);
  if (const uint8_t* il = InterleavedData(w))
    return kernels::GetRowsInterleaved(w.type, il, w.shape[0], w.shape[1], ids, n, y);
  return GetRows(w.type, w.data, w.shape[0], w.shape[1], ids, n, y);
}

}  // namespace uaii::backends::cpu
