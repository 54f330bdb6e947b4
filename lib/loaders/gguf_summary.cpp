#include "loaders/gguf_summary.h"

#include <charconv>
#include <set>

#include "tokenizers/gguf_tokenizer.h"
#include "util/str_cat.h"

#include "uaii/tokenizer.h"
#include "util/json_writer.h"

namespace uaii {
namespace {

using gguf::ValueType;

struct Bound { std::string_view suffix; int64_t max; bool required; };
// Upper bounds are far above any real model and far below what would overflow a size.
constexpr Bound kCoreBounds[] = {
    {"block_count", 4096, true},
    {"embedding_length", 1 << 20, true},
    {"attention.head_count", 1 << 14, true},
    {"attention.head_count_kv", 1 << 14, false},
    {"feed_forward_length", 1 << 22, false},
    {"context_length", int64_t{1} << 32, true},
    {"attention.key_length", 1 << 16, false},
    {"attention.value_length", 1 << 16, false},
};

void AppendValueJson(JsonWriter& w, const gguf::Value& v) {
  switch (v.type) {
    case ValueType::STRING: w.String(v.str); break;
    case ValueType::BOOL: w.Bool(v.num.u != 0); break;
    case ValueType::FLOAT32: case ValueType::FLOAT64: w.Double(v.num.f); break;
    case ValueType::INT8: case ValueType::INT16: case ValueType::INT32: case ValueType::INT64:
      w.Int(v.num.i); break;
    case ValueType::ARRAY:
      w.BeginArray();
      for (const auto& e : v.elems) AppendValueJson(w, e);
      w.EndArray();
      break;
    default: w.Uint(v.num.u); break;
  }
}

}  // namespace

std::string ValueToJson(const gguf::Value& v) {
  JsonWriter w;
  AppendValueJson(w, v);
  return w.str();
}

absl::Status ValidateCoreHyperParameters(const gguf::File& file) {
  auto arch = file.GetString("general.architecture");
  if (!arch.ok()) return arch.status();
  if (arch->empty()) return absl::InvalidArgumentError("GGUF metadata general.architecture: empty");
  std::map<std::string_view, int64_t> got;
  for (const Bound& b : kCoreBounds) {
    std::string key = StrCat(*arch, ".", b.suffix);
    const gguf::Value* v = file.Find(key);
    if (v == nullptr) {
      if (b.required) return absl::NotFoundError(StrCat("GGUF metadata ", key, ": missing"));
      continue;
    }
    // Some converters store per-layer arrays (e.g. head_count_kv); check each entry.
    std::vector<const gguf::Value*> items;
    if (v->type == ValueType::ARRAY) {
      for (const auto& e : v->elems) items.push_back(&e);
      if (items.empty()) return absl::InvalidArgumentError(StrCat("GGUF metadata ", key, ": empty array"));
    } else {
      items.push_back(v);
    }
    for (const gguf::Value* item : items) {
      if (!item->is_integer())
        return absl::InvalidArgumentError(StrCat("GGUF metadata ", key, ": expected an integer, got ",
                                                       gguf::ValueTypeName(item->type)));
      bool negative = item->type == ValueType::INT8 || item->type == ValueType::INT16 ||
                      item->type == ValueType::INT32 || item->type == ValueType::INT64
                          ? item->num.i < 0 : false;
      uint64_t u = negative ? 0 : item->num.u;
      bool zero_ok = b.suffix == "attention.head_count_kv" && v->type == ValueType::ARRAY;
      if (negative || (u == 0 && !zero_ok) || u > static_cast<uint64_t>(b.max))
        return absl::InvalidArgumentError(StrCat(
            "GGUF metadata ", key, ": ", negative ? item->num.i : static_cast<int64_t>(u),
            " is out of range (1 to ", b.max, ")"));
    }
    if (v->type != ValueType::ARRAY) got[b.suffix] = v->as_int();
  }
  int64_t n_embd = got["embedding_length"];
  int64_t n_head = got["attention.head_count"];
  if (got.count("attention.head_count_kv")) {
    int64_t n_kv = got["attention.head_count_kv"];
    if (n_kv > n_head || n_head % n_kv != 0)
      return absl::InvalidArgumentError(StrCat(
          "GGUF metadata ", *arch, ".attention.head_count_kv: ", n_kv,
          " does not divide ", *arch, ".attention.head_count (", n_head, ")"));
  }
  if (!got.count("attention.key_length") && n_embd % n_head != 0)
    return absl::InvalidArgumentError(StrCat(
        "GGUF metadata ", *arch, ".embedding_length: ", n_embd, " is not divisible by ", *arch,
        ".attention.head_count (", n_head, ") and no key_length is given"));
  // A block count beyond the blocks the file holds (sizes computed from it, the KV
  // cache first, would be far larger than the model): checked when the file has
  // per-block tensors at all.
  {
    std::set<int64_t> blocks;
    for (const auto& t : file.tensors()) {
      if (t.name.rfind("blk.", 0) != 0) continue;
      int64_t il = 0;
      const char* b = t.name.data() + 4;
      auto [end, ec] = std::from_chars(b, t.name.data() + t.name.size(), il);
      if (ec == std::errc() && end != b && *end == '.') blocks.insert(il);
    }
    const int64_t n_layer = got["block_count"];
    if (!blocks.empty())
      for (int64_t il = 0; il < n_layer; ++il)
        if (!blocks.count(il))
          return absl::InvalidArgumentError(StrCat("GGUF metadata ", *arch, ".block_count: ", n_layer,
                                                   ", but the file holds no tensor of block ", il, " (",
                                                   blocks.size(), " blocks present)"));
  }
  // The vocabulary: <arch>.vocab_size, when given, is the token list's length, and
  // every special-token id lies inside it.
  if (const gguf::Value* toks = file.Find("tokenizer.ggml.tokens"); toks && toks->type == ValueType::ARRAY) {
    const uint64_t n_tokens = toks->elems.size();
    if (const gguf::Value* vs = file.Find(StrCat(*arch, ".vocab_size")); vs && vs->is_integer() &&
                                                                          vs->num.u != n_tokens)
      return absl::InvalidArgumentError(StrCat("GGUF metadata ", *arch, ".vocab_size: ", vs->as_int(),
                                               " disagrees with the ", n_tokens,
                                               " tokens of tokenizer.ggml.tokens"));
    for (const auto& kv : file.metadata()) {
      const std::string_view k = kv.key;
      if (k.rfind("tokenizer.ggml.", 0) != 0 || k.size() < 9 || k.substr(k.size() - 9) != "_token_id") continue;
      if (!kv.value.is_integer()) continue;
      const bool negative = (kv.value.type == ValueType::INT8 || kv.value.type == ValueType::INT16 ||
                             kv.value.type == ValueType::INT32 || kv.value.type == ValueType::INT64) &&
                            kv.value.num.i < 0;
      // -1 (and 0xFFFFFFFF in uint32) is how converters write "none".
      if (negative || kv.value.num.u == 0xFFFFFFFFu) continue;
      if (kv.value.num.u >= n_tokens)
        return absl::InvalidArgumentError(StrCat("GGUF metadata ", k, ": ", kv.value.num.u,
                                                 " is outside the vocabulary of ", n_tokens, " tokens"));
    }
  }
  if (const gguf::TensorInfo* emb = file.FindTensor("token_embd.weight")) {
    if (emb->dims.size() != 2 || static_cast<int64_t>(emb->dims[0]) != n_embd)
      return absl::InvalidArgumentError(StrCat(
          "tensor token_embd.weight: row length ", emb->dims[0], " does not match ", *arch,
          ".embedding_length (", n_embd, ")"));
    if (const gguf::Value* toks = file.Find("tokenizer.ggml.tokens");
        toks && toks->type == ValueType::ARRAY && emb->dims[1] < toks->elems.size())
      return absl::InvalidArgumentError(StrCat(
          "tensor token_embd.weight: ", emb->dims[1], " rows for a vocabulary of ", toks->elems.size(),
          " tokens (tokenizer.ggml.tokens)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<GgufSummary> SummarizeGguf(const gguf::File& file) {
  if (auto s = ValidateCoreHyperParameters(file); !s.ok()) return s;
  GgufSummary s;
  s.path = file.path();
  s.gguf_version = file.version();
  s.file_bytes = file.file_size();
  s.alignment = file.alignment();
  s.architecture = std::string(*file.GetString("general.architecture"));
  if (auto n = file.GetString("general.name"); n.ok()) s.name = std::string(*n);
  if (auto t = file.GetInt("general.file_type"); t.ok()) s.file_type = *t;
  std::string prefix = s.architecture + ".";
  for (const auto& kv : file.metadata())
    if (kv.key.starts_with(prefix))
      s.hyperparameters_json.emplace_back(kv.key.substr(prefix.size()), ValueToJson(kv.value));

  s.tensor_count = file.tensors().size();
  for (const auto& t : file.tensors()) {
    s.tensors_by_type[std::string(t.traits->name)]++;
    s.total_tensor_bytes += t.bytes;
    if (t.bytes > s.largest_tensor_bytes) {
      s.largest_tensor_bytes = t.bytes;
      s.largest_tensor = t.name;
    }
  }

  if (auto m = file.GetString("tokenizer.ggml.model"); m.ok()) s.tokenizer_model = std::string(*m);
  if (auto p = file.GetString("tokenizer.ggml.pre"); p.ok()) s.tokenizer_pre = std::string(*p);
  const gguf::Value* tokens = nullptr;
  if (const gguf::Value* v = file.Find("tokenizer.ggml.tokens")) {
    auto arr = file.GetArray("tokenizer.ggml.tokens", ValueType::STRING);
    if (!arr.ok()) return arr.status();
    tokens = *arr;
    s.vocab_size = static_cast<int64_t>(v->elems.size());
  }
  for (const auto& kv : file.metadata()) {
    if (kv.key == "tokenizer.chat_template") s.has_chat_template = true;
    if (kv.key.starts_with("tokenizer.chat_template."))
      s.named_chat_templates.push_back(kv.key.substr(sizeof("tokenizer.chat_template.") - 1));
  }

  // End of generation exactly as generation decides it: the tokenizer's set (metadata
  // EOS/EOT/EOM plus the control tokens llama.cpp also treats as terminators).
  if (tokens) {
    auto tok = TokenizerFromGguf(file);
    if (!tok.ok()) return tok.status();
    const SpecialIds& sp = (*tok)->special_ids();
    for (TokenId id : (*tok)->end_of_generation_ids()) {
      std::string source = id == sp.eos ? "tokenizer.ggml.eos_token_id"
                           : id == sp.eot ? "tokenizer.ggml.eot_token_id"
                           : id == sp.eom ? "tokenizer.ggml.eom_token_id"
                                          : "known terminator";
      s.end_of_generation.push_back({id, std::string((*tok)->Piece(id)), std::move(source)});
    }
  }
  return s;
}

std::string SummaryToJson(const GgufSummary& s) {
  JsonWriter w(2);
  w.BeginObject();
  w.Key("path").String(s.path);
  w.Key("format").String("gguf");
  w.Key("gguf_version").Uint(s.gguf_version);
  w.Key("file_bytes").Uint(s.file_bytes);
  w.Key("alignment").Uint(s.alignment);
  w.Key("architecture").String(s.architecture);
  w.Key("name").String(s.name);
  if (s.file_type >= 0) w.Key("file_type").Int(s.file_type);
  w.Key("hyperparameters").BeginObject();
  for (const auto& [k, v] : s.hyperparameters_json) w.Key(k).Raw(v);
  w.EndObject();
  w.Key("tensors").BeginObject();
  w.Key("count").Uint(s.tensor_count);
  w.Key("by_type").BeginObject();
  for (const auto& [t, n] : s.tensors_by_type) w.Key(t).Uint(n);
  w.EndObject();
  w.Key("total_bytes").Uint(s.total_tensor_bytes);
  w.Key("largest").BeginObject().Key("name").String(s.largest_tensor).Key("bytes").Uint(s.largest_tensor_bytes).EndObject();
  w.EndObject();
  w.Key("tokenizer").BeginObject();
  w.Key("model").String(s.tokenizer_model);
  w.Key("pre").String(s.tokenizer_pre);
  w.Key("vocab_size").Int(s.vocab_size);
  w.Key("end_of_generation").BeginArray();
  for (const auto& t : s.end_of_generation)
    w.BeginObject().Key("id").Int(t.id).Key("piece").String(t.piece).Key("source").String(t.source).EndObject();
  w.EndArray();
  w.EndObject();
  w.Key("chat_template").BeginObject();
  w.Key("present").Bool(s.has_chat_template);
  w.Key("named").BeginArray();
  for (const auto& n : s.named_chat_templates) w.String(n);
  w.EndArray();
  w.EndObject();
  w.EndObject();
  return w.str();
}

}  // namespace uaii
