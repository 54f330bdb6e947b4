#include "chat/tool_call_xml.h"

#include "absl/status/status.h"
#include "chat/json.h"
#include "chat/tool_call_json.h"
#include "chat/value.h"
#include "util/str_cat.h"

namespace uaii::chat {
namespace {

constexpr std::string_view kSpace = " \t\r\n";

void SkipSpace(std::string_view s, size_t& pos) {
  while (pos < s.size() && kSpace.find(s[pos]) != std::string_view::npos) ++pos;
}

bool Eat(std::string_view s, size_t& pos, std::string_view token) {
  if (s.substr(pos, token.size()) != token) return false;
  pos += token.size();
  return true;
}

std::string_view Trim(std::string_view s) {
  size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

// The value as the template printed it, back to a JSON value (see the header).
jinja::Value TypedValue(std::string_view raw, std::string_view declared) {
  if (declared == "string") return jinja::Value::String(std::string(raw));
  std::string_view t = Trim(raw);
  if (t == "True" || t == "true") return jinja::Value::Bool(true);
  if (t == "False" || t == "false") return jinja::Value::Bool(false);
  if (t == "None" || t == "null") return jinja::Value::None();
  if (!t.empty() && (t[0] == '{' || t[0] == '[' || t[0] == '-' || (t[0] >= '0' && t[0] <= '9'))) {
    auto v = jinja::ParseJson(t, "parameter");
    if (v.ok()) return *std::move(v);
  }
  return jinja::Value::String(std::string(raw));
}

// "<tag=NAME>": the name, with pos after '>'.
absl::StatusOr<std::string> TagName(std::string_view s, size_t& pos, std::string_view what) {
  size_t end = s.find('>', pos);
  size_t newline = s.find('\n', pos);
  if (end == std::string_view::npos || newline < end)
    return absl::InvalidArgumentError(StrCat("<", what, "= is not closed by '>'"));
  std::string name(Trim(s.substr(pos, end - pos)));
  pos = end + 1;
  if (name.empty()) return absl::InvalidArgumentError(StrCat("<", what, "=> has no name"));
  return name;
}

}  // namespace

absl::StatusOr<ToolParamTypes> ToolParamTypesFromJson(std::string_view tools_json) {
  auto v = jinja::ParseJson(tools_json, "tools");
  if (!v.ok()) return v.status();
  ToolParamTypes types;
  if (!v->is_list()) return types;
  auto field = [](const jinja::Value& d, std::string_view key) -> const jinja::Value* {
    return d.is_dict() ? d.dict->Find(key) : nullptr;
  };
  for (const jinja::Value& tool : *v->list) {
    const jinja::Value* fn = field(tool, "function");
    if (!fn || !fn->is_dict()) fn = &tool;
    const jinja::Value* name = field(*fn, "name");
    const jinja::Value* params = field(*fn, "parameters");
    const jinja::Value* props = params ? field(*params, "properties") : nullptr;
    if (!name || !name->is_string() || !props || !props->is_dict()) continue;
    auto& by_param = types[name->str];
    for (const auto& [key, schema] : props->dict->items) {
      const jinja::Value* type = field(schema, "type");
      if (key.is_string() && type && type->is_string()) by_param[key.str] = type->str;
    }
  }
  return types;
}

absl::StatusOr<std::vector<ToolCall>> ToolCallsFromQwenXml(std::string_view s, const ToolParamTypes* types) {
  std::vector<ToolCall> calls;
  size_t pos = 0;
  SkipSpace(s, pos);
  while (pos < s.size()) {
    if (!Eat(s, pos, "<function="))
      return absl::InvalidArgumentError(StrCat("expected <function=NAME> in the tool call, found \"",
                                               s.substr(pos, 20), "\""));
    auto name = TagName(s, pos, "function");
    if (!name.ok()) return name.status();
    jinja::Value args = jinja::Value::MakeDict();
    const std::map<std::string, std::string>* declared = nullptr;
    if (types) {
      auto it = types->find(*name);
      if (it != types->end()) declared = &it->second;
    }
    while (true) {
      SkipSpace(s, pos);
      if (Eat(s, pos, "</function>")) break;
      if (!Eat(s, pos, "<parameter="))
        return absl::InvalidArgumentError(pos >= s.size()
            ? StrCat("function ", *name, " is not closed by </function>")
            : StrCat("expected <parameter=NAME> or </function> in function ", *name, ", found \"",
                     s.substr(pos, 20), "\""));
      auto key = TagName(s, pos, "parameter");
      if (!key.ok()) return key.status();
      size_t end = s.find("</parameter>", pos);
      if (end == std::string_view::npos)
        return absl::InvalidArgumentError(StrCat("parameter ", *key, " of function ", *name,
                                                 " is not closed by </parameter>"));
      std::string_view value = s.substr(pos, end - pos);
      if (value.find("<parameter=") != std::string_view::npos)
        return absl::InvalidArgumentError(StrCat("parameter ", *key, " of function ", *name,
                                                 " is not closed by </parameter>"));
      // The template's own newlines around the value are not part of it.
      if (!value.empty() && value.front() == '\n') value.remove_prefix(1);
      if (!value.empty() && value.back() == '\n') value.remove_suffix(1);
      std::string_view type;
      if (declared) {
        auto it = declared->find(*key);
        if (it != declared->end()) type = it->second;
      }
      args.dict->Set(jinja::Value::String(*key), TypedValue(value, type));
      pos = end + std::string_view("</parameter>").size();
    }
    calls.push_back(ToolCall{*std::move(name), CompactJson(args), {}});
    SkipSpace(s, pos);
  }
  if (calls.empty()) return absl::InvalidArgumentError("tool call is empty");
  return calls;
}

}  // namespace uaii::chat
