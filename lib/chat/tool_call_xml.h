// Qwen 3.5 / Qwen3-Coder tool calls: the body between <tool_call> and </tool_call>
//
//   <function=get_weather>
//   <parameter=city>
//   Paris
//   </parameter>
//   </function>
//
// The template prints each value with a newline on either side, strings raw and
// objects / lists as JSON (Python's str for numbers and booleans). Without the
// tool's schema the types are read back by shape: JSON objects, arrays and
// numbers, true/false/True/False, null/None; everything else stays a string.
#pragma once
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "chat/output_blocks.h"

namespace uaii::chat {

// One call per <function=...> element; InvalidArgument naming the unclosed or
// unexpected element otherwise.
absl::StatusOr<std::vector<ToolCall>> ToolCallsFromQwenXml(std::string_view body);

}  // namespace uaii::chat
