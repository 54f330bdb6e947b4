// What a chat reply is made of once the model's raw text is read: Text,
// Thinking (reasoning the template marks off), ToolCall and Error items, in the
// order the model wrote them. ChatOutputParser produces them while tokens stream.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace uaii {
class JsonWriter;
}

namespace uaii::chat {

enum class BlockKind : uint8_t { kText, kThinking, kToolCall, kError };

// "text", "thinking", "tool_call", "error" (the `type` field of --json output).
std::string_view BlockKindName(BlockKind kind);

struct ToolCall {
  std::string name;
  std::string arguments;  // a JSON object, compact UTF-8 ("{}" when the model gave none)
  std::string id;         // empty unless the model wrote one
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

}  // namespace uaii::chat
