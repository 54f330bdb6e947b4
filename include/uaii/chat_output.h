// What a chat reply is made of once the model's raw text is read: Text, Thinking
// (reasoning the template marks off), ToolCall and Error blocks, in the order the
// model wrote them; and how a model marks reasoning and tool calls (ChatSyntax, read
// from its chat template and vocabulary).
//
//   reasoning   <think> ... </think>                 Qwen3, SmolLM 3, DeepSeek-R1
//               <|channel>thought\n ... <channel|>   Gemma 4
//   tool calls  kTaggedJson  <tool_call>{"name":..,"arguments":{..}}</tool_call>   Qwen 2.5/3, SmolLM 3, Hermes
//               kQwenXml     <tool_call><function=F><parameter=A>v</parameter></function></tool_call>   Qwen 3.5, Qwen3-Coder
//               kGemma4      <|tool_call>call:F{a:<|"|>v<|"|>,n:1}<tool_call|>   Gemma 4
//               kGranite     <|tool_call|>[{"name":..,"arguments":{..}}]          Granite 3.x
//               kLlama3      {"name":..,"parameters":{..}} as the whole reply, or <|python_tag|>...   Llama 3.x
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "uaii/json_writer.h"

namespace uaii::chat {

enum class BlockKind : uint8_t { kText, kThinking, kToolCall, kError };

// "text", "thinking", "tool_call", "error" (the `type` field of --json output).
std::string_view BlockKindName(BlockKind kind);

struct ToolCall {
  std::string name;
  std::string arguments;  // a JSON object, compact UTF-8 ("{}" when the model gave none)
  std::string id;         // set by the chat engine (unique per reply); never taken from the model's text
  bool operator==(const ToolCall&) const = default;
};

// One item of a reply. As a parser event, kText / kThinking carry a delta of
// `text` (to append to the previous block when it is of the same kind);
// kToolCall and kError always come whole.
struct OutputBlock {
  BlockKind kind = BlockKind::kText;
  std::string text;  // kText, kThinking: the text; kError: what is wrong
  ToolCall call;     // kToolCall
  std::string raw;   // kError: the model's text that could not be read as a call
  bool operator==(const OutputBlock&) const = default;

  static OutputBlock Text(std::string t) { return {BlockKind::kText, std::move(t), {}, {}}; }
  static OutputBlock Thinking(std::string t) { return {BlockKind::kThinking, std::move(t), {}, {}}; }
  static OutputBlock Call(ToolCall c) { return {BlockKind::kToolCall, {}, std::move(c), {}}; }
  static OutputBlock Error(std::string message, std::string raw) {
    return {BlockKind::kError, std::move(message), {}, std::move(raw)};
  }
};

// Appends parser events to `blocks`, merging a text / thinking delta into the
// last block when that block has the same kind.
void AppendBlocks(std::vector<OutputBlock>& blocks, std::span<const OutputBlock> events);

// The blocks as a JSON array (docs/json/chat.schema.json, `blocks`):
//   {"type":"text","text":S} {"type":"thinking","text":S}
//   {"type":"tool_call","name":S,"arguments":S(JSON object text)[,"id":S]}
//   {"type":"error","message":S,"raw":S}
void WriteBlocksJson(JsonWriter& w, std::span<const OutputBlock> blocks);

// A readable one-line form for tests and logs: text("..."), tool_call(name, {...}).
std::string DebugString(const OutputBlock& block);

struct ReasoningMarkers {
  std::string open;   // "<think>", "<|channel>thought"
  std::string close;  // "</think>", "<channel|>"
  bool operator==(const ReasoningMarkers&) const = default;
};

enum class ToolCallSyntax : uint8_t { kNone, kTaggedJson, kQwenXml, kGemma4, kGranite, kLlama3 };

// "none", "tagged_json", "qwen_xml", "gemma4", "granite", "llama3".
std::string_view ToolCallSyntaxName(ToolCallSyntax syntax);

struct ChatCapabilities {
  bool reasoning = false;             // the model writes reasoning markers
  bool can_disable_thinking = false;  // the template reads `enable_thinking`
  bool tools = false;                 // the template reads `tools`
};

struct ChatSyntax {
  std::optional<ReasoningMarkers> reasoning;
  ToolCallSyntax tool_calls = ToolCallSyntax::kNone;
  // A marker that closes a Granite call list, read only when the template prints it
  // (<|/tool_call|>); "" when the list ends where its JSON ends.
  std::string tool_call_close;
  ChatCapabilities capabilities;

  // True when the rendered prompt (generation prompt included) ends inside an
  // open reasoning block, so generation starts in Thinking: Qwen3 / DeepSeek-R1
  // templates that end with "<think>\n". An open marker the prompt closes again
  // ("<think>\n\n</think>\n\n", thinking disabled) does not count.
  bool StartsInThinking(std::string_view prompt) const;
};

}  // namespace uaii::chat
