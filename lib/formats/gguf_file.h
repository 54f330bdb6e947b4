// GGUF v2/v3 reader: memory-mapped, every count, length, offset and size validated
// against the file before use. Spec: ggml/docs/gguf.md.
//
// Layout: magic "GGUF" | u32 version | u64 n_tensors | u64 n_kv | kv pairs |
//         tensor infos | padding to general.alignment | tensor data.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "formats/tensor_type.h"
#include "util/mapped_file.h"

namespace uaii::gguf {

enum class ValueType : uint32_t {
  UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6,
  BOOL = 7, STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
};
std::string_view ValueTypeName(ValueType t);

// A metadata value. Strings are views into the mapping (valid while the File lives).
// Arrays hold their elements (arrays of arrays nest).
struct Value {
  ValueType type = ValueType::UINT8;
  union {
    uint64_t u;   // UINT8..UINT64, BOOL
    int64_t i;    // INT8..INT64
    double f;     // FLOAT32, FLOAT64
  } num{};
  std::string_view str;             // STRING
  ValueType elem_type = ValueType::UINT8;  // ARRAY: element type
  std::vector<Value> elems;         // ARRAY

  bool is_integer() const;
  bool is_float() const { return type == ValueType::FLOAT32 || type == ValueType::FLOAT64; }
  // Numeric value as int64 / double (integers, bools and floats).
  int64_t as_int() const;
  double as_double() const;
};

struct TensorInfo {
  std::string name;
  std::vector<uint64_t> dims;  // ggml order: dims[0] is the contiguous (row) length
  uint32_t type_id = 0;        // ggml type id (see TensorType)
  const TensorTypeTraits* traits = nullptr;  // null for an unknown id
  uint64_t offset = 0;         // absolute offset in the file
  uint64_t bytes = 0;          // size of the data
  uint64_t n_elements = 0;
  const uint8_t* data = nullptr;  // points into the mapping
};

struct KeyValue {
  std::string key;
  Value value;
};

class File {
 public:
  // Opens and fully validates a GGUF file. Errors name the key / tensor and value.
  static absl::StatusOr<std::unique_ptr<File>> Open(const std::string& path);
  // Parses an in-memory image (tests); `mapping` must outlive the File.
  static absl::StatusOr<std::unique_ptr<File>> Parse(std::shared_ptr<const MappedFile> mapping);

  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  const std::string& path() const { return mapping_->path(); }
  uint64_t file_size() const { return mapping_->size(); }
  const std::shared_ptr<const MappedFile>& mapping() const { return mapping_; }

  const std::vector<KeyValue>& metadata() const { return kvs_; }  // file order
  const Value* Find(std::string_view key) const;
  const std::vector<TensorInfo>& tensors() const { return tensors_; }  // file order
  const TensorInfo* FindTensor(std::string_view name) const;

  // Typed accessors: NotFound "GGUF metadata KEY: missing" or InvalidArgument naming
  // the key, the expected and the actual type.
  absl::StatusOr<std::string_view> GetString(std::string_view key) const;
  absl::StatusOr<int64_t> GetInt(std::string_view key) const;       // any integer type
  absl::StatusOr<double> GetFloat(std::string_view key) const;      // float or integer
  absl::StatusOr<bool> GetBool(std::string_view key) const;
  absl::StatusOr<const Value*> GetArray(std::string_view key, ValueType elem) const;

 private:
  File() = default;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::shared_ptr<const MappedFile> mapping_;
  std::vector<KeyValue> kvs_;
  absl::flat_hash_map<std::string, size_t> kv_index_;
  std::vector<TensorInfo> tensors_;
  absl::flat_hash_map<std::string, size_t> tensor_index_;
  friend class Parser;
};

}  // namespace uaii::gguf
