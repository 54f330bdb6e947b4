#include "chat/tool_call_json.h"

#include "absl/status/status.h"
#include "chat/error.h"
#include "chat/json.h"
#include "util/str_cat.h"

namespace uaii::chat {
namespace {

const jinja::Value* Get(const jinja::Value& dict, std::string_view key) {
  const jinja::Value* v = dict.dict->Find(key);
  return v && !v->is_undefined() ? v : nullptr;
}

const jinja::Value* GetArguments(const jinja::Value& dict) {
  const jinja::Value* a = Get(dict, "arguments");
  return a ? a : Get(dict, "parameters");
}

absl::StatusOr<std::string> ArgumentsJson(const jinja::Value* a) {
  if (!a || a->is_none()) return std::string("{}");
  if (a->is_dict()) return CompactJson(*a);
  if (a->is_string()) {
    std::string_view s = a->str;
    if (s.find_first_not_of(" \t\r\n") == std::string_view::npos) return std::string("{}");
    auto inner = jinja::ParseJson(s, "tool call arguments string");
    if (!inner.ok()) return inner.status();
    if (inner->is_dict()) return CompactJson(*inner);
    return absl::InvalidArgumentError(
        StrCat("tool call arguments string holds a JSON ", jinja::TypeName(*inner), ", not an object"));
  }
  return absl::InvalidArgumentError(
      StrCat("tool call arguments are a JSON ", jinja::TypeName(*a), ", not an object"));
}

}  // namespace

std::string CompactJson(const jinja::Value& v) {
  jinja::JsonDumpOptions o;
  o.ensure_ascii = false;
  o.item_sep = ",";
  o.key_sep = ":";
  try {
    return jinja::JsonDump(v, o);
  } catch (const jinja::JinjaError&) {
    return "null";  // unreachable for values parsed from JSON
  }
}

absl::StatusOr<ToolCall> ToolCallFromValue(const jinja::Value& v) {
  if (!v.is_dict())
    return absl::InvalidArgumentError(StrCat("tool call is a JSON ", jinja::TypeName(v), ", not an object"));
  ToolCall call;
  const jinja::Value* fields = &v;  // where name and arguments live
  if (const jinja::Value* f = Get(v, "function"); f && f->is_dict()) fields = f;
  const jinja::Value* name = Get(*fields, "name");
  if (!name && fields == &v) name = Get(v, "function");  // {"function": "F", ...}
  if (!name || !name->is_string() || name->str.empty())
    return absl::InvalidArgumentError("tool call has no \"name\" string");
  call.name = name->str;
  auto args = ArgumentsJson(GetArguments(*fields));
  if (!args.ok()) return absl::InvalidArgumentError(StrCat(std::string(args.status().message()), " (call ", call.name, ")"));
  call.arguments = *std::move(args);
  // An "id" in the model's text is not taken: the engine numbers the calls of a reply.
  return call;
}

absl::StatusOr<std::vector<ToolCall>> ToolCallsFromJson(std::string_view json) {
  auto v = jinja::ParseJson(json, "tool call");
  if (!v.ok()) return v.status();
  std::vector<ToolCall> calls;
  if (v->is_list()) {
    if (v->list->empty()) return absl::InvalidArgumentError("tool call list is empty");
    for (const jinja::Value& item : *v->list) {
      auto c = ToolCallFromValue(item);
      if (!c.ok()) return c.status();
      calls.push_back(*std::move(c));
    }
    return calls;
  }
  auto c = ToolCallFromValue(*v);
  if (!c.ok()) return c.status();
  calls.push_back(*std::move(c));
  return calls;
}

bool LooksLikeToolCall(const jinja::Value& v) {
  if (!v.is_dict()) return false;
  const jinja::Value* fields = &v;
  if (const jinja::Value* f = Get(v, "function"); f && f->is_dict()) fields = f;
  bool named = Get(*fields, "name") || (fields == &v && Get(v, "function"));
  return named && GetArguments(*fields) != nullptr;
}

std::optional<size_t> JsonExtent::Scan(std::string_view text) {
  for (; pos_ < text.size(); ++pos_) {
    char c = text[pos_];
    if (in_string_) {
      if (escape_) escape_ = false;
      else if (c == '\\') escape_ = true;
      else if (c == '"') in_string_ = false;
      continue;
    }
    switch (c) {
      case '"': in_string_ = true; break;
      case '{':
      case '[': ++depth_; break;
      case '}':
      case ']':
        if (--depth_ <= 0) return ++pos_;
        break;
      default: break;
    }
  }
  return std::nullopt;
}

std::optional<size_t> JsonValueEnd(std::string_view text) { return JsonExtent().Scan(text); }

}  // namespace uaii::chat
