// Gemma 4 tool calls: the body between <|tool_call> and <tool_call|>
//
//   call:get_weather{city:<|"|>Paris<|"|>,days:3,metric:true,tags:[<|"|>a<|"|>],opt:{x:null}}
//
// Gemma 4's template writes arguments with its format_argument macro: keys bare,
// strings between <|"|> quote tokens (nothing escaped inside), numbers and
// true/false/null bare, {k:v,...} and [v,...] nested. JSON-quoted strings and
// keys are accepted too; a bare word that is no number or literal is a string.
#pragma once
#include <string_view>

#include "absl/status/statusor.h"
#include "uaii/chat_output.h"

namespace uaii::chat {

inline constexpr std::string_view kGemma4Quote = "<|\"|>";

// InvalidArgument naming the offset and what was expected when the body is not
// `call:NAME{...}`.
absl::StatusOr<ToolCall> ToolCallFromGemma4(std::string_view body);

}  // namespace uaii::chat
