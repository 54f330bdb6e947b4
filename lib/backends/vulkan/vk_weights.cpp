#include "backends/vulkan/vk_weights.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/ascii.h"
#include "formats/fp16.h"
#include "formats/quant_blocks.h"
#include "kernels/matmul.h"
#include "kernels/quantize_act.h"
#include "util/str_cat.h"

namespace uaii::backends::vulkan {
namespace {

constexpr uint64_t kMaxChunk = uint64_t{1} << 30;

const TensorTypeTraits& Traits(TensorType type) { return *FindTensorType(static_cast<uint32_t>(type)); }

// A layout named after its type ("q4_k"): the kernels' suffix.
std::string LayoutName(TensorType type) {
  return absl::AsciiStrToLower(std::string(TensorTypeName(static_cast<uint32_t>(type))));
}

// The types whose kernels read the file's block bytes (quant.glsl's WTYPE_BYTES):
// words a block takes padded to a word; 0 for the others.
int64_t PaddedBlockWords(TensorType type) {
  switch (type) {
    case TensorType::Q4_1: case TensorType::Q5_0: case TensorType::Q5_1: case TensorType::Q2_K:
    case TensorType::Q3_K: case TensorType::Q4_K: case TensorType::Q5_K: case TensorType::Q6_K:
      return (Traits(type).type_size + 3) / 4;
    default: return 0;
  }
}

// One row of the file's bytes in the device layout (`words` long).
void RepackRow(const std::string& layout, TensorType type, const uint8_t* src, int64_t cols, uint32_t* dst,
               std::vector<float>* scratch) {
  if (layout == "f32" && type == TensorType::F32) {
    std::memcpy(dst, src, cols * 4);
  } else if ((layout == "f16" && type == TensorType::F16) || (layout == "bf16" && type == TensorType::BF16)) {
    std::memcpy(dst, src, cols * 2);
  } else if (layout == "q4_0" && type == TensorType::Q4_0) {
    const auto* b = reinterpret_cast<const quant::BlockQ4_0*>(src);
    for (int64_t i = 0; i < cols / quant::kQK; ++i) {
      dst[i * 5] = b[i].d;
      std::memcpy(dst + i * 5 + 1, b[i].qs, 16);
    }
  } else if (const int64_t words = PaddedBlockWords(type); words > 0 && layout == LayoutName(type)) {
    // The file's blocks as they are, each padded to whole words.
    const int64_t block_bytes = Traits(type).type_size;
    const int64_t n = cols / Traits(type).block_size;
    for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * words, src + i * block_bytes, block_bytes);
  } else {
    // Q8_0, from the file's own blocks or requantized from its dequantized row.
    const quant::BlockQ8_0* b = reinterpret_cast<const quant::BlockQ8_0*>(src);
    std::vector<quant::BlockQ8_0> requant;
    if (type != TensorType::Q8_0) {
      scratch->resize(static_cast<size_t>(cols));
      (void)DequantizeRow(type, src, cols, scratch->data());  // the type was checked readable
      if (layout == "f32") {
        std::memcpy(dst, scratch->data(), cols * 4);
        return;
      }
      requant.resize(static_cast<size_t>(cols / quant::kQK));
      kernels::QuantizeRowQ8_0(scratch->data(), requant.data(), cols);
      b = requant.data();
    }
    for (int64_t i = 0; i < cols / quant::kQK; ++i) {
      dst[i * 9] = b[i].d;
      std::memcpy(dst + i * 9 + 1, b[i].qs, 32);
    }
  }
}

absl::Status UploadRows(const std::shared_ptr<Device>& device, const runtime::BoundWeight& w, DeviceWeight* d,
                        uint64_t max_chunk_bytes) {
  const uint64_t row_bytes = d->row_words * 4;
  const uint64_t chunk_limit = ChunkLimit(device->info(), max_chunk_bytes);
  const int64_t per_chunk = static_cast<int64_t>(std::max<uint64_t>(1, chunk_limit / std::max<uint64_t>(row_bytes, 1)));
  if (row_bytes > chunk_limit)
    return absl::ResourceExhaustedError(StrCat("a row of ", row_bytes, " bytes exceeds the device's buffer range of ",
                                               chunk_limit));
  std::vector<uint32_t> host;
  std::vector<float> scratch;
  for (int64_t r0 = 0; r0 < d->rows; r0 += per_chunk) {
    const int64_t n = std::min(per_chunk, d->rows - r0);
    host.assign(static_cast<size_t>(n) * d->row_words, 0);
    for (int64_t r = 0; r < n; ++r)
      RepackRow(d->layout, w.type, w.data + (r0 + r) * w.row_bytes, d->cols, host.data() + r * d->row_words, &scratch);
    auto buf = Buffer::Create(device, host.size() * 4, d->kind);
    if (!buf.ok()) return buf.status();
    if (auto st = (*buf)->Write(host.data(), host.size() * 4); !st.ok()) return st;
    d->chunks.push_back({*std::move(buf), r0, n});
  }
  return absl::OkStatus();
}

}  // namespace

uint64_t ChunkLimit(const DeviceInfo& device, uint64_t max_chunk_bytes) {
  return std::min<uint64_t>({max_chunk_bytes, kMaxChunk, device.max_storage_buffer_range});
}

const Buffer& ChunkForKernel(const DeviceWeight& w, const DeviceWeight::Chunk& c, Recorder& rec, const Buffer* stage) {
  if (!w.staged || stage == nullptr) return *c.buffer;
  rec.Copy(*c.buffer, 0, *stage, 0, c.buffer->bytes());
  return *stage;
}

bool HasMatrixKernel(TensorType type) {
  return type == TensorType::F32 || type == TensorType::F16 || type == TensorType::BF16 ||
         type == TensorType::Q8_0 || type == TensorType::Q4_0 || PaddedBlockWords(type) > 0;
}

// The device layout of a matrix weight: its type's kernels, else Q8_0 (or F32).
absl::Status ChooseLayout(const runtime::BoundWeight& w, DeviceWeight* d) {
  if (w.shape.empty()) return absl::InvalidArgumentError("a matrix weight without a shape");
  d->source = w.type;
  d->cols = w.shape.back();
  d->rows = 1;
  for (size_t i = 0; i + 1 < w.shape.size(); ++i) d->rows *= w.shape[i];
  switch (w.type) {
    case TensorType::F32: d->layout = "f32"; break;
    case TensorType::F16: d->layout = "f16"; break;
    case TensorType::Q8_0: d->layout = "q8_0"; break;
    case TensorType::Q4_0: d->layout = "q4_0"; break;
    case TensorType::BF16: d->layout = "bf16"; break;
    default: {
      if (PaddedBlockWords(w.type) > 0 && d->cols % Traits(w.type).block_size == 0) {
        d->layout = LayoutName(w.type);
        break;
      }
      std::vector<float> probe(static_cast<size_t>(d->cols));
      if (w.data != nullptr)  // a type the CPU cannot read either fails here
        if (auto st = DequantizeRow(w.type, w.data, d->cols, probe.data()); !st.ok()) return st;
      d->requantized = true;
      d->layout = d->cols % quant::kQK == 0 ? "q8_0" : "f32";
    }
  }
  if (d->layout == "f32") d->row_words = static_cast<uint64_t>(d->cols);
  if (d->layout == "f16" || d->layout == "bf16") d->row_words = static_cast<uint64_t>(d->cols + 1) / 2;
  if (const int64_t words = PaddedBlockWords(w.type); words > 0 && !d->requantized)
    d->row_words = static_cast<uint64_t>(d->cols / Traits(w.type).block_size * words);
  if (d->layout == "q8_0") d->row_words = static_cast<uint64_t>(d->cols / quant::kQK) * 9;
  if (d->layout == "q4_0") d->row_words = static_cast<uint64_t>(d->cols / quant::kQK) * 5;
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> MatrixDeviceBytes(const runtime::BoundWeight& w) {
  DeviceWeight d;
  if (auto st = ChooseLayout(w, &d); !st.ok()) return st;
  return d.bytes();
}

absl::StatusOr<std::unique_ptr<DeviceWeight>> UploadMatrix(const std::shared_ptr<Device>& device,
                                                           const runtime::BoundWeight& w, uint64_t max_chunk_bytes,
                                                           Buffer::Kind kind) {
  if (w.data == nullptr) return absl::FailedPreconditionError("the weight's bytes are not resident");
  auto d = std::make_unique<DeviceWeight>();
  if (auto st = ChooseLayout(w, d.get()); !st.ok()) return st;
  d->kind = kind;
  if (auto st = UploadRows(device, w, d.get(), max_chunk_bytes); !st.ok()) return st;
  return d;
}

absl::StatusOr<std::unique_ptr<DeviceWeight>> UploadF32(const std::shared_ptr<Device>& device,
                                                        const runtime::BoundWeight& w, Buffer::Kind kind) {
  if (w.type != TensorType::F32) return absl::UnimplementedError("an element-wise weight must be F32");
  if (w.data == nullptr) return absl::FailedPreconditionError("the weight's bytes are not resident");
  auto d = std::make_unique<DeviceWeight>();
  d->layout = "f32";
  d->rows = 1;
  d->cols = static_cast<int64_t>(w.bytes / 4);
  d->row_words = static_cast<uint64_t>(d->cols);
  d->kind = kind;
  auto buf = Buffer::Create(device, w.bytes, kind);
  if (!buf.ok()) return buf.status();
  if (auto st = (*buf)->Write(w.data, w.bytes); !st.ok()) return st;
  d->chunks.push_back({*std::move(buf), 0, 1});
  return d;
}

}  // namespace uaii::backends::vulkan
