#include "chat/tool_call_python_tag.h"

#include <optional>

#include "absl/status/status.h"
#include "chat/json.h"
#include "chat/tool_call_json.h"
#include "chat/value.h"

namespace uaii::chat {
namespace {

constexpr std::string_view kSpace = " \t\r\n";

std::string_view Trim(std::string_view s) {
  size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

bool IsIdent(char c, bool first) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9');
}

// A Python literal: '...' / "..." (common escapes), number, True/False/None.
std::optional<jinja::Value> Literal(std::string_view s, size_t& pos) {
  if (pos >= s.size()) return std::nullopt;
  char q = s[pos];
  if (q == '"' || q == '\'') {
    std::string out;
    for (size_t i = pos + 1; i < s.size(); ++i) {
      char c = s[i];
      if (c == q) {
        pos = i + 1;
        return jinja::Value::String(std::move(out));
      }
      if (c == '\\' && i + 1 < s.size()) {
        char e = s[++i];
        out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
      } else {
        out += c;
      }
    }
    return std::nullopt;
  }
  size_t end = s.find_first_of(",) \t\r\n", pos);
  if (end == std::string_view::npos) return std::nullopt;
  std::string_view word = s.substr(pos, end - pos);
  pos = end;
  if (word == "True") return jinja::Value::Bool(true);
  if (word == "False") return jinja::Value::Bool(false);
  if (word == "None") return jinja::Value::None();
  auto v = jinja::ParseJson(word, "number");
  if (v.ok() && v->is_number()) return *std::move(v);
  return std::nullopt;
}

// NAME.call(key=literal, ...) taking the whole of `s`, else nullopt.
std::optional<ToolCall> BuiltinCall(std::string_view s) {
  size_t pos = 0;
  while (pos < s.size() && IsIdent(s[pos], pos == 0)) ++pos;
  if (pos == 0 || s.substr(pos, 6) != ".call(") return std::nullopt;
  ToolCall call{std::string(s.substr(0, pos)), {}, {}};
  pos += 6;
  jinja::Value args = jinja::Value::MakeDict();
  auto skip = [&] { while (pos < s.size() && kSpace.find(s[pos]) != std::string_view::npos) ++pos; };
  skip();
  if (pos < s.size() && s[pos] == ')') {
    ++pos;
  } else {
    while (true) {
      skip();
      size_t k = pos;
      while (pos < s.size() && IsIdent(s[pos], pos == k)) ++pos;
      if (pos == k) return std::nullopt;
      std::string key(s.substr(k, pos - k));
      skip();
      if (pos >= s.size() || s[pos] != '=') return std::nullopt;
      ++pos;
      skip();
      auto value = Literal(s, pos);
      if (!value) return std::nullopt;
      args.dict->Set(jinja::Value::String(std::move(key)), *std::move(value));
      skip();
      if (pos < s.size() && s[pos] == ',') { ++pos; continue; }
      if (pos < s.size() && s[pos] == ')') { ++pos; break; }
      return std::nullopt;
    }
  }
  skip();
  if (pos != s.size()) return std::nullopt;
  call.arguments = CompactJson(args);
  return call;
}

}  // namespace

absl::StatusOr<std::vector<ToolCall>> ToolCallsFromPythonTag(std::string_view body) {
  std::string_view s = Trim(body);
  if (s.empty()) return absl::InvalidArgumentError("<|python_tag|> is followed by nothing");
  if (s[0] == '{' || s[0] == '[') return ToolCallsFromJson(s);
  if (auto call = BuiltinCall(s)) return std::vector<ToolCall>{*std::move(call)};
  jinja::Value args = jinja::Value::MakeDict();
  args.dict->Set(jinja::Value::String("code"), jinja::Value::String(std::string(s)));
  return std::vector<ToolCall>{ToolCall{std::string(kPythonToolName), CompactJson(args), {}}};
}

}  // namespace uaii::chat
