// Matrix-vector / matrix-matrix products directly on packed weights, and row
// lookup (embeddings) for every dequantizable type.
//
//   y[b * out + o] = sum_i W[o, i] * x[b * in + i]     0 <= o < out, 0 <= b < batch
//
// W is `out` rows of `in` elements, row-major, each row packed in `type` (RowBytes
// per row, rows contiguous: exactly a GGUF 2-D tensor with dims {in, out}). x and y
// are f32, row-major, not aliased with each other or with W.
//
// Activations are first converted per row to the weight type's vec_dot_type exactly
// as ggml's reference does (F32 -> as is, F16/BF16 -> rounded, Q4_0/Q5_0/Q8_0 ->
// Q8_0, Q4_1/Q5_1 -> Q8_1, K-quants -> Q8_K), then every y element is one dot product
// with a fixed summation order (vec_dot.h). Results therefore do not depend on
// batch, on chunking, on the thread count, or on scalar vs AVX2 code: all are
// bit-identical. Threads split output rows only.
#pragma once
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "formats/tensor_type.h"
#include "kernels/thread_pool.h"

namespace uaii {

inline constexpr int kMatMulKernelVersion = 3;  // bump when a MatMul kernel changes: keys the cached storage calibration

// Which kernel level to run (kernels/dispatch.h). kAuto picks the best the CPU has
// (or the level named by UAII_KERNELS); the others force one level, for tests and
// benchmarks, and fail when the CPU lacks it.
enum class KernelImpl { kAuto, kScalar, kAvx2, kSse42, kAvx512, kNeon };

// True when MatMul has a kernel for `type` (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1,
// Q8_0, Q4_K, Q5_K, Q6_K).
bool HasMatMulKernel(TensorType type);

// y = W x as above. `in` must be a multiple of the type's block size. `pool` may be
// null (runs on the calling thread). Errors: no kernel for the type, bad shape,
// null pointers, a forced level the CPU lacks (or a bad UAII_KERNELS value).
absl::Status MatMul(TensorType type, const void* w, int64_t out, int64_t in,
                    const float* x, int64_t batch, float* y, ThreadPool* pool = nullptr,
                    KernelImpl impl = KernelImpl::kAuto);

// MatMul in two steps, for several row ranges of matrices of one type and `in` that
// share an activation (a decode stage's grains, runtime/stage_linear.h): the
// activation rows converted once to the type's format (*acts resized; pool may split
// the rows), then y = W acts for any run of W's rows. Bit-identical to MatMul.
absl::Status PrepareMatMulActs(TensorType type, int64_t in, const float* x, int64_t batch,
                               std::vector<uint8_t>* acts, ThreadPool* pool = nullptr);
absl::Status MatMulPrepared(TensorType type, const void* w, int64_t out, int64_t in, const uint8_t* acts,
                            int64_t batch, float* y, ThreadPool* pool = nullptr,
                            KernelImpl impl = KernelImpl::kAuto);

// Dequantizes one packed row of `cols` elements to f32 (bit-exact with gguf.quants).
absl::Status DequantizeRow(TensorType type, const void* row, int64_t cols, float* out);

// Embedding lookup: out[i * cols + c] = W[ids[i], c] for a packed matrix of `rows`
// rows of `cols` elements. Fails naming the first id outside [0, rows).
absl::Status GetRows(TensorType type, const void* w, int64_t rows, int64_t cols,
                     const int32_t* ids, int64_t n_ids, float* out);

}  // namespace uaii
