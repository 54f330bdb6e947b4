#include "uaii/chat_output.h"

#include "util/json_writer.h"
#include "util/str_cat.h"

namespace uaii::chat {

std::string_view BlockKindName(BlockKind kind) {
  switch (kind) {
    case BlockKind::kText: return "text";
    case BlockKind::kThinking: return "thinking";
    case BlockKind::kToolCall: return "tool_call";
    case BlockKind::kError: return "error";
  }
  return "?";
}

void AppendBlocks(std::vector<OutputBlock>& blocks, std::span<const OutputBlock> events) {
  for (const OutputBlock& e : events) {
    bool is_delta = e.kind == BlockKind::kText || e.kind == BlockKind::kThinking;
    if (is_delta && !blocks.empty() && blocks.back().kind == e.kind) {
      blocks.back().text += e.text;
    } else {
      blocks.push_back(e);
    }
  }
}

void WriteBlocksJson(JsonWriter& w, std::span<const OutputBlock> blocks) {
  w.BeginArray();
  for (const OutputBlock& b : blocks) {
    w.BeginObject().Key("type").String(BlockKindName(b.kind));
    switch (b.kind) {
      case BlockKind::kText:
      case BlockKind::kThinking: w.Key("text").String(b.text); break;
      case BlockKind::kToolCall:
        w.Key("name").String(b.call.name).Key("arguments").String(b.call.arguments);
        if (!b.call.id.empty()) w.Key("id").String(b.call.id);
        break;
      case BlockKind::kError: w.Key("message").String(b.text).Key("raw").String(b.raw); break;
    }
    w.EndObject();
  }
  w.EndArray();
}

std::string DebugString(const OutputBlock& b) {
  std::string quoted;
  JsonWriter::AppendEscaped(quoted, b.kind == BlockKind::kToolCall ? b.call.name : b.text);
  switch (b.kind) {
    case BlockKind::kText: return StrCat("text(", quoted, ")");
    case BlockKind::kThinking: return StrCat("thinking(", quoted, ")");
    case BlockKind::kToolCall:
      return StrCat("tool_call(", quoted, ", ", b.call.arguments, b.call.id.empty() ? "" : ", id=", b.call.id, ")");
    case BlockKind::kError: {
      std::string raw;
      JsonWriter::AppendEscaped(raw, b.raw);
      return StrCat("error(", quoted, ", raw=", raw, ")");
    }
  }
  return "?";
}

}  // namespace uaii::chat
