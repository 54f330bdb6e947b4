// The response bodies, in the shapes the OpenAI client's types read (and llama-server
// and llama-cpp-python write): chat.completion and its chunks, text_completion (also
// its stream's items), the model list, and llama-server's /tokenize and /detokenize.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "uaii/chat_output.h"
#include "uaii/stop_reason.h"

namespace uaii::server {

// Fields every object of one response shares.
struct ResponseHeader {
  std::string id;       // "chatcmpl-…" / "cmpl-…"
  int64_t created = 0;  // Unix seconds
  std::string model;
};

struct Usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;     // prompt tokens the slot's KV cache already held
  int64_t reasoning_tokens = 0;  // completion tokens inside reasoning blocks
};

// uaii's stop reason as OpenAI's finish_reason; "tool_calls" when the reply made any.
std::string_view FinishReason(StopReason stop, bool made_tool_calls);

// {"id": "call_…", "type": "function", "function": {"name": N, "arguments": "<JSON text>"}}
// (with "index" first when index >= 0: a stream's delta).
void WriteToolCall(class JsonWriter& w, const chat::ToolCall& call, int index = -1);

std::string ChatCompletionJson(const ResponseHeader& h, const std::vector<chat::OutputBlock>& blocks,
                               std::string_view finish_reason, const Usage& usage);
// One chat.completion.chunk: `delta_json` is the delta object's JSON; finish_reason
// and usage only on the last. With no_choices the chunk's choices are [] (the usage
// chunk stream_options.include_usage asks for).
std::string ChatChunkJson(const ResponseHeader& h, std::string_view delta_json,
                          std::optional<std::string_view> finish_reason = std::nullopt,
                          const Usage* usage = nullptr, bool no_choices = false);
// The delta of one parser event: {"content": T}, {"reasoning_content": T} or
// {"tool_calls": [call]} (index: the call's number in the reply). "" for an event that
// carries nothing to send (an unreadable tool call is sent as text).
std::string DeltaJson(const chat::OutputBlock& event, int tool_call_index);

std::string CompletionJson(const ResponseHeader& h, std::string_view text,
                           std::optional<std::string_view> finish_reason, const Usage* usage);

std::string ModelsJson(const std::string& model_id, int64_t created);

}  // namespace uaii::server
