#include "chat/output_syntax.h"

#include <array>

namespace uaii::chat {
namespace {

bool Contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// Reasoning pairs, in order of preference. `open`/`close` are what the parser
// matches in the output; `open_token`/`close_token` are the vocabulary pieces that
// show a model was trained on them even when its template never prints them.
struct ReasoningRow {
  std::string_view open, close, open_token, close_token;
};
constexpr std::array kReasoningRows = {
    ReasoningRow{"<think>", "</think>", "<think>", "</think>"},
    // Gemma 4: the model opens the thought channel and names it; the template's
    // strip_thinking macro removes <|channel>...<channel|> from history.
    ReasoningRow{"<|channel>thought", "<channel|>", "<|channel>", "<channel|>"},
};

// Tool-call syntaxes by the markup a template prints for assistant tool calls.
// Order matters: Qwen 3.5's XML also sits inside <tool_call>, so it is tried
// before tagged JSON. Every string of `needles` must appear.
struct ToolRow {
  ToolCallSyntax syntax;
  std::array<std::string_view, 2> needles;  // an empty second needle matches always
};
constexpr std::array kToolRows = {
    ToolRow{ToolCallSyntax::kGemma4, {"<|tool_call>", ""}},
    ToolRow{ToolCallSyntax::kQwenXml, {"<function=", "<parameter="}},
    ToolRow{ToolCallSyntax::kTaggedJson, {"<tool_call>", ""}},
    ToolRow{ToolCallSyntax::kGranite, {"<|tool_call|>", ""}},
    ToolRow{ToolCallSyntax::kLlama3, {"<|python_tag|>", ""}},
    // Llama 3.2 has no python tag; it asks for {"name": ..., "parameters": ...}.
    ToolRow{ToolCallSyntax::kLlama3, {"<|start_header_id|>", "\"parameters\""}},
};

}  // namespace

std::string_view ToolCallSyntaxName(ToolCallSyntax syntax) {
  switch (syntax) {
    case ToolCallSyntax::kNone: return "none";
    case ToolCallSyntax::kTaggedJson: return "tagged_json";
    case ToolCallSyntax::kQwenXml: return "qwen_xml";
    case ToolCallSyntax::kGemma4: return "gemma4";
    case ToolCallSyntax::kGranite: return "granite";
    case ToolCallSyntax::kLlama3: return "llama3";
  }
  return "?";
}

bool ChatSyntax::StartsInThinking(std::string_view prompt) const {
  if (!reasoning) return false;
  size_t open = prompt.rfind(reasoning->open);
  if (open == std::string_view::npos) return false;
  size_t close = prompt.rfind(reasoning->close);
  return close == std::string_view::npos || close < open;
}

ChatSyntax DetectChatSyntax(std::string_view source, const PieceLookup& has_piece) {
  ChatSyntax s;
  for (const ReasoningRow& r : kReasoningRows) {
    if (Contains(source, r.close) || Contains(source, r.open_token)) {
      s.reasoning = ReasoningMarkers{std::string(r.open), std::string(r.close)};
      break;
    }
  }
  if (!s.reasoning && has_piece) {
    for (const ReasoningRow& r : kReasoningRows) {
      if (has_piece(r.open_token) && has_piece(r.close_token)) {
        s.reasoning = ReasoningMarkers{std::string(r.open), std::string(r.close)};
        break;
      }
    }
  }
  for (const ToolRow& r : kToolRows) {
    if (Contains(source, r.needles[0]) && Contains(source, r.needles[1])) {
      s.tool_calls = r.syntax;
      break;
    }
  }
  if (s.tool_calls == ToolCallSyntax::kGranite && Contains(source, "<|/tool_call|>")) s.tool_call_close = "<|/tool_call|>";
  s.capabilities.reasoning = s.reasoning.has_value();
  s.capabilities.can_disable_thinking = Contains(source, "enable_thinking");
  // Jinja reads the variable as `tools` (if tools, tools | length, for tool in tools).
  s.capabilities.tools = Contains(source, "tools");
  return s;
}

}  // namespace uaii::chat
