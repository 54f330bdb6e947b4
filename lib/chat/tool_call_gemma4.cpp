#include "chat/tool_call_gemma4.h"

#include "absl/status/status.h"
#include "chat/json.h"
#include "chat/tool_call_json.h"
#include "chat/value.h"
#include "util/str_cat.h"

namespace uaii::chat {
namespace {

constexpr int kMaxDepth = 64;  // nesting a model could plausibly write; bounds recursion
constexpr std::string_view kSpace = " \t\r\n";

class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}

  absl::StatusOr<ToolCall> Call() {
    SkipSpace();
    if (!Eat("call:")) return Fail("\"call:\"");
    size_t brace = s_.find('{', pos_);
    if (brace == std::string_view::npos) return Fail("'{' after the function name");
    std::string_view name = Trim(s_.substr(pos_, brace - pos_));
    if (name.empty() || name.find_first_of(" \t\r\n,:}") != std::string_view::npos)
      return Fail("a function name before '{'");
    pos_ = brace;
    auto args = Object(0);
    if (!args.ok()) return args.status();
    SkipSpace();
    if (pos_ != s_.size()) return Fail("the end of the call after its arguments");
    return ToolCall{std::string(name), CompactJson(*args), {}};
  }

 private:
  absl::StatusOr<jinja::Value> Value(int depth) {
    if (depth > kMaxDepth) return absl::InvalidArgumentError("tool call arguments nest too deeply");
    SkipSpace();
    if (pos_ >= s_.size()) return Fail("a value");
    if (s_.compare(pos_, kGemma4Quote.size(), kGemma4Quote) == 0) return Quoted();
    char c = s_[pos_];
    if (c == '"') return JsonString();
    if (c == '{') return Object(depth + 1);
    if (c == '[') return Array(depth + 1);
    return Bare();
  }

  absl::StatusOr<jinja::Value> Quoted() {
    pos_ += kGemma4Quote.size();
    size_t end = s_.find(kGemma4Quote, pos_);
    if (end == std::string_view::npos) return Fail("the closing <|\"|> of a string");
    jinja::Value v = jinja::Value::String(std::string(s_.substr(pos_, end - pos_)));
    pos_ = end + kGemma4Quote.size();
    return v;
  }

  absl::StatusOr<jinja::Value> JsonString() {
    size_t i = pos_ + 1;
    for (; i < s_.size() && s_[i] != '"'; ++i)
      if (s_[i] == '\\') ++i;
    if (i >= s_.size()) return Fail("the closing '\"' of a string");
    auto v = jinja::ParseJson(s_.substr(pos_, i + 1 - pos_), "tool call string");
    if (!v.ok()) return v.status();
    pos_ = i + 1;
    return v;
  }

  // A number, true/false/null, or an unquoted word (kept as a string).
  absl::StatusOr<jinja::Value> Bare() {
    size_t end = s_.find_first_of(",}]", pos_);
    if (end == std::string_view::npos) end = s_.size();
    std::string_view word = Trim(s_.substr(pos_, end - pos_));
    if (word.empty()) return Fail("a value");
    pos_ = end;
    if (word == "true" || word == "True") return jinja::Value::Bool(true);
    if (word == "false" || word == "False") return jinja::Value::Bool(false);
    if (word == "null" || word == "None") return jinja::Value::None();
    if (word[0] == '-' || (word[0] >= '0' && word[0] <= '9')) {
      auto v = jinja::ParseJson(word, "tool call number");
      if (v.ok()) return v;
    }
    return jinja::Value::String(std::string(word));
  }

  absl::StatusOr<jinja::Value> Object(int depth) {
    if (depth > kMaxDepth) return absl::InvalidArgumentError("tool call arguments nest too deeply");
    ++pos_;  // '{'
    jinja::Value d = jinja::Value::MakeDict();
    SkipSpace();
    if (Eat("}")) return d;
    while (true) {
      SkipSpace();
      auto key = Key();
      if (!key.ok()) return key.status();
      SkipSpace();
      if (!Eat(":")) return Fail("':' after a key");
      auto value = Value(depth);
      if (!value.ok()) return value.status();
      d.dict->Set(jinja::Value::String(*std::move(key)), *std::move(value));
      SkipSpace();
      if (Eat("}")) return d;
      if (!Eat(",")) return Fail("',' or '}' in an object");
    }
  }

  absl::StatusOr<jinja::Value> Array(int depth) {
    ++pos_;  // '['
    jinja::Value l = jinja::Value::MakeList();
    SkipSpace();
    if (Eat("]")) return l;
    while (true) {
      auto value = Value(depth);
      if (!value.ok()) return value.status();
      l.list->push_back(*std::move(value));
      SkipSpace();
      if (Eat("]")) return l;
      if (!Eat(",")) return Fail("',' or ']' in a list");
    }
  }

  absl::StatusOr<std::string> Key() {
    if (s_.compare(pos_, kGemma4Quote.size(), kGemma4Quote) == 0) {
      auto v = Quoted();
      if (!v.ok()) return v.status();
      return v->str;
    }
    if (pos_ < s_.size() && s_[pos_] == '"') {
      auto v = JsonString();
      if (!v.ok()) return v.status();
      return v->str;
    }
    size_t end = s_.find_first_of(":,{}[]", pos_);
    if (end == std::string_view::npos || s_[end] != ':') return Fail("a key followed by ':'");
    std::string_view key = Trim(s_.substr(pos_, end - pos_));
    if (key.empty()) return Fail("a key");
    pos_ = end;
    return std::string(key);
  }

  absl::Status Fail(std::string_view expected) const {
    return absl::InvalidArgumentError(StrCat("Gemma 4 tool call: expected ", expected, " at offset ", pos_,
                                             pos_ < s_.size() ? StrCat(" (found \"", s_.substr(pos_, 16), "\")")
                                                              : std::string(" (found the end)")));
  }

  bool Eat(std::string_view t) {
    if (s_.compare(pos_, t.size(), t) != 0) return false;
    pos_ += t.size();
    return true;
  }
  void SkipSpace() {
    while (pos_ < s_.size() && kSpace.find(s_[pos_]) != std::string_view::npos) ++pos_;
  }
  static std::string_view Trim(std::string_view s) {
    size_t b = s.find_first_not_of(kSpace);
    if (b == std::string_view::npos) return {};
    return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<ToolCall> ToolCallFromGemma4(std::string_view body) { return Reader(body).Call(); }

}  // namespace uaii::chat
