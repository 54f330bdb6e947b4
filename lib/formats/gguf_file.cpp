#include "formats/gguf_file.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "util/str_cat.h"

namespace uaii::gguf {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as little-endian u32
constexpr uint64_t kDefaultAlignment = 32;
constexpr size_t kMaxDims = 4;           // GGML_MAX_DIMS
constexpr size_t kMaxTensorName = 63;    // GGML_MAX_NAME - 1, as llama.cpp enforces
constexpr int kMaxArrayDepth = 8;        // nested arrays deeper than this are hostile

// Smallest encoding of one value of each type, used to bound counts by the bytes left.
uint64_t MinEncodedSize(ValueType t) {
  switch (t) {
    case ValueType::UINT8: case ValueType::INT8: case ValueType::BOOL: return 1;
    case ValueType::UINT16: case ValueType::INT16: return 2;
    case ValueType::UINT32: case ValueType::INT32: case ValueType::FLOAT32: return 4;
    case ValueType::UINT64: case ValueType::INT64: case ValueType::FLOAT64: return 8;
    case ValueType::STRING: return 8;        // u64 length
    case ValueType::ARRAY: return 4 + 8;     // element type + count
  }
  return 1;
}

bool KnownValueType(uint32_t t) { return t <= static_cast<uint32_t>(ValueType::FLOAT64); }

}  // namespace

std::string_view ValueTypeName(ValueType t) {
  static constexpr std::string_view kNames[] = {"uint8", "int8", "uint16", "int16", "uint32",
                                                "int32", "float32", "bool", "string", "array",
                                                "uint64", "int64", "float64"};
  auto i = static_cast<uint32_t>(t);
  return i < std::size(kNames) ? kNames[i] : "unknown";
}

bool Value::is_integer() const {
  switch (type) {
    case ValueType::UINT8: case ValueType::INT8: case ValueType::UINT16: case ValueType::INT16:
    case ValueType::UINT32: case ValueType::INT32: case ValueType::UINT64: case ValueType::INT64:
      return true;
    default:
      return false;
  }
}

int64_t Value::as_int() const {
  switch (type) {
    case ValueType::INT8: case ValueType::INT16: case ValueType::INT32: case ValueType::INT64:
      return num.i;
    case ValueType::FLOAT32: case ValueType::FLOAT64:
      return static_cast<int64_t>(num.f);
    default:
      return static_cast<int64_t>(num.u);
  }
}

double Value::as_double() const {
  switch (type) {
    case ValueType::FLOAT32: case ValueType::FLOAT64: return num.f;
    case ValueType::INT8: case ValueType::INT16: case ValueType::INT32: case ValueType::INT64:
      return static_cast<double>(num.i);
    default:
      return static_cast<double>(num.u);
  }
}

// Reads the header sequentially; every read is bounds-checked against the mapping.
class Parser {
 public:
  Parser(const MappedFile& m) : base_(m.data()), size_(m.size()), path_(m.path()) {}

  absl::Status Run(File& f);

 private:
  uint64_t left() const { return size_ - pos_; }

  absl::Status Truncated(std::string_view what) const {
    return absl::InvalidArgumentError(
        StrCat(path_, ": truncated GGUF file: ", what, " at byte ", pos_, " runs past the end (",
                     size_, " bytes)"));
  }

  template <typename T>
  absl::Status Read(T& out, std::string_view what) {
    if (left() < sizeof(T)) return Truncated(what);
    std::memcpy(&out, base_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return absl::OkStatus();
  }

  absl::Status ReadString(std::string_view& out, std::string_view what) {
    uint64_t len = 0;
    if (auto s = Read(len, what); !s.ok()) return s;
    if (len > left())
      return absl::InvalidArgumentError(StrCat(path_, ": ", what, ": string length ", len,
                                                     " exceeds the ", left(), " bytes left in the file"));
    out = std::string_view(reinterpret_cast<const char*>(base_ + pos_), len);
    pos_ += len;
    return absl::OkStatus();
  }

  absl::Status ReadValue(ValueType type, Value& v, const std::string& key, int depth);
  absl::Status ReadKeyValues(File& f, uint64_t n_kv);
  absl::Status ReadTensorInfos(File& f, uint64_t n_tensors);
  absl::Status PlaceTensors(File& f);

  absl::Status Error(std::string_view msg) const {
    return absl::InvalidArgumentError(StrCat(path_, ": ", msg));
  }
  // A well-formed file using something uaii does not implement (a version, a type).
  absl::Status Unsupported(std::string_view msg) const {
    return absl::UnimplementedError(StrCat(path_, ": ", msg));
  }

  const uint8_t* base_;
  uint64_t size_;
  uint64_t pos_ = 0;
  const std::string& path_;
};

absl::Status Parser::ReadValue(ValueType type, Value& v, const std::string& key, int depth) {
  v.type = type;
  std::string what = StrCat("GGUF metadata ", key);
  switch (type) {
    case ValueType::UINT8: { uint8_t x{}; if (auto s = Read(x, what); !s.ok()) return s; v.num.u = x; break; }
    case ValueType::INT8: { int8_t x{}; if (auto s = Read(x, what); !s.ok()) return s; v.num.i = x; break; }
    case ValueType::UINT16: { uint16_t x{}; if (auto s = Read(x, what); !s.ok()) return s; v.num.u = x; break; }
    case ValueType::INT16: { int16_t x{}; if (auto s = Read(x, what); !s.ok()) return s; v.num.i = x; break; }
    case ValueType::UINT32: { uint32_t x{}; if (auto s = Read(x, what); !s.ok()) return s; v.num.u = x; break; }
    case ValueType::INT32: { int32_t x{}; if (auto s = Read(x, what); !s.ok()) return s; v.num.i = x; break; }
    case ValueType::UINT64: { uint64_t x{}; if (auto s = Read(x, what); !s.ok()) return s; v.num.u = x; break; }
    case ValueType::INT64: { int64_t x{}; if (auto s = Read(x, what); !s.ok()) return s; v.num.i = x; break; }
    case ValueType::FLOAT32: { float x{}; if (auto s = Read(x, what); !s.ok()) return s; v.num.f = x; break; }
    case ValueType::FLOAT64: { double x{}; if (auto s = Read(x, what); !s.ok()) return s; v.num.f = x; break; }
    case ValueType::BOOL: {
      uint8_t x{};
      if (auto s = Read(x, what); !s.ok()) return s;
      if (x > 1) return Error(StrCat(what, ": invalid bool byte ", x));
      v.num.u = x;
      break;
    }
    case ValueType::STRING:
      return ReadString(v.str, what);
    case ValueType::ARRAY: {
      if (depth >= kMaxArrayDepth)
        return Error(StrCat(what, ": arrays nested deeper than ", kMaxArrayDepth));
      uint32_t elem = 0;
      uint64_t count = 0;
      if (auto s = Read(elem, what); !s.ok()) return s;
      if (!KnownValueType(elem))
        return Error(StrCat(what, ": unknown array element type ", elem));
      if (auto s = Read(count, what); !s.ok()) return s;
      v.elem_type = static_cast<ValueType>(elem);
      // Bound the allocation by what the remaining bytes could possibly encode.
      if (count > left() / MinEncodedSize(v.elem_type))
        return Error(StrCat(what, ": array count ", count, " of ", ValueTypeName(v.elem_type),
                                  " exceeds what the ", left(), " bytes left can hold"));
      v.elems.resize(count);
      for (uint64_t i = 0; i < count; ++i)
        if (auto s = ReadValue(v.elem_type, v.elems[i], key, depth + 1); !s.ok()) return s;
      break;
    }
  }
  return absl::OkStatus();
}

absl::Status Parser::ReadKeyValues(File& f, uint64_t n_kv) {
  if (n_kv > left() / (8 + 4 + 1))
    return Error(StrCat("metadata count ", n_kv, " exceeds what the ", left(),
                        " bytes left can hold (truncated or corrupt file)"));
  f.kvs_.reserve(n_kv);
  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string_view key;
    if (auto s = ReadString(key, StrCat("metadata key #", i)); !s.ok()) return s;
    if (key.empty()) return Error(StrCat("metadata key #", i, " is empty"));
    uint32_t type = 0;
    if (auto s = Read(type, StrCat("GGUF metadata ", key)); !s.ok()) return s;
    if (!KnownValueType(type))
      return Error(StrCat("GGUF metadata ", key, ": unknown value type ", type));
    KeyValue kv;
    kv.key = std::string(key);
    if (auto s = ReadValue(static_cast<ValueType>(type), kv.value, kv.key, 0); !s.ok()) return s;
    if (!f.kv_index_.emplace(kv.key, f.kvs_.size()).second)
      return Error(StrCat("duplicate metadata key ", kv.key));
    f.kvs_.push_back(std::move(kv));
  }
  return absl::OkStatus();
}

absl::Status Parser::ReadTensorInfos(File& f, uint64_t n_tensors) {
  constexpr uint64_t kMinInfo = 8 + 4 + 8 + 4 + 8;  // name len, n_dims, one dim, type, offset
  if (n_tensors > left() / kMinInfo)
    return Error(StrCat("tensor count ", n_tensors, " exceeds what the ", left(),
                        " bytes left can hold (truncated or corrupt file)"));
  f.tensors_.reserve(n_tensors);
  for (uint64_t i = 0; i < n_tensors; ++i) {
    std::string_view name;
    if (auto s = ReadString(name, StrCat("tensor info #", i)); !s.ok()) return s;
    if (name.empty()) return Error(StrCat("tensor #", i, " has an empty name"));
    if (name.size() > kMaxTensorName)
      return Error(StrCat("tensor name '", name.substr(0, 80), "' is ", name.size(),
                                " bytes long; the limit is ", kMaxTensorName));
    TensorInfo t;
    t.name = std::string(name);
    std::string what = StrCat("tensor ", t.name);
    uint32_t n_dims = 0;
    if (auto s = Read(n_dims, what); !s.ok()) return s;
    if (n_dims == 0 || n_dims > kMaxDims)
      return Error(StrCat(what, ": ", n_dims, " dimensions (must be 1 to ", kMaxDims, ")"));
    t.dims.resize(n_dims);
    uint64_t n_elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      if (auto s = Read(t.dims[d], what); !s.ok()) return s;
      if (t.dims[d] == 0 || t.dims[d] > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return Error(StrCat(what, ": dimension ", d, " is ", t.dims[d]));
      if (n_elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / t.dims[d])
        return Error(StrCat(what, ": element count overflows (dimension ", d, " is ", t.dims[d], ")"));
      n_elements *= t.dims[d];
    }
    t.n_elements = n_elements;
    if (auto s = Read(t.type_id, what); !s.ok()) return s;
    t.traits = FindTensorType(t.type_id);
    if (t.traits == nullptr)
      return Unsupported(StrCat("unsupported tensor type ", TensorTypeName(t.type_id), " in ", t.name));
    if (t.dims[0] % t.traits->block_size != 0)
      return Error(StrCat(what, ": row length ", t.dims[0], " is not a multiple of ",
                                t.traits->name, "'s block size ", t.traits->block_size));
    auto row = RowBytes(*t.traits, t.dims[0]);
    if (!row || (n_elements / t.dims[0]) > std::numeric_limits<uint64_t>::max() / *row)
      return Error(StrCat(what, ": byte size overflows"));
    t.bytes = *row * (n_elements / t.dims[0]);
    if (auto s = Read(t.offset, what); !s.ok()) return s;  // relative until PlaceTensors
    if (!f.tensor_index_.emplace(t.name, f.tensors_.size()).second)
      return Error(StrCat("duplicate tensor name ", t.name));
    f.tensors_.push_back(std::move(t));
  }
  return absl::OkStatus();
}

absl::Status Parser::PlaceTensors(File& f) {
  // Data starts at the next multiple of the alignment after the header.
  uint64_t a = f.alignment_;
  uint64_t data = (pos_ + a - 1) / a * a;
  if (data > size_ && !f.tensors_.empty())
    return Error(StrCat("truncated GGUF file: tensor data would start at byte ", data,
                              " past the end (", size_, " bytes)"));
  f.data_offset_ = data;
  uint64_t data_bytes = size_ > data ? size_ - data : 0;
  std::vector<const TensorInfo*> by_offset;
  by_offset.reserve(f.tensors_.size());
  for (auto& t : f.tensors_) {
    if (t.offset % a != 0)
      return Error(StrCat("tensor ", t.name, ": data offset ", t.offset,
                                " is not a multiple of the alignment ", a));
    if (t.offset > data_bytes || t.bytes > data_bytes - t.offset)
      return Error(StrCat("tensor ", t.name, ": data [", t.offset, ", +", t.bytes,
                                ") runs past the end of the file (", data_bytes, " data bytes; truncated?)"));
    t.offset += data;
    t.data = base_ + t.offset;
    by_offset.push_back(&t);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const TensorInfo* x, const TensorInfo* y) { return x->offset < y->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const TensorInfo* prev = by_offset[i - 1];
    const TensorInfo* cur = by_offset[i];
    if (prev->offset + prev->bytes > cur->offset)
      return Error(StrCat("tensors ", prev->name, " and ", cur->name, " overlap (", prev->name,
                                " ends at byte ", prev->offset + prev->bytes, ", ", cur->name,
                                " starts at ", cur->offset, ")"));
  }
  return absl::OkStatus();
}

absl::Status Parser::Run(File& f) {
  uint32_t magic = 0;
  if (auto s = Read(magic, "magic"); !s.ok()) return s;
  if (magic != kMagic) {
    return Error(StrCat("not a GGUF file (bad magic 0x", Hex(magic, 8), ")"));
  }
  if (auto s = Read(f.version_, "version"); !s.ok()) return s;
  // A big-endian file shows its small version number in the high bytes.
  if ((f.version_ & 0xFFFF) == 0 && f.version_ != 0)
    return Unsupported(StrCat("GGUF file is big-endian (version field 0x", Hex(f.version_),
                              "); only little-endian files are supported"));
  if (f.version_ != 2 && f.version_ != 3)
    return Unsupported(StrCat("unsupported GGUF version ", f.version_, " (supported: 2, 3)"));
  uint64_t n_tensors = 0, n_kv = 0;
  if (auto s = Read(n_tensors, "tensor count"); !s.ok()) return s;
  if (auto s = Read(n_kv, "metadata count"); !s.ok()) return s;
  if (auto s = ReadKeyValues(f, n_kv); !s.ok()) return s;

  f.alignment_ = kDefaultAlignment;
  if (const Value* v = f.Find("general.alignment")) {
    if (v->type != ValueType::UINT32)
      return Error(StrCat("GGUF metadata general.alignment: expected uint32, got ",
                                ValueTypeName(v->type)));
    uint64_t a = v->num.u;
    if (a == 0 || (a & (a - 1)) != 0)
      return Error(StrCat("GGUF metadata general.alignment: ", a, " is not a power of two"));
    f.alignment_ = a;
  }
  if (auto s = ReadTensorInfos(f, n_tensors); !s.ok()) return s;
  return PlaceTensors(f);
}

absl::StatusOr<std::unique_ptr<File>> File::Open(const std::string& path) {
  auto mapping = MappedFile::Open(path);
  if (!mapping.ok()) return mapping.status();
  return Parse(*std::move(mapping));
}

absl::StatusOr<std::unique_ptr<File>> File::Parse(std::shared_ptr<const MappedFile> mapping) {
  std::unique_ptr<File> f(new File());
  f->mapping_ = std::move(mapping);
  Parser parser(*f->mapping_);
  if (auto s = parser.Run(*f); !s.ok()) return s;
  return f;
}

const Value* File::Find(std::string_view key) const {
  auto it = kv_index_.find(absl::string_view(key.data(), key.size()));
  return it == kv_index_.end() ? nullptr : &kvs_[it->second].value;
}

const TensorInfo* File::FindTensor(std::string_view name) const {
  auto it = tensor_index_.find(absl::string_view(name.data(), name.size()));
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

namespace {
absl::Status Missing(std::string_view key) {
  return absl::NotFoundError(StrCat("GGUF metadata ", key, ": missing"));
}
absl::Status WrongType(std::string_view key, std::string_view want, ValueType got) {
  return absl::InvalidArgumentError(
      StrCat("GGUF metadata ", key, ": expected ", want, ", got ", ValueTypeName(got)));
}
}  // namespace

absl::StatusOr<std::string_view> File::GetString(std::string_view key) const {
  const Value* v = Find(key);
  if (!v) return Missing(key);
  if (v->type != ValueType::STRING) return WrongType(key, "string", v->type);
  return v->str;
}

absl::StatusOr<int64_t> File::GetInt(std::string_view key) const {
  const Value* v = Find(key);
  if (!v) return Missing(key);
  if (!v->is_integer()) return WrongType(key, "an integer", v->type);
  if (v->type == ValueType::UINT64 && v->num.u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return absl::InvalidArgumentError(StrCat("GGUF metadata ", key, ": value ", v->num.u, " is too large"));
  return v->as_int();
}

absl::StatusOr<double> File::GetFloat(std::string_view key) const {
  const Value* v = Find(key);
  if (!v) return Missing(key);
  if (!v->is_float() && !v->is_integer()) return WrongType(key, "a number", v->type);
  return v->as_double();
}

absl::StatusOr<bool> File::GetBool(std::string_view key) const {
  const Value* v = Find(key);
  if (!v) return Missing(key);
  if (v->type != ValueType::BOOL) return WrongType(key, "bool", v->type);
  return v->num.u != 0;
}

absl::StatusOr<const Value*> File::GetArray(std::string_view key, ValueType elem) const {
  const Value* v = Find(key);
  if (!v) return Missing(key);
  if (v->type != ValueType::ARRAY) return WrongType(key, "array", v->type);
  if (v->elem_type != elem && !v->elems.empty())
    return absl::InvalidArgumentError(StrCat("GGUF metadata ", key, ": expected array of ",
                                                   ValueTypeName(elem), ", got array of ",
                                                   ValueTypeName(v->elem_type)));
  return v;
}

}  // namespace uaii::gguf
