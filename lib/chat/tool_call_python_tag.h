// Llama 3.x calls after <|python_tag|> (the model ends them with <|eom_id|>):
//   {"name": F, "parameters": {...}}          a custom tool, as JSON
//   brave_search.call(query="weather")        a built-in tool, Python keyword call
//   print(2 + 2)                               code for the built-in code interpreter,
//                                              reported as the call python {"code": ...}
#pragma once
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "uaii/chat_output.h"

namespace uaii::chat {

// The name the code interpreter's calls get (as llama.cpp reports them).
inline constexpr std::string_view kPythonToolName = "python";

// `body` is everything after the tag. InvalidArgument when it is empty or is JSON
// that is not a call.
absl::StatusOr<std::vector<ToolCall>> ToolCallsFromPythonTag(std::string_view body);

}  // namespace uaii::chat
