#include "kernels/matmul.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "kernels/dispatch.h"
#include "kernels/gemm_tile.h"
#include "kernels/quantize_act.h"
#include "kernels/vec_dot.h"

namespace uaii {
namespace {

using kernels::VecDotFn;

absl::string_view Name(TensorType t) {
  const std::string_view s = TensorTypeName(static_cast<uint32_t>(t));
  return absl::string_view(s.data(), s.size());
}

// How a weight type's activation rows are prepared.
enum class Act { kF32, kF16, kBF16, kQ8_0, kQ8_1, kQ8_K };

bool ActFormat(TensorType t, Act* act) {
  switch (t) {
    case TensorType::F32: *act = Act::kF32; return true;
    case TensorType::F16: *act = Act::kF16; return true;
    case TensorType::BF16: *act = Act::kBF16; return true;
    case TensorType::Q4_0: case TensorType::Q5_0: case TensorType::Q8_0:
      *act = Act::kQ8_0; return true;
    case TensorType::Q4_1: case TensorType::Q5_1: *act = Act::kQ8_1; return true;
    case TensorType::Q2_K: case TensorType::Q3_K:
    case TensorType::Q4_K: case TensorType::Q5_K: case TensorType::Q6_K:
      *act = Act::kQ8_K; return true;
    default: return false;
  }
}

// Bytes of one prepared activation row of `in` elements.
int64_t ActRowBytes(Act act, int64_t in) {
  switch (act) {
    case Act::kF32: return in * 4;
    case Act::kF16: case Act::kBF16: return in * 2;
    case Act::kQ8_0: return in / quant::kQK * int64_t{sizeof(quant::BlockQ8_0)};
    case Act::kQ8_1: return in / quant::kQK * int64_t{sizeof(quant::BlockQ8_1)};
    case Act::kQ8_K: return in / quant::kQK_K * int64_t{sizeof(quant::BlockQ8_K)};
  }
  return 0;
}

void PrepareRow(Act act, const float* x, int64_t in, uint8_t* dst) {
  switch (act) {
    case Act::kF32: std::memcpy(dst, x, static_cast<size_t>(in) * 4); break;
    case Act::kF16: kernels::ConvertRowF16(x, reinterpret_cast<uint16_t*>(dst), in); break;
    case Act::kBF16: kernels::ConvertRowBF16(x, reinterpret_cast<uint16_t*>(dst), in); break;
    case Act::kQ8_0: kernels::QuantizeRowQ8_0(x, reinterpret_cast<quant::BlockQ8_0*>(dst), in); break;
    case Act::kQ8_1: kernels::QuantizeRowQ8_1(x, reinterpret_cast<quant::BlockQ8_1*>(dst), in); break;
    case Act::kQ8_K: kernels::QuantizeRowQ8_K(x, reinterpret_cast<quant::BlockQ8_K*>(dst), in); break;
  }
}

// Runs fn over [0, n) on the pool (or inline).
template <typename Fn>
void ForRange(ThreadPool* pool, int64_t n, int64_t min_chunk, Fn&& fn) {
  if (pool == nullptr || pool->num_threads() == 1) {
    fn(int64_t{0}, n);
    return;
  }
  pool->ParallelFor(n, fn, min_chunk);
}

}  // namespace

bool HasMatMulKernel(TensorType type) { return kernels::VecDotRef(type) != nullptr; }

namespace {

// The checks every entry point makes; on success *act and *row_bytes describe `type`.
absl::Status CheckShape(TensorType type, int64_t out, int64_t in, int64_t batch, Act* act, int64_t* row_bytes) {
  const TensorTypeTraits* traits = FindTensorType(static_cast<uint32_t>(type));
  if (traits == nullptr || !ActFormat(type, act) || !HasMatMulKernel(type)) {
    return absl::UnimplementedError(absl::StrCat("matmul: no kernel for tensor type ", Name(type)));
  }
  if (out < 0 || in < 0 || batch < 0) {
    return absl::InvalidArgumentError(absl::StrCat("matmul: negative shape out=", out,
                                                   " in=", in, " batch=", batch));
  }
  const auto rb = RowBytes(*traits, static_cast<uint64_t>(in));
  if (!rb) {
    return absl::InvalidArgumentError(absl::StrCat(
        "matmul: row length ", in, " is not a multiple of the ", Name(type), " block size ",
        traits->block_size));
  }
  int64_t total;
  if (__builtin_mul_overflow(static_cast<int64_t>(*rb), out, &total) ||
      __builtin_mul_overflow(in, batch, &total)) {
    return absl::InvalidArgumentError(absl::StrCat("matmul: shape overflows: out=", out,
                                                   " in=", in, " batch=", batch));
  }
  *row_bytes = static_cast<int64_t>(*rb);
  return absl::OkStatus();
}

// A checked multiply: the type's activation format and row bytes, the kernels of the
// requested level, and whether there is any work (out or batch may be 0).
struct Call {
  Act act = Act::kF32;
  int64_t row_bytes = 0;
  kernels::KernelChoice kc;
  bool empty = false;
};

// CheckShape, then what a multiply needs: the pointers (x: the input rows, raw or
// prepared) and the kernels of the requested level.
absl::StatusOr<Call> CheckCall(TensorType type, const void* w, int64_t out, int64_t in, const void* x,
                               int64_t batch, const float* y, KernelImpl impl) {
  Call c;
  if (absl::Status st = CheckShape(type, out, in, batch, &c.act, &c.row_bytes); !st.ok()) return st;
  c.empty = out == 0 || batch == 0;
  if (c.empty) return c;
  if (w == nullptr || x == nullptr || y == nullptr) {
    return absl::InvalidArgumentError("matmul: null weight, input or output pointer");
  }
  absl::StatusOr<kernels::KernelChoice> choice = kernels::ChooseKernels(type, impl);
  if (!choice.ok()) return choice.status();
  c.kc = *choice;
  return c;
}

// Every activation row converted once to the type's format (row b depends only on x row b).
void PrepareRows(Act act, int64_t in, const float* x, int64_t batch, uint8_t* dst, ThreadPool* pool) {
  const int64_t act_bytes = ActRowBytes(act, in);
  ForRange(batch > 1 ? pool : nullptr, batch, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) PrepareRow(act, x + b * in, in, dst + b * act_bytes);
  });
}

// y = W acts for activations already in the type's format (a checked, non-empty call).
void RunPrepared(const Call& c, const void* w, int64_t out, int64_t in, const uint8_t* acts, int64_t batch,
                 float* y, ThreadPool* pool) {
  const VecDotFn dot = c.kc.dot;
  const Act act = c.act;
  const int64_t act_bytes = ActRowBytes(act, in);

  // Output rows split across threads (in whole tiles of kTileRows); each y element is
  // one dot product, computed by a register tile (gemm_tile.h) where the type has one
  // or by the row kernel, with the same f32 operations either way. Rows are walked in
  // cache tiles of kCacheRows so that those weights stay in cache across the batch,
  // and each register tile takes up to kTileCols activation rows at once.
  const uint8_t* wb = static_cast<const uint8_t*>(w);
  const int64_t wrow = c.row_bytes;
  const kernels::TileFn tile = c.kc.tile;
  constexpr int64_t R = kernels::kTileRows, C = kernels::kTileCols;
  const int64_t kCacheRows = batch == 1 ? 64 : 16;
  const int64_t groups = (out + R - 1) / R;
  ForRange(pool, groups, kCacheRows / R, [&](int64_t g0, int64_t g1) {
    const int64_t o0 = g0 * R, o1 = std::min(out, g1 * R);
    for (int64_t t = o0; t < o1; t += kCacheRows) {
      const int64_t t1 = std::min(o1, t + kCacheRows);
      for (int64_t b = 0; b < batch; b += C) {
        const int cols = static_cast<int>(std::min(C, batch - b));
        const uint8_t* a = acts + b * act_bytes;
        int64_t o = t;
        if (tile != nullptr) {
          for (; o + R <= t1; o += R) {
            // A tile reads kTileRows short streams at once, which the hardware
            // prefetcher does not pick up on short rows (docs/performance.md,
            // "Kernels"); prefetching the tile two ahead, in address order, keeps
            // the tile at streaming speed.
            if (b == 0 && o + 3 * R <= out)
              for (int64_t p = 0; p < R * wrow; p += 64) __builtin_prefetch(wb + (o + 2 * R) * wrow + p);
            tile(wb + o * wrow, wrow, a, act_bytes, in, cols, y + b * out + o, out);
          }
        }
        for (; o < t1; ++o)
          for (int k = 0; k < cols; ++k) y[(b + k) * out + o] = dot(wb + o * wrow, a + k * act_bytes, in);
      }
    }
  });
}

}  // namespace

absl::Status PrepareMatMulActs(TensorType type, int64_t in, const float* x, int64_t batch,
                               std::vector<uint8_t>* acts, ThreadPool* pool) {
  Act act = Act::kF32;
  int64_t row_bytes;
  if (absl::Status st = CheckShape(type, 0, in, batch, &act, &row_bytes); !st.ok()) return st;
  if (batch > 0 && x == nullptr) return absl::InvalidArgumentError("matmul: null input pointer");
  acts->resize(static_cast<size_t>(ActRowBytes(act, in) * batch));
  PrepareRows(act, in, x, batch, acts->data(), pool);
  return absl::OkStatus();
}

absl::Status MatMulPrepared(TensorType type, const void* w, int64_t out, int64_t in, const uint8_t* acts,
                            int64_t batch, float* y, ThreadPool* pool, KernelImpl impl) {
  const absl::StatusOr<Call> c = CheckCall(type, w, out, in, acts, batch, y, impl);
  if (!c.ok()) return c.status();
  if (!c->empty) RunPrepared(*c, w, out, in, acts, batch, y, pool);
  return absl::OkStatus();
}

absl::Status MatMul(TensorType type, const void* w, int64_t out, int64_t in, const float* x,
                    int64_t batch, float* y, ThreadPool* pool, KernelImpl impl) {
  const absl::StatusOr<Call> c = CheckCall(type, w, out, in, x, batch, y, impl);
  if (!c.ok() || c->empty) return c.status();
  // The calling thread's scratch, reused across calls (no allocation per token once
  // warm); the pool's workers read it through the pointer.
  thread_local std::vector<uint8_t> acts;
  acts.resize(static_cast<size_t>(ActRowBytes(c->act, in) * batch));
  PrepareRows(c->act, in, x, batch, acts.data(), pool);
  RunPrepared(*c, w, out, in, acts.data(), batch, y, pool);
  return absl::OkStatus();
}

absl::Status DequantizeRow(TensorType type, const void* row, int64_t cols, float* out) {
  const TensorTypeTraits* traits = FindTensorType(static_cast<uint32_t>(type));
  if (traits == nullptr || traits->dequantize == nullptr) {
    return absl::UnimplementedError(absl::StrCat("dequantize: unsupported tensor type ", Name(type)));
  }
  if (cols < 0 || cols % traits->block_size != 0) {
    return absl::InvalidArgumentError(absl::StrCat("dequantize: row length ", cols,
                                                   " is not a multiple of the ", Name(type),
                                                   " block size ", traits->block_size));
  }
  traits->dequantize(row, out, cols / traits->block_size);
  return absl::OkStatus();
}

absl::Status GetRows(TensorType type, const void* w, int64_t rows, int64_t cols,
                     const int32_t* ids, int64_t n_ids, float* out) {
  const TensorTypeTraits* traits = FindTensorType(static_cast<uint32_t>(type));
  if (traits == nullptr || traits->dequantize == nullptr) {
    return absl::UnimplementedError(absl::StrCat("get_rows: unsupported tensor type ", Name(type)));
  }
  const auto row_bytes = cols < 0 ? std::nullopt : RowBytes(*traits, static_cast<uint64_t>(cols));
  if (!row_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("get_rows: row length ", cols,
                                                   " is not a multiple of the ", Name(type),
                                                   " block size ", traits->block_size));
  }
  for (int64_t i = 0; i < n_ids; ++i) {
    if (ids[i] < 0 || ids[i] >= rows) {
      return absl::OutOfRangeError(absl::StrCat("get_rows: row id ", ids[i], " (index ", i,
                                                ") outside [0, ", rows, ")"));
    }
  }
  const uint8_t* wb = static_cast<const uint8_t*>(w);
  for (int64_t i = 0; i < n_ids; ++i) {
    traits->dequantize(wb + static_cast<int64_t>(*row_bytes) * ids[i], out + i * cols,
                       cols / traits->block_size);
  }
  return absl::OkStatus();
}

}  // namespace uaii
