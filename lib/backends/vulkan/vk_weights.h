// Weights on the device, uploaded once when a program is compiled. A product or
// lookup weight keeps its file's blocks where a kernel reads them packed (F32, F16,
// Q8_0, Q4_0: repacked so that each block starts on a 32-bit word, shaders/quant.glsl);
// any other type is requantized to Q8_0 at upload (dequantized, then quantized per 32
// elements as the CPU quantizes activations: each element moves by at most half a
// Q8_0 step of its block), or kept as F32 where its rows are not whole Q8_0 blocks.
// Rows are split into chunks of at most the device's maxStorageBufferRange (and
// 1 GiB), each its own buffer; a kernel runs once per chunk.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/vulkan/vk_buffer.h"
#include "formats/tensor_type.h"
#include "runtime/weights.h"

namespace uaii::backends::vulkan {

struct DeviceWeight {
  std::string layout;            // the kernels' suffix: "f32", "f16", "q8_0", "q4_0"
  TensorType source = TensorType::F32;
  bool requantized = false;      // the file's type has no kernel: Q8_0 (or F32) instead
  int64_t rows = 0, cols = 0;    // a matrix [rows, cols]; element-wise weights: [1, n]
  uint64_t row_words = 0;
  struct Chunk {
    std::unique_ptr<Buffer> buffer;
    int64_t row_begin = 0, rows = 0;
  };
  std::vector<Chunk> chunks;
  Buffer::Kind kind = Buffer::Kind::kDevice;  // kHost: beyond the device budget, read across the bus
  uint64_t bytes() const { return static_cast<uint64_t>(rows) * row_words * 4; }
};

// Whether the device reads `type` packed (otherwise UploadMatrix requantizes it).
bool HasMatrixKernel(TensorType type);

// A matrix (matmul / embed weight; an expert bank's leading dimensions fold into rows).
// kind kHost: in host memory the device reads across the bus (past the device budget).
absl::StatusOr<std::unique_ptr<DeviceWeight>> UploadMatrix(const std::shared_ptr<Device>& device,
                                                           const runtime::BoundWeight& w, uint64_t max_chunk_bytes,
                                                           Buffer::Kind kind = Buffer::Kind::kDevice);
// The bytes UploadMatrix would take on the device (its layout's), reading no weight data.
absl::StatusOr<uint64_t> MatrixDeviceBytes(const runtime::BoundWeight& w);
// An element-wise weight (norm weights, biases, RoPE factors): F32, one chunk.
absl::StatusOr<std::unique_ptr<DeviceWeight>> UploadF32(const std::shared_ptr<Device>& device,
                                                        const runtime::BoundWeight& w,
                                                        Buffer::Kind kind = Buffer::Kind::kDevice);

}  // namespace uaii::backends::vulkan
