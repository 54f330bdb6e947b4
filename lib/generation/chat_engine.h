// ChatEngine: chat turns over a Generator — the model's chat template renders the
// OpenAI-style messages, the Generator reuses the KV cache of the conversation so far,
// and the reply streams out as events. `uaii chat`, `generate --chat` and the C ABI's
// uaii_session_chat use it.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "chat/chat_template.h"
#include "generation/generator.h"

namespace uaii {

struct ChatEngineOptions {
  SessionOptions session;
  // A chat template to use instead of the model's: a .jinja file, a
  // tokenizer_config.json, or a directory holding one. Empty: the model's own.
  std::string chat_template_path;
};

struct ChatTurnRequest {
  std::string messages_json;               // [{"role": "...", "content": "..."}, ...]
  std::optional<std::string> tools_json;   // [{"type": "function", "function": {...}}, ...]
  std::optional<bool> think;               // enable_thinking, only when the caller chooses
  bool add_generation_prompt = true;
  int64_t max_tokens = 512;
  sampling::SamplingParams sampling = sampling::SamplingParams::Greedy();
  std::vector<std::string> stop;
};

enum class ChatEventKind { kText, kThinking, kToolCall, kError };
struct ChatEvent {
  ChatEventKind kind;
  std::string text;  // kToolCall: {"name": ..., "arguments": {...}} as JSON
};
// Return false to cancel the turn.
using ChatEventCallback = std::function<bool(const ChatEvent&)>;

struct ChatTurnResult {
  GenerationResult generation;
  std::vector<ChatEvent> events;   // the whole reply as blocks (deltas merged)
  int64_t reasoning_tokens = 0;
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
  absl::StatusOr<ChatTurnResult> Run(const ChatTurnRequest& request,
                                     const ChatEventCallback& on_event = nullptr);
  void Reset() { generator_->Reset(); }
  Generator& generator() { return *generator_; }

 private:
  ChatEngine() = default;
  std::shared_ptr<Generator> generator_;
  chat::ModelTemplates templates_;
};

}  // namespace uaii
