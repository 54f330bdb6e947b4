// Splits a model's reply into Text, Thinking, ToolCall and Error blocks while it
// streams. Feed it each token's text (special tokens rendered, as the chat
// template wrote them); it returns what became certain:
//   * text and thinking as deltas, as soon as no marker can start in them
//     (a partial marker or an unfinished UTF-8 character at the end waits);
//   * a tool call when its markup is complete, or an Error (message + raw text)
//     when the markup cannot be read; parsing then goes on after it.
// Flush() ends the reply: an open thinking block ends, an unclosed tool call is
// read as far as it goes.
//
// Whitespace: a block's leading and trailing whitespace is dropped (templates put
// "\n" around markers: "<think>\n...\n</think>\n\n"), so whitespace between two
// tool calls makes no empty Text block. Whitespace inside a block is kept.
//
// A marker of a syntax the template does not use is plain text. A closing marker
// (reasoning or tool call) with no open block is dropped; the text around it stays
// (no retraction of text already returned).
//
// Granite opens its call list with <|tool_call|> or with the plain text <tool_call>
// the model writes instead; the JSON list ends the call, and the template's
// <|/tool_call|> after it (ChatSyntax::tool_call_close) is consumed when it follows.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "uaii/chat_output.h"
#include "chat/output_syntax.h"
#include "chat/tool_call_json.h"
#include "chat/tool_call_xml.h"

namespace uaii::chat {

// What the last fed piece belonged to, for usage (reasoning_tokens counts the
// tokens whose class is kThinking, reasoning markers included).
enum class PieceClass : uint8_t { kText, kThinking, kToolCall };

struct ToolCallMarkup;  // how a syntax opens and closes a call (output_parser.cpp)

class ChatOutputParser {
 public:
  // `starts_in_thinking`: the prompt ended inside an open reasoning block
  // (ChatSyntax::StartsInThinking), so the reply begins as Thinking.
  explicit ChatOutputParser(const ChatSyntax& syntax, bool starts_in_thinking = false);

  // Returns the events the piece completed (deltas merge with AppendBlocks).
  std::vector<OutputBlock> Feed(std::string_view piece);
  // Ends the reply and returns the remaining events. The parser may then be
  // Reset() for the next reply.
  std::vector<OutputBlock> Flush();
  void Reset(bool starts_in_thinking = false);
  // The request's declared parameter types (ToolParamTypesFromJson), so Qwen 3.5
  // XML values declared "string" stay strings ("12345" is not a number then).
  void SetToolParamTypes(ToolParamTypes types) { tool_types_ = std::move(types); }

  // Thinking when the piece began or ended inside a reasoning block (so both
  // markers count), else kToolCall when it touched tool-call markup, else kText.
  PieceClass last_piece_class() const { return last_class_; }
  bool in_thinking() const { return mode_ == Mode::kThinking; }

  // Feeds every piece and flushes: the merged blocks of a whole reply.
  static std::vector<OutputBlock> ParseAll(const ChatSyntax& syntax, bool starts_in_thinking,
                                           const std::vector<std::string_view>& pieces);

 private:
  enum class Mode : uint8_t { kText, kThinking, kToolTagged, kToolJson, kToolClose, kBareJson };
  // Llama 3.x's bare JSON call is only recognized where the reply starts, or
  // right after another one (";"-separated calls).
  enum class Bare : uint8_t { kOff, kAtStart, kAfterCall };
  void Process(bool final);
  bool StepText(bool final);
  bool StepThinking(bool final);
  bool StepToolTagged(bool final);
  bool StepToolJson(bool final);
  bool StepToolClose(bool final);
  bool StepBareJson(bool final);
  void Emit(BlockKind kind, std::string_view s);
  void EndBlock();
  void EmitCalls(std::string_view body, std::string raw, bool closed);
  static PieceClass Classify(Mode m);

  ChatSyntax syntax_;
  const ToolCallMarkup* markup_ = nullptr;  // the tool-call markup of syntax_, if any
  std::vector<std::string_view> open_markers_;  // reasoning open (first, if any), tool-call opens
  std::vector<std::string_view> close_markers_; // closers dropped in text (no block is open)
  std::vector<std::string_view> text_markers_;  // both: what text must not end inside
  Mode mode_ = Mode::kText;
  Bare bare_ = Bare::kOff;
  std::string buf_;          // input not yet decided
  std::string pending_ws_;   // trailing whitespace of the current block, held back
  bool skip_ws_ = true;      // drop whitespace at the start of the next block
  std::string tool_open_;    // the marker that opened the current tool call
  size_t close_scanned_ = 0; // kToolTagged: buf_ before this holds no closing marker
  JsonExtent json_;          // kToolJson / kBareJson: where the value ends
  ToolParamTypes tool_types_;
  std::vector<OutputBlock> out_;
  PieceClass last_class_ = PieceClass::kText;
};

}  // namespace uaii::chat
