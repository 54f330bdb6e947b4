// uaii::ChatEngine: chat turns over a Generator — the model's chat template renders the
// OpenAI-style messages, the Generator reuses the KV cache of the conversation so far,
// and the reply streams out as Text / Thinking / ToolCall / Error events parsed from
// the model's raw text with the syntax the template uses. `uaii chat`, `generate --chat` and the C ABI's
// uaii_session_chat use it.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "uaii/chat_output.h"
#include "uaii/generation.h"

namespace uaii {

struct ChatEngineOptions {
  SessionOptions session;
  // A chat template to use instead of the model's: a .jinja file, a
  // tokenizer_config.json, or a directory holding one. Empty: the model's own.
  std::string chat_template_path;
};

// What a reply must do with the request's tools (OpenAI's tool_choice; "none" is a request
// without tools). kAuto: call tools or answer, as the model chooses. kRequired: call one
// of the tools; kFunction: call `function`. Both force the calls with a grammar in the
// model's own tool-call syntax (docs/chat.md), so they exclude ChatTurnRequest::grammar.
struct ToolChoice {
  enum class Mode : uint8_t { kAuto, kRequired, kFunction };
  Mode mode = Mode::kAuto;
  std::string function;   // kFunction: the tool's name
  bool parallel = false;  // forced calls: one or more calls (OpenAI's parallel_tool_calls); else exactly one
};

struct ChatTurnRequest {
  std::string messages_json;               // [{"role": "...", "content": "..."}, ...]
  std::optional<std::string> tools_json;   // [{"type": "function", "function": {...}}, ...]
  ToolChoice tool_choice;                  // kRequired / kFunction need tools_json
  std::optional<bool> think;               // enable_thinking, only when the caller chooses
  bool add_generation_prompt = true;
  int64_t max_tokens = 512;
  sampling::SamplingParams sampling = sampling::SamplingParams::Greedy();
  std::vector<std::string> stop;
  std::string grammar;  // GBNF the reply must follow (uaii/grammar.h); empty: none
  // Sees each generated token, after the events its text released; false cancels the
  // turn. Empty: none. (A server's live tokens/s counts tokens, not text events.)
  TokenCallback on_token = nullptr;
};

// Sees each reply event as it streams: text / thinking deltas, whole tool calls and
// errors (uaii/chat_output.h). Return false to cancel the turn.
using ChatEventCallback = std::function<bool(const chat::OutputBlock&)>;

struct ChatTurnResult {
  GenerationResult generation;          // generation.text is the raw reply, markers included
  std::vector<chat::OutputBlock> blocks;  // the reply as blocks (deltas merged)
  int64_t reasoning_tokens = 0;         // tokens produced inside reasoning blocks (asked for, or the template's default)
  bool started_in_thinking = false;     // the prompt ended inside an open reasoning block
};

class ChatEngine {
 public:
  static absl::StatusOr<std::unique_ptr<ChatEngine>> Create(std::shared_ptr<const Model> model,
                                                            const ChatEngineOptions& options);
  // Chat over an existing Generator (shared with plain generation, one KV cache).
  static absl::StatusOr<std::unique_ptr<ChatEngine>> Create(std::shared_ptr<Generator> generator,
                                                            const std::string& chat_template_path = "");

  // The prompt the template renders for `request` (what `uaii template` prints).
  absl::StatusOr<std::string> Render(const ChatTurnRequest& request) const;
  // The tokens Run evaluates as the prompt of `request`: Render's text, tokenized. Like
  // Render, const and safe to call from any thread while another thread runs the engine
  // (a server picks a slot by them before it takes one).
  absl::StatusOr<std::vector<TokenId>> PromptTokens(const ChatTurnRequest& request) const;
  // Render's text and PromptTokens' tokens made once, for a caller that needs the tokens
  // before it runs the turn (a server picks a slot by them): Run(request, prompt) then
  // neither renders nor tokenizes again. Const and thread-safe like Render. InvalidArgument
  // naming the cause for a tool_choice that cannot be forced (docs/chat.md).
  struct Prompt {
    std::string text;
    std::vector<TokenId> tokens;
    // The grammar forcing the request's tool calls (ToolChoice kRequired / kFunction), built
    // here so a bad tool_choice fails before a slot is taken; "" when nothing is forced.
    std::string tool_call_grammar;
  };
  absl::StatusOr<Prompt> Prepare(const ChatTurnRequest& request) const;
  absl::StatusOr<ChatTurnResult> Run(const ChatTurnRequest& request,
                                     const ChatEventCallback& on_event = nullptr);
  // Runs `request` with `prompt` from Prepare of this engine or of one with the same
  // model and template (a server's slots).
  absl::StatusOr<ChatTurnResult> Run(const ChatTurnRequest& request, Prompt prompt,
                                     const ChatEventCallback& on_event = nullptr);
  void Reset();
  // Reasoning markers, tool-call syntax and capabilities, read from the template.
  const chat::ChatSyntax& syntax() const;
  // Non-empty when the model carries no chat template and a built-in one stands in:
  // one line saying which and why (the CLI prints it).
  const std::string& template_note() const;
  Generator& generator();

  ~ChatEngine();

 private:
  struct Impl;
  explicit ChatEngine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// What `uaii template` renders: the model's chat template (the template of a GGUF
// file, or a directory's tokenizer_config.json / chat_template.jinja) applied to a
// conversation as Hugging Face's apply_chat_template does, without loading weights.
struct ChatRenderRequest {
  // A JSON array of OpenAI-style messages, or an object holding it under "messages".
  std::string messages_json;
  // A JSON array of tool declarations, or an object holding it under "tools".
  std::optional<std::string> tools_json;
  std::optional<bool> enable_thinking;  // set enable_thinking (and thinking) only when chosen
  bool add_generation_prompt = true;
  // Names the inputs in error messages ("messages file m.json").
  std::string messages_origin = "messages";
  std::string tools_origin = "tools";
};
absl::StatusOr<std::string> RenderChatTemplate(const std::string& model_path, const ChatRenderRequest& request);

// OK when `json` parses as a JSON array (and, with non_empty, holds an element);
// else InvalidArgument naming `origin` and what is wrong.
absl::Status CheckJsonArray(std::string_view json, std::string_view origin, bool non_empty = false);

}  // namespace uaii
