// The grammar that forces a reply to be tool calls (OpenAI's tool_choice "required" or a
// named function), written in the model's own tool-call syntax (uaii/chat_output.h) so
// the chat output parser reads the calls back as it reads unforced ones:
//
//   kTaggedJson  <tool_call> {"name": F, "arguments": ARGS} </tool_call>
//   kQwenXml     <tool_call> <function=F> <parameter=P> value </parameter> ... </function> </tool_call>
//   kGemma4      <|tool_call>call:F{p:<|"|>text<|"|>,n:1}<tool_call|>
//   kGranite     <|tool_call|>[{"name": F, "arguments": ARGS}, ...] [<|/tool_call|>]
//   kLlama3      {"name": F, "parameters": ARGS}  (the whole reply)
//
// ARGS follow the tool's `parameters` JSON Schema (llama.cpp's converter, as for
// response_format); the XML and Gemma 4 forms type each parameter by its schema (strings
// as raw text, other types as JSON or Gemma 4's bare values). As in llama-server, the
// grammar is not lazy: the reply starts with a call, or with a reasoning block first when
// the model reasons (required when the prompt already opened one; left out when the caller
// turned thinking off). One call unless
// parallel calls are asked for (llama-server's default too: small models repeat calls).
#pragma once
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "uaii/chat.h"
#include "uaii/chat_output.h"

namespace uaii {

// GBNF (root `root`) for `choice` over `tools_json` (an OpenAI tools array). InvalidArgument
// naming the cause: kAuto (nothing to force), a syntax of kNone (the template has no
// tool-call syntax uaii reads), no tools, a named function that is not among them, a tool
// without a name, or a parameters schema the converter refuses.
absl::StatusOr<std::string> ToolCallGrammar(const chat::ChatSyntax& syntax, std::string_view tools_json,
                                            const ToolChoice& choice, bool starts_in_thinking,
                                            bool thinking_allowed = true);

}  // namespace uaii
