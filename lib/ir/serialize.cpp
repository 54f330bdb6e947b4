#include "ir/serialize.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "flatbuffers/idl.h"
#include "uaii_ir_generated.h"

namespace uaii::ir {
namespace {

namespace fb = ::uaii::ir::fb;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

Offset<flatbuffers::Vector<Offset<flatbuffers::String>>> Strings(FlatBufferBuilder& b,
                                                                 const std::vector<std::string>& v) {
  return b.CreateVectorOfStrings(v);
}

Offset<fb::Attr> PackAttr(FlatBufferBuilder& b, const std::string& name, const AttrValue& v) {
  auto n = b.CreateString(name);
  if (auto* x = std::get_if<int64_t>(&v)) return fb::CreateAttr(b, n, fb::AttrKind_Int, *x);
  if (auto* x = std::get_if<double>(&v)) return fb::CreateAttr(b, n, fb::AttrKind_Float, 0, *x);
  if (auto* x = std::get_if<std::string>(&v))
    return fb::CreateAttr(b, n, fb::AttrKind_String, 0, 0, b.CreateString(*x));
  const auto& ints = std::get<std::vector<int64_t>>(v);
  return fb::CreateAttr(b, n, fb::AttrKind_Ints, 0, 0, 0, b.CreateVector(ints));
}

Offset<fb::TensorRef> PackRef(FlatBufferBuilder& b, const TensorRef& r) {
  Offset<fb::TensorView> view = 0;
  if (const TensorView* v = r.view ? &*r.view : nullptr) {
    std::vector<Offset<fb::TensorRef>> parts;
    for (const auto& p : v->parts) parts.push_back(PackRef(b, p));
    view = fb::CreateTensorView(b, v->source_dtype.empty() ? 0 : b.CreateString(v->source_dtype),
                                v->source_shape.empty() ? 0 : b.CreateVector(v->source_shape), v->row_begin,
                                v->row_count, v->transpose, v->widen_f32, v->add_one,
                                parts.empty() ? 0 : b.CreateVector(parts),
                                v->values.empty() ? 0 : b.CreateVector(v->values));
  }
  return fb::CreateTensorRef(b, b.CreateString(r.file), b.CreateString(r.tensor), r.offset, r.bytes, view);
}

std::string Str(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

// A vector of 8-byte integers, read with memcpy: the FlatBuffers 2.0 verifier checks only
// the 4-byte alignment of a vector's length, so a crafted file can put the elements at an
// address that is not 8-aligned, and loading them as int64_t is undefined (fuzz_ir_graph).
std::vector<int64_t> Int64s(const flatbuffers::Vector<int64_t>* v) {
  std::vector<int64_t> out(v ? v->size() : 0);
  if (!out.empty()) std::memcpy(out.data(), v->Data(), out.size() * sizeof(int64_t));
  for (int64_t& x : out) x = flatbuffers::EndianScalar(x);
  return out;
}

TensorRef UnpackRef(const fb::TensorRef& w) {
  TensorRef r{Str(w.file()), Str(w.tensor()), w.offset(), w.bytes(), std::nullopt};
  if (const fb::TensorView* v = w.view()) {
    TensorView& x = r.view.emplace();
    x.source_dtype = Str(v->source_dtype());
    x.source_shape = Int64s(v->source_shape());
    x.row_begin = v->row_begin();
    x.row_count = v->row_count();
    x.transpose = v->transpose();
    x.widen_f32 = v->widen_f32();
    x.add_one = v->add_one();
    if (v->parts())
      for (const auto* p : *v->parts()) x.parts.push_back(UnpackRef(*p));
    if (v->values()) x.values.assign(v->values()->begin(), v->values()->end());
  }
  return r;
}

std::vector<std::string> StrVec(const flatbuffers::Vector<Offset<flatbuffers::String>>* v) {
  std::vector<std::string> out;
  if (v)
    for (const auto* s : *v) out.push_back(Str(s));
  return out;
}

absl::StatusOr<Graph> Unpack(const fb::Model* m) {
  const fb::Graph* fg = m->graph();
  if (m->format_version() != kFormatVersion)
    return absl::UnimplementedError(absl::StrCat("uaii IR: unsupported format_version ", m->format_version(),
                                                 " (this build reads ", kFormatVersion, ")"));
  Graph g;
  g.name = Str(fg->name());
  if (fg->tensors())
    for (const auto* t : *fg->tensors()) {
      Tensor x;
      x.name = Str(t->name());
      x.dtype = static_cast<TensorType>(t->dtype());
      x.shape = Int64s(t->shape());
      if (const auto* w = t->weight()) x.weight = UnpackRef(*w);
      g.tensors.push_back(std::move(x));
    }
  if (fg->ops())
    for (const auto* o : *fg->ops()) {
      Op op;
      op.name = Str(o->name());
      op.type = Str(o->type());
      op.inputs = StrVec(o->inputs());
      op.outputs = StrVec(o->outputs());
      if (o->attrs())
        for (const auto* a : *o->attrs()) {
          AttrValue v;
          switch (a->kind()) {
            case fb::AttrKind_Int: v = a->i(); break;
            case fb::AttrKind_Float: v = a->f(); break;
            case fb::AttrKind_String: v = Str(a->s()); break;
            case fb::AttrKind_Ints:
              v = Int64s(a->ints());
              break;
            default:
              return absl::InvalidArgumentError(absl::StrCat("bad attribute: op '", op.name, "' attribute '",
                                                             Str(a->name()), "' has unknown kind ",
                                                             static_cast<int>(a->kind())));
          }
          op.attrs[Str(a->name())] = std::move(v);
        }
      g.ops.push_back(std::move(op));
    }
  g.inputs = StrVec(fg->inputs());
  g.outputs = StrVec(fg->outputs());
  if (fg->metadata())
    for (const auto* kv : *fg->metadata()) g.metadata.emplace_back(Str(kv->key()), Str(kv->value()));
  return g;
}

std::string Pack(const Graph& g) {
  FlatBufferBuilder b(1 << 16);
  std::vector<Offset<fb::Tensor>> tensors;
  for (const auto& t : g.tensors) {
    Offset<fb::TensorRef> w = t.weight ? PackRef(b, *t.weight) : 0;
    tensors.push_back(fb::CreateTensor(b, b.CreateString(t.name), static_cast<fb::DType>(t.dtype),
                                       b.CreateVector(t.shape), w));
  }
  std::vector<Offset<fb::Op>> ops;
  for (const auto& op : g.ops) {
    std::vector<Offset<fb::Attr>> attrs;
    for (const auto& [k, v] : op.attrs) attrs.push_back(PackAttr(b, k, v));
    ops.push_back(fb::CreateOp(b, b.CreateString(op.name), b.CreateString(op.type), Strings(b, op.inputs),
                               Strings(b, op.outputs), b.CreateVector(attrs)));
  }
  std::vector<Offset<fb::KeyValue>> meta;
  for (const auto& [k, v] : g.metadata) meta.push_back(fb::CreateKeyValue(b, b.CreateString(k), b.CreateString(v)));
  auto graph = fb::CreateGraph(b, b.CreateString(g.name), b.CreateVector(tensors), b.CreateVector(ops),
                               Strings(b, g.inputs), Strings(b, g.outputs), b.CreateVector(meta));
  b.Finish(fb::CreateModel(b, kFormatVersion, graph), fb::ModelIdentifier());
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

// A parser that knows the schema (compiled in).
absl::StatusOr<std::unique_ptr<flatbuffers::Parser>> SchemaParser() {
  flatbuffers::IDLOptions opts;
  opts.strict_json = true;
  opts.output_default_scalars_in_json = false;
  auto p = std::make_unique<flatbuffers::Parser>(opts);
  std::string schema(SchemaText());
  if (!p->Parse(schema.c_str()))
    return absl::InternalError(absl::StrCat("uaii IR schema does not parse: ", p->error_));
  return p;
}

}  // namespace

absl::StatusOr<std::string> ToBinary(const Graph& g) { return Pack(g); }

absl::StatusOr<Graph> FromBinary(std::string_view bytes) {
  // The Verifier checks alignment; a misaligned slice is copied to the heap (16-aligned).
  std::string aligned;
  if (reinterpret_cast<uintptr_t>(bytes.data()) % 8 != 0) {
    aligned.assign(bytes);
    bytes = aligned;
  }
  auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  if (bytes.size() < 8 || !fb::ModelBufferHasIdentifier(data))
    return absl::InvalidArgumentError("uaii IR: not a .uaii buffer (missing UAIR identifier)");
  flatbuffers::Verifier v(data, bytes.size());
  if (!fb::VerifyModelBuffer(v)) return absl::InvalidArgumentError("uaii IR: buffer fails FlatBuffers verification");
  return Unpack(fb::GetModel(data));
}

// FlatBuffers prints doubles in fixed notation with 12 decimals, which loses small
// values (1e-20 prints as 0). Attr.f is the only double in the schema: each printed
// `"f": NUMBER` is replaced, in order, by the shortest text that reads back to the
// same double (std::to_chars), so JSON round trips are exact.
static std::string ExactFloats(const Graph& g, std::string json) {
  std::vector<double> fs;
  for (const auto& op : g.ops)
    for (const auto& [k, v] : op.attrs)  // Pack's order (std::map)
      if (auto* d = std::get_if<double>(&v); d && *d != 0) fs.push_back(*d);
  const std::string key = "\"f\": ";
  std::string out;
  size_t at = 0, i = 0;
  for (size_t pos; (pos = json.find(key, at)) != std::string::npos; ++i) {
    if (i >= fs.size()) return json;  // not the layout expected: keep FlatBuffers' text
    size_t num = pos + key.size(), end = json.find_first_of(",\n}", num);
    if (end == std::string::npos) return json;
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof(buf), fs[i]);
    out.append(json, at, num - at).append(buf, r.ptr);
    at = end;
  }
  if (i != fs.size()) return json;
  out.append(json, at, std::string::npos);
  return out;
}

// Likewise FlatBuffers prints floats with 6 fixed decimals: the synthetic `values` of
// views (the only [float] in the schema) are rewritten, list by list in the order
// GenerateText prints them (tensors in order; a view's parts before its own values),
// as the shortest text that reads back to the same float.
static void CollectValues(const TensorRef& r, std::vector<const std::vector<float>*>* out) {
  if (!r.view) return;
  for (const auto& p : r.view->parts) CollectValues(p, out);
  if (!r.view->values.empty()) out->push_back(&r.view->values);
}

static std::string ExactValues(const Graph& g, std::string json) {
  std::vector<const std::vector<float>*> lists;
  for (const auto& t : g.tensors)
    if (t.weight) CollectValues(*t.weight, &lists);
  if (lists.empty()) return json;
  const std::string key = "\"values\": [";
  std::string out;
  size_t at = 0, i = 0;
  for (size_t pos; (pos = json.find(key, at)) != std::string::npos; ++i) {
    const size_t open = pos + key.size(), close = json.find(']', open);
    if (i >= lists.size() || close == std::string::npos ||
        static_cast<size_t>(std::count(json.begin() + open, json.begin() + close, ',')) + 1 != lists[i]->size())
      return json;  // not the layout expected: keep FlatBuffers' text
    out.append(json, at, open - at);
    for (size_t k = 0; k < lists[i]->size(); ++k) {
      char buf[32];
      auto r = std::to_chars(buf, buf + sizeof(buf), (*lists[i])[k]);
      out.append(k ? ", " : "").append(buf, r.ptr);
    }
    at = close;
  }
  if (i != lists.size()) return json;
  out.append(json, at, std::string::npos);
  return out;
}

absl::StatusOr<std::string> ToJson(const Graph& g) {
  auto p = SchemaParser();
  if (!p.ok()) return p.status();
  std::string bin = Pack(g);
  std::string out;
  if (!flatbuffers::GenerateText(**p, bin.data(), &out))
    return absl::InternalError("uaii IR: FlatBuffers could not render JSON");
  return ExactFloats(g, ExactValues(g, std::move(out)));
}

absl::StatusOr<Graph> FromJson(std::string_view json) {
  auto p = SchemaParser();
  if (!p.ok()) return p.status();
  std::string text(json);
  if (!(*p)->Parse(text.c_str()))
    return absl::InvalidArgumentError(absl::StrCat("uaii IR JSON: ", (*p)->error_));
  const auto& b = (*p)->builder_;
  return FromBinary(std::string_view(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize()));
}

bool IsGraphPath(std::string_view path) {
  std::string p(path);
  return absl::EndsWith(p, ".uaii") || absl::EndsWith(p, ".uaii.json");
}

absl::StatusOr<Graph> ReadGraphFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open graph file"));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string bytes = ss.str();
  auto g = absl::EndsWith(path, ".uaii.json") ? FromJson(bytes) : FromBinary(bytes);
  if (!g.ok()) return absl::Status(g.status().code(), absl::StrCat(path, ": ", g.status().message()));
  return g;
}

absl::Status WriteGraphFile(const Graph& g, const std::string& path) {
  auto bytes = absl::EndsWith(path, ".uaii.json") ? ToJson(g) : ToBinary(g);
  if (!bytes.ok()) return bytes.status();
  std::string tmp = absl::StrCat(path, ".tmp", static_cast<long long>(::getpid()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return absl::PermissionDeniedError(absl::StrCat(path, ": cannot write graph file"));
    out.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
    if (!out) return absl::DataLossError(absl::StrCat(tmp, ": write failed"));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return absl::PermissionDeniedError(absl::StrCat(path, ": cannot rename the written file into place"));
  }
  return absl::OkStatus();
}

}  // namespace uaii::ir
