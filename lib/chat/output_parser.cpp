#include "chat/output_parser.h"

#include <algorithm>
#include <array>

#include "absl/status/statusor.h"
#include "chat/json.h"
#include "chat/tool_call_gemma4.h"
#include "chat/tool_call_json.h"
#include "chat/tool_call_python_tag.h"
#include "chat/tool_call_xml.h"
#include "util/str_cat.h"

namespace uaii::chat {

// How each syntax opens and closes a call, and how the body between reads.
// An empty `close` means the call ends where its JSON value ends (Granite).
enum class CallBody : uint8_t { kJsonOrXml, kGemma4, kJson, kPythonTag };
struct ToolCallMarkup {
  ToolCallSyntax syntax;
  std::string_view open, close;
  CallBody body;
  std::string_view alt_open = {};  // another opener models write instead ("" when none)
};

namespace {

constexpr std::string_view kSpace = " \t\r\n";

// Length of the longest prefix of `s` that does not end inside a UTF-8 character.
size_t Utf8SafeEnd(std::string_view s) {
  size_t n = s.size();
  for (size_t k = 1; k <= 4 && k <= n; ++k) {
    unsigned char c = static_cast<unsigned char>(s[n - k]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: look further back
    size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return len > k ? n - k : n;
  }
  return n;
}

// Where a marker may be starting at the end of `s`: the first i such that s[i..]
// is a proper prefix of one of `markers`; s.size() when none.
size_t HoldBack(std::string_view s, const std::vector<std::string_view>& markers) {
  size_t longest = 0;
  for (std::string_view m : markers) longest = std::max(longest, m.size());
  size_t start = s.size() >= longest ? s.size() - longest + 1 : 0;
  for (size_t i = start; i < s.size(); ++i) {
    std::string_view tail = s.substr(i);
    for (std::string_view m : markers)
      if (m.size() > tail.size() && m.substr(0, tail.size()) == tail) return i;
  }
  return s.size();
}

bool StartsLikeCall(std::string_view s) {
  size_t p = s.find_first_not_of(kSpace, 1);
  if (p == std::string_view::npos) return false;
  std::string_view rest = s.substr(p);
  for (std::string_view key : {"\"name\"", "\"function\"", "\"type\""})
    if (rest.substr(0, key.size()) == key) return true;
  return false;
}

}  // namespace

constexpr std::array<ToolCallMarkup, 5> kMarkups = {{
    {ToolCallSyntax::kTaggedJson, "<tool_call>", "</tool_call>", CallBody::kJsonOrXml},
    {ToolCallSyntax::kQwenXml, "<tool_call>", "</tool_call>", CallBody::kJsonOrXml},
    {ToolCallSyntax::kGemma4, "<|tool_call>", "<tool_call|>", CallBody::kGemma4},
    // Granite models also write the plain text <tool_call> instead of the token.
    {ToolCallSyntax::kGranite, "<|tool_call|>", "", CallBody::kJson, "<tool_call>"},
    // <|eom_id|> ends the message when a tool is to run; it is usually an
    // end-of-generation token, in which case Flush() closes the call.
    {ToolCallSyntax::kLlama3, "<|python_tag|>", "<|eom_id|>", CallBody::kPythonTag},
}};

ChatOutputParser::ChatOutputParser(const ChatSyntax& syntax, bool starts_in_thinking) : syntax_(syntax) {
  if (syntax_.reasoning) {
    open_markers_.push_back(syntax_.reasoning->open);
    close_markers_.push_back(syntax_.reasoning->close);
  }
  for (const ToolCallMarkup& m : kMarkups) {
    if (m.syntax == syntax_.tool_calls) {
      markup_ = &m;
      open_markers_.push_back(m.open);
      if (!m.alt_open.empty()) open_markers_.push_back(m.alt_open);
      if (!m.close.empty()) close_markers_.push_back(m.close);
      break;
    }
  }
  if (!syntax_.tool_call_close.empty()) close_markers_.push_back(syntax_.tool_call_close);
  text_markers_ = open_markers_;
  text_markers_.insert(text_markers_.end(), close_markers_.begin(), close_markers_.end());
  Reset(starts_in_thinking);
}

void ChatOutputParser::Reset(bool starts_in_thinking) {
  mode_ = starts_in_thinking && syntax_.reasoning ? Mode::kThinking : Mode::kText;
  bare_ = syntax_.tool_calls == ToolCallSyntax::kLlama3 && mode_ == Mode::kText ? Bare::kAtStart : Bare::kOff;
  buf_.clear();
  pending_ws_.clear();
  skip_ws_ = true;
  tool_open_.clear();
  out_.clear();
  last_class_ = PieceClass::kText;
}

PieceClass ChatOutputParser::Classify(Mode m) {
  switch (m) {
    case Mode::kThinking: return PieceClass::kThinking;
    case Mode::kText: return PieceClass::kText;
    default: return PieceClass::kToolCall;
  }
}

std::vector<OutputBlock> ChatOutputParser::Feed(std::string_view piece) {
  Mode before = mode_;
  buf_.append(piece);
  Process(false);
  PieceClass a = Classify(before), b = Classify(mode_);
  last_class_ = (a == PieceClass::kThinking || b == PieceClass::kThinking) ? PieceClass::kThinking
                : (a == PieceClass::kToolCall || b == PieceClass::kToolCall) ? PieceClass::kToolCall
                                                                               : PieceClass::kText;
  return std::exchange(out_, {});
}

std::vector<OutputBlock> ChatOutputParser::Flush() {
  Process(true);
  pending_ws_.clear();  // trailing whitespace of the reply
  buf_.clear();
  return std::exchange(out_, {});
}

std::vector<OutputBlock> ChatOutputParser::ParseAll(const ChatSyntax& syntax, bool starts_in_thinking,
                                                    const std::vector<std::string_view>& pieces) {
  ChatOutputParser p(syntax, starts_in_thinking);
  std::vector<OutputBlock> blocks;
  for (std::string_view piece : pieces) AppendBlocks(blocks, p.Feed(piece));
  AppendBlocks(blocks, p.Flush());
  return blocks;
}

void ChatOutputParser::Process(bool final) {
  while (true) {
    bool more = false;
    switch (mode_) {
      case Mode::kText: more = StepText(final); break;
      case Mode::kThinking: more = StepThinking(final); break;
      case Mode::kToolTagged: more = StepToolTagged(final); break;
      case Mode::kToolJson: more = StepToolJson(final); break;
      case Mode::kToolClose: more = StepToolClose(final); break;
      case Mode::kBareJson: more = StepBareJson(final); break;
    }
    if (!more) return;
  }
}

void ChatOutputParser::Emit(BlockKind kind, std::string_view s) {
  if (s.empty()) return;
  if (skip_ws_) {
    size_t b = s.find_first_not_of(kSpace);
    if (b == std::string_view::npos) return;
    s.remove_prefix(b);
    skip_ws_ = false;
  }
  size_t e = s.find_last_not_of(kSpace);
  if (e == std::string_view::npos) {
    pending_ws_.append(s);
    return;
  }
  std::string delta = std::exchange(pending_ws_, std::string(s.substr(e + 1)));
  delta.append(s.substr(0, e + 1));
  if (!out_.empty() && out_.back().kind == kind) {
    out_.back().text += delta;
  } else {
    out_.push_back(OutputBlock{kind, std::move(delta), {}, {}});
  }
}

void ChatOutputParser::EndBlock() {
  pending_ws_.clear();
  skip_ws_ = true;
}

bool ChatOutputParser::StepText(bool final) {
  if (bare_ != Bare::kOff) {
    size_t p = buf_.find_first_not_of(bare_ == Bare::kAfterCall ? " \t\r\n;" : " \t\r\n");
    if (p == std::string::npos) {
      buf_.clear();  // whitespace before the first block is dropped anyway
      return false;
    }
    buf_.erase(0, p);
    if (buf_[0] == '{') {
      mode_ = Mode::kBareJson;
      json_ = JsonExtent();
      return true;
    }
    bare_ = Bare::kOff;
  }
  // The earliest marker: an opener starts its block, a closer (nothing is open) is dropped.
  size_t hit = std::string::npos, which = 0;
  for (size_t i = 0; i < text_markers_.size(); ++i) {
    size_t pos = buf_.find(text_markers_[i]);
    if (pos < hit) hit = pos, which = i;
  }
  size_t n = hit;
  if (hit == std::string::npos) n = final ? buf_.size() : Utf8SafeEnd(std::string_view(buf_).substr(0, HoldBack(buf_, text_markers_)));
  Emit(BlockKind::kText, std::string_view(buf_).substr(0, n));
  buf_.erase(0, n);
  if (hit == std::string::npos) return false;
  std::string_view marker = text_markers_[which];
  buf_.erase(0, marker.size());
  if (which >= open_markers_.size()) return true;  // a closer with no open block
  EndBlock();
  if (syntax_.reasoning && which == 0) {
    mode_ = Mode::kThinking;
  } else {
    tool_open_ = std::string(marker);
    mode_ = markup_->close.empty() ? Mode::kToolJson : Mode::kToolTagged;
    close_scanned_ = 0;
    json_ = JsonExtent();
  }
  return true;
}

bool ChatOutputParser::StepThinking(bool final) {
  std::string_view close = syntax_.reasoning->close;
  size_t hit = buf_.find(close);
  size_t n = hit;
  if (hit == std::string::npos)
    n = final ? buf_.size() : Utf8SafeEnd(std::string_view(buf_).substr(0, HoldBack(buf_, {close})));
  Emit(BlockKind::kThinking, std::string_view(buf_).substr(0, n));
  buf_.erase(0, n);
  if (hit == std::string::npos) return false;
  buf_.erase(0, close.size());
  EndBlock();
  mode_ = Mode::kText;
  return true;
}

bool ChatOutputParser::StepToolTagged(bool final) {
  size_t hit = buf_.find(markup_->close, close_scanned_);
  if (hit == std::string::npos) {
    // The next search starts where a marker could still begin.
    close_scanned_ = buf_.size() >= markup_->close.size() ? buf_.size() - markup_->close.size() + 1 : 0;
    if (!final) return false;
    EmitCalls(buf_, tool_open_ + buf_, /*closed=*/false);
    buf_.clear();
    mode_ = Mode::kText;
    return false;
  }
  std::string_view body = std::string_view(buf_).substr(0, hit);
  EmitCalls(body, StrCat(tool_open_, body, markup_->close), /*closed=*/true);
  buf_.erase(0, hit + markup_->close.size());
  EndBlock();
  mode_ = Mode::kText;
  bare_ = Bare::kOff;
  return true;
}

bool ChatOutputParser::StepToolJson(bool final) {
  size_t p = buf_.find_first_not_of(kSpace);
  if (p == std::string::npos) {
    if (final) {
      out_.push_back(OutputBlock::Error(StrCat(tool_open_, " is followed by nothing"), tool_open_ + buf_));
      buf_.clear();
      mode_ = Mode::kText;
    }
    return false;
  }
  if (buf_[p] != '{' && buf_[p] != '[') {
    // Not a call after all: report the marker and read on as text.
    out_.push_back(OutputBlock::Error(StrCat("expected a JSON object or list after ", tool_open_), tool_open_));
    mode_ = Mode::kText;
    return true;
  }
  auto end = json_.Scan(std::string_view(buf_).substr(p));
  if (!end) {
    if (final) {
      EmitCalls(buf_, tool_open_ + buf_, /*closed=*/false);
      buf_.clear();
      mode_ = Mode::kText;
    }
    return false;
  }
  std::string_view body = std::string_view(buf_).substr(0, p + *end);
  EmitCalls(body, StrCat(tool_open_, body), /*closed=*/true);
  buf_.erase(0, p + *end);
  EndBlock();
  mode_ = syntax_.tool_call_close.empty() ? Mode::kText : Mode::kToolClose;
  return true;
}

bool ChatOutputParser::StepToolClose(bool final) {
  std::string_view close = syntax_.tool_call_close;
  const size_t p = buf_.find_first_not_of(kSpace);
  std::string_view rest = p == std::string::npos ? std::string_view() : std::string_view(buf_).substr(p);
  if (rest.substr(0, close.size()) == close) {
    buf_.erase(0, p + close.size());
  } else if (!final && close.substr(0, rest.size()) == rest) {
    return false;  // the closer may still be arriving
  }
  mode_ = Mode::kText;
  return true;
}

bool ChatOutputParser::StepBareJson(bool final) {
  auto as_text = [this] {
    bare_ = Bare::kOff;
    mode_ = Mode::kText;
    return true;
  };
  auto end = json_.Scan(buf_);
  if (!end) {
    // An object whose first key is not a string cannot be a call: stream it as text.
    size_t q = buf_.find_first_not_of(kSpace, 1);
    if (q != std::string::npos && buf_[q] != '"' && buf_[q] != '}') return as_text();
    if (!final) return false;
    if (!StartsLikeCall(buf_)) return as_text();
    out_.push_back(OutputBlock::Error("tool call JSON is not complete at the end of the output", buf_));
    buf_.clear();
    mode_ = Mode::kText;
    return false;
  }
  std::string_view body = std::string_view(buf_).substr(0, *end);
  auto value = jinja::ParseJson(body, "tool call");
  if (!value.ok() || !LooksLikeToolCall(*value)) {
    if (!value.ok() && StartsLikeCall(body)) {
      out_.push_back(OutputBlock::Error(std::string(value.status().message()), std::string(body)));
    } else {
      return as_text();
    }
  } else if (auto call = ToolCallFromValue(*value); call.ok()) {
    out_.push_back(OutputBlock::Call(*std::move(call)));
  } else {
    out_.push_back(OutputBlock::Error(std::string(call.status().message()), std::string(body)));
  }
  buf_.erase(0, *end);
  EndBlock();
  mode_ = Mode::kText;
  bare_ = Bare::kAfterCall;
  return true;
}

void ChatOutputParser::EmitCalls(std::string_view body, std::string raw, bool closed) {
  absl::StatusOr<std::vector<ToolCall>> calls;
  std::string_view trimmed = body.substr(std::min(body.size(), body.find_first_not_of(kSpace)));
  if (trimmed.empty()) {
    calls = absl::InvalidArgumentError(StrCat(tool_open_, " holds no call"));
  } else {
    switch (markup_->body) {
      case CallBody::kJsonOrXml:
        calls = trimmed.substr(0, 10) == "<function=" ? ToolCallsFromQwenXml(body, &tool_types_) : ToolCallsFromJson(body);
        break;
      case CallBody::kJson: calls = ToolCallsFromJson(body); break;
      case CallBody::kPythonTag: calls = ToolCallsFromPythonTag(body); break;
      case CallBody::kGemma4: {
        auto call = ToolCallFromGemma4(body);
        if (call.ok()) calls = std::vector<ToolCall>{*std::move(call)};
        else calls = call.status();
        break;
      }
    }
  }
  if (!calls.ok()) {
    std::string message(calls.status().message());
    if (!closed && !markup_->close.empty())
      message += StrCat(" (", tool_open_, " was not closed by ", markup_->close, " before the end of the output)");
    else if (!closed)
      message += StrCat(" (the call was cut off by the end of the output)");
    out_.push_back(OutputBlock::Error(std::move(message), std::move(raw)));
    return;
  }
  for (ToolCall& c : *calls) out_.push_back(OutputBlock::Call(std::move(c)));
}

}  // namespace uaii::chat
