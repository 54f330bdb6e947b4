// Tool calls written as JSON, in the shapes models really produce:
//   {"name": F, "arguments": A}          Qwen, Hermes, SmolLM 3, Granite
//   {"name": F, "parameters": A}         Llama 3.x
//   {"function": F, "arguments": A}      some fine-tunes
//   {"type": "function", "id": I, "function": {"name": F, "arguments": A}}   OpenAI's shape
// where A is an object, null / absent (no arguments), or a string holding an
// object (OpenAI's wire form). A list of such objects is several calls.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "uaii/chat_output.h"
#include "chat/value.h"

namespace uaii::chat {

// Compact JSON (",", ":"), UTF-8 kept as is: the form of ToolCall::arguments.
std::string CompactJson(const jinja::Value& v);

// One call from a parsed value; InvalidArgument naming what is missing or wrong.
absl::StatusOr<ToolCall> ToolCallFromValue(const jinja::Value& v);

// `json` holds one call object or a list of them.
absl::StatusOr<std::vector<ToolCall>> ToolCallsFromJson(std::string_view json);

// True when `v` is an object with a name ("name" or "function") and an argument
// key ("arguments" or "parameters"): the test a bare-JSON reply (Llama 3.x) must
// pass to count as a call rather than as text that happens to be JSON.
bool LooksLikeToolCall(const jinja::Value& v);

// Finds where the JSON object or array that starts a growing text ends, by
// counting brackets outside strings. It does not validate: the parse that follows
// does. Scan() resumes where the previous call stopped, so a streamed value is
// scanned once in all.
class JsonExtent {
 public:
  // `text` starts with '{' or '[' and only grew since the last call. Returns the
  // value's length once it is closed, nullopt while it is still open.
  std::optional<size_t> Scan(std::string_view text);

 private:
  size_t pos_ = 0;
  int depth_ = 0;
  bool in_string_ = false, escape_ = false;
};

// JsonExtent().Scan(text): the length of the value that starts `text`.
std::optional<size_t> JsonValueEnd(std::string_view text);

}  // namespace uaii::chat
