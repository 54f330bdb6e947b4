// The safetensors format (https://github.com/huggingface/safetensors, "Format"):
//
//   [u64 little-endian N][N bytes of JSON header][data section]
//   header = {"__metadata__": {str: str}?, NAME: {"dtype": D, "shape": [..],
//             "data_offsets": [begin, end]}, ...}     offsets relative to the data section
//
// Everything is validated before a byte of weight is touched: header length against
// the file and against kMaxHeaderBytes, JSON syntax, known dtypes, shapes, offsets in
// range, end - begin == numel * dtype size, no overlaps, no duplicate names. Errors
// start with the origin (a path or URL) and name the cause and the tensor.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "formats/tensor_type.h"
#include "util/mapped_file.h"

namespace uaii::safetensors {

// The safetensors library refuses headers above 100 MB (MAX_HEADER_SIZE); so do we.
inline constexpr uint64_t kMaxHeaderBytes = 100'000'000;

enum class Dtype : uint8_t {
  BOOL, U8, I8, F8_E5M2, F8_E4M3, F8_E8M0, I16, U16, F16, BF16, I32, U32, F32, F64, I64, U64,
  F4, F6_E2M3, F6_E3M2,
};

struct DtypeInfo {
  Dtype dtype;
  std::string_view name;  // as written in headers ("BF16")
  int bits;               // per element; F4 / F6 are packed below a byte
};

// Traits of a dtype name, or nullptr for a name the format does not define.
const DtypeInfo* FindDtype(std::string_view name);
const DtypeInfo& GetDtypeInfo(Dtype d);
inline std::string_view DtypeName(Dtype d) { return GetDtypeInfo(d).name; }
// The uaii tensor type for dtypes the runtime consumes directly (F32, F16, BF16, I8);
// nullopt otherwise.
std::optional<TensorType> ToTensorType(Dtype d);
// True for the 8-bit-and-below float formats (F8_*, F6_*, F4): quantized checkpoints.
bool IsLowPrecisionFloat(Dtype d);

struct TensorInfo {
  std::string name;
  Dtype dtype = Dtype::F32;
  std::vector<int64_t> shape;  // as in the header: outermost first (a Linear weight is [out, in])
  uint64_t begin = 0;          // data_offsets, relative to the data section
  uint64_t end = 0;
  uint64_t bytes() const { return end - begin; }
  uint64_t numel() const;
};

struct Header {
  uint64_t header_bytes = 0;  // N
  uint64_t data_start = 0;    // 8 + N: file offset of the data section
  uint64_t data_bytes = 0;    // largest `end` over all tensors (the data the header claims)
  std::vector<TensorInfo> tensors;                            // header order
  std::vector<std::pair<std::string, std::string>> metadata;  // __metadata__, header order
  const TensorInfo* Find(std::string_view name) const;
};

// Reads N from the first 8 bytes. `file_bytes` (when known) bounds it: a header that
// runs past the end is "header length N beyond the file". Also enforces kMaxHeaderBytes.
absl::StatusOr<uint64_t> ParseHeaderLength(const uint8_t prefix[8], std::optional<uint64_t> file_bytes,
                                           std::string_view origin);

// Parses and validates the JSON header (`json` = the N header bytes). `data_section_bytes`
// is the size of the data section when the whole file is known (every tensor must end
// inside it); nullopt when only the header was fetched (dry runs over HTTP).
absl::StatusOr<Header> ParseHeader(std::string_view json, std::optional<uint64_t> data_section_bytes,
                                   std::string_view origin);

// A memory-mapped safetensors file with its validated header. Views stay valid as long
// as the File (or the shared MappedFile) lives.
class File {
 public:
  static absl::StatusOr<std::unique_ptr<File>> Open(const std::string& path);

  const std::string& path() const { return map_->path(); }
  const Header& header() const { return header_; }
  const std::shared_ptr<const MappedFile>& mapping() const { return map_; }
  uint64_t file_bytes() const { return map_->size(); }
  // Absolute file offset of a tensor's first byte.
  uint64_t FileOffset(const TensorInfo& t) const { return header_.data_start + t.begin; }
  const uint8_t* Data(const TensorInfo& t) const { return map_->data() + FileOffset(t); }

 private:
  File() = default;
  std::shared_ptr<const MappedFile> map_;
  Header header_;
};

// Converts `count` elements of `dtype` at `src` to f32 (F32, F16, BF16, I8, U8, I16, U16,
// I32, U32, F64, BOOL; I8/U8 are promoted exactly). Unimplemented for F8/F6/F4 and 64-bit ints.
absl::Status ConvertToF32(Dtype dtype, const uint8_t* src, uint64_t count, float* dst,
                          std::string_view tensor_name);

// A tensor of the file as f32 values, shape unchanged (how I8 / U8 weights reach kernels).
absl::StatusOr<std::vector<float>> MaterializeF32(const File& file, const TensorInfo& t);

}  // namespace uaii::safetensors
