// Qwen 3.5 / Qwen3-Coder tool calls: the body between <tool_call> and </tool_call>
//
//   <function=get_weather>
//   <parameter=city>
//   Paris
//   </parameter>
//   </function>
//
// The template prints each value with a newline on either side, strings raw and
// objects / lists as JSON (Python's str for numbers and booleans). A parameter
// the request's tool schema declares as "string" stays the raw text; one declared
// as another type, or undeclared, is read back by shape: JSON objects, arrays and
// numbers, true/false/True/False, null/None; everything else stays a string.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "uaii/chat_output.h"

namespace uaii::chat {

// Declared parameter types: function name -> parameter name -> JSON Schema "type".
using ToolParamTypes = std::map<std::string, std::map<std::string, std::string>>;

// From an OpenAI-style tools array ([{"type": "function", "function": {"name",
// "parameters": {"properties": {ARG: {"type": T}}}}}]); entries without a name or
// properties are skipped. InvalidArgument when `tools_json` is not JSON.
absl::StatusOr<ToolParamTypes> ToolParamTypesFromJson(std::string_view tools_json);

// One call per <function=...> element; InvalidArgument naming the unclosed or
// unexpected element otherwise. `types` may be null.
absl::StatusOr<std::vector<ToolCall>> ToolCallsFromQwenXml(std::string_view body,
                                                           const ToolParamTypes* types = nullptr);

}  // namespace uaii::chat
