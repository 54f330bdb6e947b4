#include "loaders/safetensors_file.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "formats/fp16.h"
#include "simdjson.h"
#include "util/str_cat.h"

namespace uaii::safetensors {
namespace {

constexpr DtypeInfo kDtypes[] = {
    {Dtype::BOOL, "BOOL", 8},       {Dtype::U8, "U8", 8},           {Dtype::I8, "I8", 8},
    {Dtype::F8_E5M2, "F8_E5M2", 8}, {Dtype::F8_E4M3, "F8_E4M3", 8}, {Dtype::F8_E8M0, "F8_E8M0", 8},
    {Dtype::I16, "I16", 16},        {Dtype::U16, "U16", 16},        {Dtype::F16, "F16", 16},
    {Dtype::BF16, "BF16", 16},      {Dtype::I32, "I32", 32},        {Dtype::U32, "U32", 32},
    {Dtype::F32, "F32", 32},        {Dtype::F64, "F64", 64},        {Dtype::I64, "I64", 64},
    {Dtype::U64, "U64", 64},        {Dtype::F4, "F4", 4},           {Dtype::F6_E2M3, "F6_E2M3", 6},
    {Dtype::F6_E3M2, "F6_E3M2", 6},
};
static_assert(std::size(kDtypes) == static_cast<size_t>(Dtype::F6_E3M2) + 1);

absl::Status Bad(std::string_view origin, std::string_view what) {
  return absl::InvalidArgumentError(StrCat("safetensors ", origin, ": ", what));
}

std::string_view ElementTypeName(simdjson::dom::element_type t) {
  using T = simdjson::dom::element_type;
  switch (t) {
    case T::ARRAY: return "an array";
    case T::OBJECT: return "an object";
    case T::STRING: return "a string";
    case T::INT64: case T::UINT64: return "an integer";
    case T::DOUBLE: return "a number";
    case T::BOOL: return "a boolean";
    default: return "null";
  }
}

// Parses one tensor entry; `bytes_for` is numel * bits / 8, checked for overflow.
absl::Status ParseEntry(std::string_view origin, const std::string& name, simdjson::dom::element e,
                        TensorInfo& out) {
  out.name = name;
  simdjson::dom::object obj;
  if (e.get_object().get(obj))
    return Bad(origin, StrCat("tensor ", name, ": entry is ", ElementTypeName(e.type()), ", expected an object"));
  bool have_dtype = false, have_shape = false, have_offsets = false;
  for (auto field : obj) {
    std::string_view key(field.key.data(), field.key.size());
    if (key == "dtype") {
      std::string_view d;
      if (field.value.get_string().get(d))
        return Bad(origin, StrCat("tensor ", name, ": dtype is not a string"));
      const DtypeInfo* info = FindDtype(d);
      if (info == nullptr) return Bad(origin, StrCat("tensor ", name, ": unknown dtype \"", d, "\""));
      out.dtype = info->dtype;
      have_dtype = true;
    } else if (key == "shape") {
      simdjson::dom::array arr;
      if (field.value.get_array().get(arr))
        return Bad(origin, StrCat("tensor ", name, ": shape is not an array"));
      out.shape.clear();
      for (auto d : arr) {
        uint64_t v;
        if (d.get_uint64().get(v) || v > (uint64_t{1} << 62))
          return Bad(origin, StrCat("tensor ", name, ": invalid shape entry (", simdjson::to_string(d), ")"));
        out.shape.push_back(static_cast<int64_t>(v));
      }
      if (out.shape.size() > 8) return Bad(origin, StrCat("tensor ", name, ": ", out.shape.size(), " dimensions (max 8)"));
      have_shape = true;
    } else if (key == "data_offsets") {
      simdjson::dom::array arr;
      if (field.value.get_array().get(arr) || arr.size() != 2)
        return Bad(origin, StrCat("tensor ", name, ": data_offsets must be [begin, end]"));
      uint64_t b, en;
      if (arr.at(0).get_uint64().get(b) || arr.at(1).get_uint64().get(en))
        return Bad(origin, StrCat("tensor ", name, ": data_offsets must be non-negative integers"));
      if (en < b) return Bad(origin, StrCat("tensor ", name, ": data_offsets end ", en, " before begin ", b));
      out.begin = b;
      out.end = en;
      have_offsets = true;
    } else {
      return Bad(origin, StrCat("tensor ", name, ": unexpected field \"", key, "\""));
    }
  }
  if (!have_dtype) return Bad(origin, StrCat("tensor ", name, ": missing dtype"));
  if (!have_shape) return Bad(origin, StrCat("tensor ", name, ": missing shape"));
  if (!have_offsets) return Bad(origin, StrCat("tensor ", name, ": missing data_offsets"));
  // numel * bits must not overflow and must be whole bytes.
  unsigned __int128 bits = GetDtypeInfo(out.dtype).bits;
  for (int64_t d : out.shape) {
    bits *= static_cast<uint64_t>(d);
    if (bits > (static_cast<unsigned __int128>(1) << 66))
      return Bad(origin, StrCat("tensor ", name, ": shape too large"));
  }
  if (bits % 8 != 0)
    return Bad(origin, StrCat("tensor ", name, ": ", DtypeName(out.dtype), " shape does not fill whole bytes"));
  const uint64_t want = static_cast<uint64_t>(bits / 8);
  if (out.end - out.begin != want) {
    std::string shape;
    for (size_t i = 0; i < out.shape.size(); ++i) shape += StrCat(i ? "," : "", out.shape[i]);
    return Bad(origin, StrCat("tensor ", name, ": size mismatch: dtype ", DtypeName(out.dtype), " shape [", shape,
                              "] needs ", want, " bytes but data_offsets [", out.begin, ", ", out.end, ") hold ",
                              out.end - out.begin));
  }
  return absl::OkStatus();
}

}  // namespace

const DtypeInfo* FindDtype(std::string_view name) {
  for (const auto& d : kDtypes)
    if (d.name == name) return &d;
  return nullptr;
}

const DtypeInfo& GetDtypeInfo(Dtype d) { return kDtypes[static_cast<size_t>(d)]; }

std::optional<TensorType> ToTensorType(Dtype d) {
  switch (d) {
    case Dtype::F32: return TensorType::F32;
    case Dtype::F16: return TensorType::F16;
    case Dtype::BF16: return TensorType::BF16;
    case Dtype::I8: return TensorType::I8;
    default: return std::nullopt;
  }
}

bool IsLowPrecisionFloat(Dtype d) {
  switch (d) {
    case Dtype::F8_E5M2: case Dtype::F8_E4M3: case Dtype::F8_E8M0:
    case Dtype::F4: case Dtype::F6_E2M3: case Dtype::F6_E3M2:
      return true;
    default: return false;
  }
}

uint64_t TensorInfo::numel() const {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

const TensorInfo* Header::Find(std::string_view name) const {
  for (const auto& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

absl::StatusOr<uint64_t> ParseHeaderLength(const uint8_t prefix[8], std::optional<uint64_t> file_bytes,
                                           std::string_view origin) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | prefix[i];
  if (n > kMaxHeaderBytes)
    return Bad(origin, StrCat("header too large: ", n, " bytes (limit ", kMaxHeaderBytes, ")"));
  if (n < 2) return Bad(origin, StrCat("header length ", n, " is too small for a JSON object"));
  if (file_bytes && *file_bytes < 8)
    return Bad(origin, StrCat("truncated: ", *file_bytes, " bytes, shorter than the 8-byte header length"));
  if (file_bytes && n > *file_bytes - 8)
    return Bad(origin, StrCat("header length ", n, " beyond the file (", *file_bytes, " bytes)"));
  return n;
}

absl::StatusOr<Header> ParseHeader(std::string_view json, std::optional<uint64_t> data_section_bytes,
                                   std::string_view origin) {
  Header h;
  h.header_bytes = json.size();
  h.data_start = 8 + json.size();
  // The header may be padded with trailing spaces; it must start with '{'.
  if (json.empty() || json[0] != '{') return Bad(origin, "invalid JSON header: does not start with '{'");
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (auto err = parser.parse(json.data(), json.size(), true).get(root))
    return Bad(origin, StrCat("invalid JSON header: ", simdjson::error_message(err)));
  simdjson::dom::object obj;
  if (root.get_object().get(obj)) return Bad(origin, "invalid JSON header: not an object");
  std::set<std::string> seen;
  for (auto field : obj) {
    std::string key(field.key.data(), field.key.size());
    if (!seen.insert(key).second) return Bad(origin, StrCat("duplicate tensor name \"", key, "\""));
    if (key == "__metadata__") {
      simdjson::dom::object meta;
      if (field.value.get_object().get(meta)) return Bad(origin, "__metadata__ is not an object");
      for (auto m : meta) {
        std::string_view v;
        if (m.value.get_string().get(v))
          return Bad(origin, StrCat("__metadata__ value for \"", std::string_view(m.key.data(), m.key.size()),
                                    "\" is not a string"));
        h.metadata.emplace_back(std::string(m.key.data(), m.key.size()), std::string(v));
      }
      continue;
    }
    TensorInfo t;
    if (auto st = ParseEntry(origin, key, field.value, t); !st.ok()) return st;
    h.tensors.push_back(std::move(t));
  }
  // Offsets: inside the data section, and no two non-empty tensors share a byte.
  std::vector<const TensorInfo*> order;
  for (const auto& t : h.tensors) {
    h.data_bytes = std::max(h.data_bytes, t.end);
    if (data_section_bytes && t.end > *data_section_bytes)
      return Bad(origin, StrCat("tensor ", t.name, ": data_offsets [", t.begin, ", ", t.end,
                                ") out of range (data section holds ", *data_section_bytes, " bytes)"));
    if (t.end > t.begin) order.push_back(&t);
  }
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->begin < b->begin; });
  for (size_t i = 1; i < order.size(); ++i)
    if (order[i]->begin < order[i - 1]->end)
      return Bad(origin, StrCat("overlapping tensors ", order[i - 1]->name, " [", order[i - 1]->begin, ", ",
                                order[i - 1]->end, ") and ", order[i]->name, " [", order[i]->begin, ", ",
                                order[i]->end, ")"));
  return h;
}

absl::StatusOr<std::unique_ptr<File>> File::Open(const std::string& path) {
  auto map = MappedFile::Open(path);
  if (!map.ok()) return map.status();
  std::unique_ptr<File> f(new File());
  f->map_ = *std::move(map);
  const uint64_t size = f->map_->size();
  if (size < 8) return Bad(path, StrCat("truncated: ", size, " bytes, shorter than the 8-byte header length"));
  auto n = ParseHeaderLength(f->map_->data(), size, path);
  if (!n.ok()) return n.status();
  std::string_view json(reinterpret_cast<const char*>(f->map_->data()) + 8, *n);
  auto h = ParseHeader(json, size - 8 - *n, path);
  if (!h.ok()) return h.status();
  f->header_ = *std::move(h);
  return f;
}

absl::Status ConvertToF32(Dtype dtype, const uint8_t* src, uint64_t count, float* dst,
                          std::string_view tensor_name) {
  // Unaligned-safe loads: data_offsets carry no alignment promise.
  auto load = [src](uint64_t i, auto tag) {
    decltype(tag) v;
    std::memcpy(&v, src + i * sizeof v, sizeof v);
    return v;
  };
  if (count == 0) return absl::OkStatus();  // empty tensors: dst may be null
  switch (dtype) {
    case Dtype::F32: std::memcpy(dst, src, count * 4); break;
    case Dtype::F16: for (uint64_t i = 0; i < count; ++i) dst[i] = Fp16ToFp32(load(i, uint16_t{})); break;
    case Dtype::BF16: for (uint64_t i = 0; i < count; ++i) dst[i] = Bf16ToFp32(load(i, uint16_t{})); break;
    case Dtype::F64: for (uint64_t i = 0; i < count; ++i) dst[i] = static_cast<float>(load(i, double{})); break;
    case Dtype::I8: for (uint64_t i = 0; i < count; ++i) dst[i] = static_cast<int8_t>(src[i]); break;
    case Dtype::U8: case Dtype::BOOL: for (uint64_t i = 0; i < count; ++i) dst[i] = src[i]; break;
    case Dtype::I16: for (uint64_t i = 0; i < count; ++i) dst[i] = load(i, int16_t{}); break;
    case Dtype::U16: for (uint64_t i = 0; i < count; ++i) dst[i] = load(i, uint16_t{}); break;
    case Dtype::I32: for (uint64_t i = 0; i < count; ++i) dst[i] = static_cast<float>(load(i, int32_t{})); break;
    case Dtype::U32: for (uint64_t i = 0; i < count; ++i) dst[i] = static_cast<float>(load(i, uint32_t{})); break;
    default:
      return absl::UnimplementedError(
          StrCat("tensor ", tensor_name, ": cannot convert dtype ", DtypeName(dtype), " to f32"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<float>> MaterializeF32(const File& file, const TensorInfo& t) {
  std::vector<float> out(t.numel());
  if (auto st = ConvertToF32(t.dtype, file.Data(t), out.size(), out.data(), t.name); !st.ok()) return st;
  return out;
}

}  // namespace uaii::safetensors
