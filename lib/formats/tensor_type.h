// Tensor element formats: one traits table (ggml's type ids, which GGUF persists).
// Block-quantized formats store `block_size` elements in `type_size` bytes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/status.h"

namespace uaii {

// Values are ggml's `enum ggml_type` ids as stored in GGUF tensor infos. Never renumber.
enum class TensorType : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3,
  Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15,
  IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20, IQ3_S = 21,
  IQ2_S = 22, IQ4_XS = 23, I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28,
  IQ1_M = 29, BF16 = 30, TQ1_0 = 34, TQ2_0 = 35, MXFP4 = 39, NVFP4 = 40, Q1_0 = 41,
};

// Converts `n_blocks` packed blocks at `src` to `n_blocks * block_size` floats.
using DequantizeFn = void (*)(const void* src, float* dst, int64_t n_blocks);

struct TensorTypeTraits {
  TensorType type;
  std::string_view name;   // ggml's name ("Q4_K"); persisted, never changes
  int64_t block_size;      // elements per block (1 for plain types)
  int64_t type_size;       // bytes per block
  DequantizeFn dequantize; // null when uaii has no codec for the type
};

// Traits of a known type id, or nullptr for an id ggml never defined.
const TensorTypeTraits* FindTensorType(uint32_t id);
// Ok for a type uaii can dequantize (has a codec), else `unsupported tensor type NAME
// in TENSOR`: UnimplementedError for a known type without codec (IQ*, TQ*, MXFP4,
// integer types), InvalidArgumentError for an id ggml never defined.
absl::Status CheckSupported(uint32_t id, std::string_view tensor_name);
// "Q4_K", or "type#N" for unknown ids.
std::string_view TensorTypeName(uint32_t id);

// Bytes of a row of `n` elements, or nullopt when `n` is not a multiple of the block
// size or the product overflows.
std::optional<uint64_t> RowBytes(const TensorTypeTraits& t, uint64_t n);

}  // namespace uaii
