// How a model marks reasoning and tool calls in what it writes, read from its chat
// template (and vocabulary) so the output parser knows what to look for.
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
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace uaii::chat {

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
  ChatCapabilities capabilities;

  // True when the rendered prompt (generation prompt included) ends inside an
  // open reasoning block, so generation starts in Thinking: Qwen3 / DeepSeek-R1
  // templates that end with "<think>\n". An open marker the prompt closes again
  // ("<think>\n\n</think>\n\n", thinking disabled) does not count.
  bool StartsInThinking(std::string_view prompt) const;
};

// True when `piece` is one token of the model's vocabulary (for a Tokenizer:
// PieceToId(piece) != kNoToken). May be empty: the template alone decides.
using PieceLookup = std::function<bool(std::string_view piece)>;

// Reasoning markers: the first pair the template mentions, else the first pair
// whose marker tokens are both in the vocabulary. Tool-call syntax: from the
// markup the template prints for assistant tool calls (first match of an ordered
// table, see output_syntax.cpp); kNone when the template shows none.
ChatSyntax DetectChatSyntax(std::string_view template_source, const PieceLookup& has_piece = {});

}  // namespace uaii::chat
