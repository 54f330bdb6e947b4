#include "openai_response.h"

#include "uaii/json_writer.h"

namespace uaii::server {
namespace {

void WriteUsage(JsonWriter& w, const Usage& u) {
  w.Key("usage").BeginObject();
  w.Key("prompt_tokens").Int(u.prompt_tokens);
  w.Key("completion_tokens").Int(u.completion_tokens);
  w.Key("total_tokens").Int(u.prompt_tokens + u.completion_tokens);
  w.Key("prompt_tokens_details").BeginObject().Key("cached_tokens").Int(u.cached_tokens).EndObject();
  w.Key("completion_tokens_details").BeginObject().Key("reasoning_tokens").Int(u.reasoning_tokens).EndObject();
  w.EndObject();
}

void WriteHeader(JsonWriter& w, const ResponseHeader& h, std::string_view object) {
  w.Key("id").String(h.id);
  w.Key("object").String(object);
  w.Key("created").Int(h.created);
  w.Key("model").String(h.model);
}

// An unreadable tool call reaches the client as the text the model wrote: the
// client's own parser may still make sense of it, and nothing is lost.
bool IsTextual(const chat::OutputBlock& b) {
  return b.kind == chat::BlockKind::kText || b.kind == chat::BlockKind::kError;
}
std::string_view TextOf(const chat::OutputBlock& b) { return b.kind == chat::BlockKind::kError ? b.raw : b.text; }

}  // namespace

// As llama-server: a reply cut short is "length" even when it holds calls (the last one
// may be cut); one that ended by itself is "tool_calls" when it made any.
std::string_view FinishReason(StopReason stop, bool made_tool_calls) {
  switch (stop) {
    case StopReason::kMaxTokens:
    case StopReason::kContextFull: return "length";
    default: return made_tool_calls ? "tool_calls" : "stop";
  }
}

void WriteToolCall(JsonWriter& w, const chat::ToolCall& call, int index) {
  w.BeginObject();
  if (index >= 0) w.Key("index").Int(index);
  w.Key("id").String(call.id);
  w.Key("type").String("function");
  w.Key("function").BeginObject().Key("name").String(call.name).Key("arguments").String(call.arguments).EndObject();
  w.EndObject();
}

std::string ChatCompletionJson(const ResponseHeader& h, const std::vector<chat::OutputBlock>& blocks,
                               std::string_view finish_reason, const Usage& usage) {
  std::string content, reasoning;
  bool any_text = false, any_call = false;
  for (const auto& b : blocks) {
    if (IsTextual(b)) { content += TextOf(b); any_text = true; }
    if (b.kind == chat::BlockKind::kThinking) reasoning += b.text;
    if (b.kind == chat::BlockKind::kToolCall) any_call = true;
  }
  JsonWriter w;
  w.BeginObject();
  WriteHeader(w, h, "chat.completion");
  w.Key("choices").BeginArray().BeginObject();
  w.Key("index").Int(0);
  w.Key("message").BeginObject().Key("role").String("assistant");
  w.Key("content");
  // OpenAI's content is null for a reply that is only tool calls.
  (any_call && !any_text) ? w.Null() : w.String(content);
  if (!reasoning.empty()) w.Key("reasoning_content").String(reasoning);
  if (any_call) {
    w.Key("tool_calls").BeginArray();
    for (const auto& b : blocks)
      if (b.kind == chat::BlockKind::kToolCall) WriteToolCall(w, b.call);
    w.EndArray();
  }
  w.EndObject();
  w.Key("logprobs").Null();
  w.Key("finish_reason").String(finish_reason);
  w.EndObject().EndArray();
  WriteUsage(w, usage);
  w.EndObject();
  return w.str();
}

std::string ChatChunkJson(const ResponseHeader& h, std::string_view delta_json,
                          std::optional<std::string_view> finish_reason, const Usage* usage, bool no_choices) {
  JsonWriter w;
  w.BeginObject();
  WriteHeader(w, h, "chat.completion.chunk");
  w.Key("choices").BeginArray();
  if (!no_choices) {
    w.BeginObject().Key("index").Int(0).Key("delta").Raw(delta_json).Key("logprobs").Null();
    w.Key("finish_reason");
    finish_reason ? w.String(*finish_reason) : w.Null();
    w.EndObject();
  }
  w.EndArray();
  if (usage) WriteUsage(w, *usage);
  w.EndObject();
  return w.str();
}

std::string DeltaJson(const chat::OutputBlock& event, int tool_call_index) {
  JsonWriter w;
  w.BeginObject();
  switch (event.kind) {
    case chat::BlockKind::kText:
    case chat::BlockKind::kError:
      if (TextOf(event).empty()) return "";
      w.Key("content").String(TextOf(event));
      break;
    case chat::BlockKind::kThinking:
      if (event.text.empty()) return "";
      w.Key("reasoning_content").String(event.text);
      break;
    case chat::BlockKind::kToolCall:
      w.Key("tool_calls").BeginArray();
      WriteToolCall(w, event.call, tool_call_index);
      w.EndArray();
      break;
  }
  w.EndObject();
  return w.str();
}

std::string CompletionJson(const ResponseHeader& h, std::string_view text,
                           std::optional<std::string_view> finish_reason, const Usage* usage) {
  JsonWriter w;
  w.BeginObject();
  WriteHeader(w, h, "text_completion");
  w.Key("choices").BeginArray().BeginObject();
  w.Key("text").String(text).Key("index").Int(0).Key("logprobs").Null();
  w.Key("finish_reason");
  finish_reason ? w.String(*finish_reason) : w.Null();
  w.EndObject().EndArray();
  if (usage) WriteUsage(w, *usage);
  w.EndObject();
  return w.str();
}

std::string ModelsJson(const std::string& model_id, int64_t created) {
  JsonWriter w;
  w.BeginObject().Key("object").String("list").Key("data").BeginArray();
  w.BeginObject().Key("id").String(model_id).Key("object").String("model").Key("created").Int(created);
  w.Key("owned_by").String("uaii").EndObject();
  w.EndArray().EndObject();
  return w.str();
}

}  // namespace uaii::server
