#include "chat/chat_template.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "chat/builtin_templates.h"
#include "chat/json.h"
#include "chat/template.h"
#include "formats/gguf_file.h"

namespace uaii::chat {
namespace {

using jinja::Value;

absl::StatusOr<std::string> ReadText(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// tokenizer_config.json writes a special token as "text" or {"content": "text", ...}.
std::optional<std::string> TokenString(const Value* v) {
  if (!v) return std::nullopt;
  if (v->is_string()) return v->str;
  if (v->is_dict())
    if (const Value* c = v->dict->Find(std::string_view("content")); c && c->is_string()) return c->str;
  return std::nullopt;
}

absl::Status AddTemplates(const Value& tmpl, const std::string& origin, ModelTemplates& out) {
  if (tmpl.is_string()) {
    out.named["default"] = tmpl.str;
    return absl::OkStatus();
  }
  if (tmpl.is_list()) {
    for (const Value& item : *tmpl.list) {
      const Value* name = item.is_dict() ? item.dict->Find(std::string_view("name")) : nullptr;
      const Value* body = item.is_dict() ? item.dict->Find(std::string_view("template")) : nullptr;
      if (!name || !body || !name->is_string() || !body->is_string())
        return absl::InvalidArgumentError(absl::StrCat(origin, ": chat_template list entries must be {\"name\": str, \"template\": str}"));
      out.named[name->str] = body->str;
    }
    return absl::OkStatus();
  }
  if (tmpl.is_none()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(origin, ": chat_template must be a string or a list, not ", jinja::TypeName(tmpl)));
}

absl::StatusOr<ModelTemplates> FromDirectory(const std::string& dir) {
  ModelTemplates out;
  std::string config = (std::filesystem::path(dir) / "tokenizer_config.json").string();
  out.origin = config;
  if (std::filesystem::exists(config)) {
    auto text = ReadText(config);
    if (!text.ok()) return text.status();
    auto json = jinja::ParseJson(*text, config);
    if (!json.ok()) return json.status();
    if (!json->is_dict()) return absl::InvalidArgumentError(absl::StrCat(config, ": expected a JSON object"));
    out.bos_token = TokenString(json->dict->Find(std::string_view("bos_token")));
    out.eos_token = TokenString(json->dict->Find(std::string_view("eos_token")));
    if (const Value* t = json->dict->Find(std::string_view("chat_template"))) {
      if (auto st = AddTemplates(*t, config, out); !st.ok()) return st;
    }
  } else if (!std::filesystem::exists(std::filesystem::path(dir) / "chat_template.jinja")) {
    return absl::NotFoundError(absl::StrCat(dir, ": no tokenizer_config.json (or chat_template.jinja) in this directory"));
  }
  std::string jinja_file = (std::filesystem::path(dir) / "chat_template.jinja").string();
  if (out.named.empty() && std::filesystem::exists(jinja_file)) {
    auto text = ReadText(jinja_file);
    if (!text.ok()) return text.status();
    out.named["default"] = *text;
    out.origin = jinja_file;
  }
  return out;
}

absl::StatusOr<ModelTemplates> FromGguf(const std::string& path) {
  auto file = gguf::File::Open(path);
  if (!file.ok()) return file.status();
  ModelTemplates out;
  out.origin = path;
  const std::string prefix = "tokenizer.chat_template";
  for (const auto& kv : (*file)->metadata()) {
    if (kv.key.rfind(prefix, 0) != 0) continue;
    std::string name = kv.key == prefix ? "default" : kv.key.substr(prefix.size() + 1);
    if (kv.key != prefix && kv.key[prefix.size()] != '.') continue;
    if (kv.value.type != gguf::ValueType::STRING)
      return absl::InvalidArgumentError(absl::StrCat(path, ": GGUF metadata ", kv.key, " is not a string"));
    out.named[name] = std::string(kv.value.str);
  }
  auto tokens = (*file)->GetArray("tokenizer.ggml.tokens", gguf::ValueType::STRING);
  auto piece = [&](const char* key) -> std::optional<std::string> {
    auto id = (*file)->GetInt(key);
    if (!id.ok() || !tokens.ok() || *id < 0 || static_cast<size_t>(*id) >= (*tokens)->elems.size()) return std::nullopt;
    return std::string((*tokens)->elems[*id].str);
  };
  out.bos_token = piece("tokenizer.ggml.bos_token_id");
  out.eos_token = piece("tokenizer.ggml.eos_token_id");
  if (out.named.empty() && tokens.ok()) {
    // No template in the file: the family's own, chosen by the vocabulary's turn markers.
    const auto& elems = (*tokens)->elems;
    auto has_piece = [&elems](std::string_view p) {
      return std::any_of(elems.begin(), elems.end(), [p](const gguf::Value& e) { return e.str == p; });
    };
    if (const BuiltinTemplate* b = PickBuiltinTemplate(has_piece)) {
      out.named["default"] = std::string(b->source);
      out.builtin_note = path + " carries no chat template; using the built-in " + std::string(b->name) +
                         " template (its vocabulary has " + std::string(b->marker) + ")";
    }
  }
  return out;
}

}  // namespace

bool HasTools(const ChatRequest& r) {
  if (!r.tools || r.tools->is_none()) return false;
  return !r.tools->is_list() || !r.tools->list->empty();
}

Value BuildContext(const ChatRequest& r) {
  Value ctx = Value::MakeDict();
  auto set = [&](const char* k, Value v) { ctx.dict->Set(Value::String(k), std::move(v)); };
  set("messages", r.messages);
  if (HasTools(r)) set("tools", *r.tools);
  set("documents", Value::None());
  set("add_generation_prompt", Value::Bool(r.add_generation_prompt));
  if (r.bos_token) set("bos_token", Value::String(*r.bos_token));
  if (r.eos_token) set("eos_token", Value::String(*r.eos_token));
  const bool thinking = r.enable_thinking.value_or(false);
  set("enable_thinking", Value::Bool(thinking));
  set("thinking", Value::Bool(thinking));
  set("preserve_thinking", Value::Bool(false));
  return ctx;
}

absl::StatusOr<std::string> RenderChat(const std::string& source, const ChatRequest& request,
                                       const jinja::RenderOptions& options) {
  auto t = jinja::Template::Parse(source);
  if (!t.ok()) return absl::Status(t.status().code(), absl::StrCat("chat template: ", t.status().message()));
  auto out = t->Render(BuildContext(request), options);
  if (!out.ok()) return absl::Status(out.status().code(), absl::StrCat("chat template: ", out.status().message()));
  return out;
}

absl::StatusOr<ModelTemplates> LoadModelTemplates(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return FromDirectory(path);
  if (!std::filesystem::exists(path, ec)) return absl::NotFoundError(absl::StrCat("model path does not exist: ", path));
  if (std::filesystem::path(path).filename() == "tokenizer_config.json")
    return FromDirectory(std::filesystem::path(path).parent_path().string());
  return FromGguf(path);
}

absl::StatusOr<std::string> SelectTemplate(const ModelTemplates& t, bool has_tools) {
  if (t.named.empty())
    return absl::NotFoundError(absl::StrCat(t.origin, " has no chat template (no tokenizer.chat_template / chat_template); ",
                                            "uaii template cannot format messages for this model"));
  if (t.named.size() == 1) return t.named.begin()->second;
  if (has_tools)
    if (auto it = t.named.find("tool_use"); it != t.named.end()) return it->second;
  if (auto it = t.named.find("default"); it != t.named.end()) return it->second;
  std::vector<std::string> names;
  for (const auto& kv : t.named) names.push_back(kv.first);
  return absl::InvalidArgumentError(absl::StrCat(t.origin, " has several chat templates and none named \"default\": ",
                                                 absl::StrJoin(names, ", ")));
}

}  // namespace uaii::chat
