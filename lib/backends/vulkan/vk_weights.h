// Weights on the device, uploaded once when a program is compiled. A product or
// lookup weight keeps its file's blocks, read packed by the kernels (shaders/quant.glsl):
// F32, F16, BF16, Q8_0 and Q4_0 repacked so that each block starts on a 32-bit word;
// Q4_1, Q5_0, Q5_1 and Q2_K - Q6_K as the file's bytes, each block padded to whole
// words. Any other type (IQ*, TQ*, MXFP4, ...) is requantized to Q8_0 at upload
// (dequantized, then quantized per 32 elements as the CPU quantizes activations: each
// element moves by at most half a Q8_0 step of its block), or kept as F32 where its
// rows are not whole Q8_0 blocks.
// Rows are split into chunks of at most the device's maxStorageBufferRange (and
// 1 GiB), each its own buffer; a kernel runs once per chunk.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/vulkan/vk_buffer.h"
#include "backends/vulkan/vk_kernels.h"
#include "formats/tensor_type.h"
#include "runtime/weights.h"

namespace uaii::backends::vulkan {

struct DeviceWeight {
  std::string layout;            // the kernels' suffix: "f32", "f16", "bf16", "q8_0", "q4_0", "q4_k", ...
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
  bool staged = false;  // kHost and copied to the program's staging buffer before each use
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
// The largest chunk UploadMatrix makes on `device` (max_chunk_bytes, 1 GiB, the
// device's buffer range).
uint64_t ChunkLimit(const DeviceInfo& device, uint64_t max_chunk_bytes);

// The buffer a kernel reads chunk `c` of `w` from: its own, unless `w` is staged and
// `stage` is given: then `stage`, after a copy of the chunk into it recorded in `rec`
// (the copy engine moves the bytes across the bus once, and a prefill's product reads
// them from device memory once per token row).
const Buffer& ChunkForKernel(const DeviceWeight& w, const DeviceWeight::Chunk& c, Recorder& rec, const Buffer* stage);

// An element-wise weight (norm weights, biases, RoPE factors): F32, one chunk.
absl::StatusOr<std::unique_ptr<DeviceWeight>> UploadF32(const std::shared_ptr<Device>& device,
                                                        const runtime::BoundWeight& w,
                                                        Buffer::Kind kind = Buffer::Kind::kDevice);

}  // namespace uaii::backends::vulkan
