#include "ir/serialize.h"

#include "absl/strings/str_cat.h"
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

std::string Str(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

std::vector<std::string> StrVec(const flatbuffers::Vector<Offset<flatbuffers::String>>* v) {
  std::vector<std::string> out;
  if (v)
    for (const auto* s : *v) out.push_back(Str(s));
  return out;
}

absl::StatusOr<Graph> Unpack(const fb::Model* m) {
  const fb::Graph* fg = m->graph();
  if (m->format_version() != 1)
    return absl::InvalidArgumentError(absl::StrCat("uaii IR: unsupported format_version ", m->format_version()));
  Graph g;
  g.name = Str(fg->name());
  if (fg->tensors())
    for (const auto* t : *fg->tensors()) {
      Tensor x;
      x.name = Str(t->name());
      x.dtype = static_cast<TensorType>(t->dtype());
      if (t->shape()) x.shape.assign(t->shape()->begin(), t->shape()->end());
      if (const auto* w = t->weight()) x.weight = TensorRef{Str(w->file()), Str(w->tensor()), w->offset(), w->bytes()};
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
              v = a->ints() ? std::vector<int64_t>(a->ints()->begin(), a->ints()->end()) : std::vector<int64_t>{};
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
    Offset<fb::TensorRef> w = 0;
    if (t.weight)
      w = fb::CreateTensorRef(b, b.CreateString(t.weight->file), b.CreateString(t.weight->tensor),
                              t.weight->offset, t.weight->bytes);
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
  b.Finish(fb::CreateModel(b, 1, graph), fb::ModelIdentifier());
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
  auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  if (bytes.size() < 8 || !fb::ModelBufferHasIdentifier(data))
    return absl::InvalidArgumentError("uaii IR: not a .uaii buffer (missing UAIR identifier)");
  flatbuffers::Verifier v(data, bytes.size());
  if (!fb::VerifyModelBuffer(v)) return absl::InvalidArgumentError("uaii IR: buffer fails FlatBuffers verification");
  return Unpack(fb::GetModel(data));
}

absl::StatusOr<std::string> ToJson(const Graph& g) {
  auto p = SchemaParser();
  if (!p.ok()) return p.status();
  std::string bin = Pack(g);
  std::string out;
  if (!flatbuffers::GenerateText(**p, bin.data(), &out))
    return absl::InternalError("uaii IR: FlatBuffers could not render JSON");
  return out;
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

}  // namespace uaii::ir
