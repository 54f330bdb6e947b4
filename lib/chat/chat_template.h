// Chat templates as Hugging Face's apply_chat_template uses them: where a model
// keeps its template(s), which one a request picks, and the variables the template
// sees. Rendering goes through jinja::Template.
#pragma once
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "chat/interpreter.h"
#include "chat/value.h"

namespace uaii::chat {

// One chat request, in OpenAI shape: messages [{role, content, tool_calls?, ...}],
// tools [{type: "function", function: {...}}].
struct ChatRequest {
  jinja::Value messages;               // a list
  std::optional<jinja::Value> tools;   // set when the request declares tools
  bool add_generation_prompt = true;
  std::optional<bool> enable_thinking; // true only when the request enables thinking
  std::optional<std::string> bos_token, eos_token;
};

// The variables the template sees, as HF's render_jinja_template passes them plus the
// product's fixed choices: messages; tools only when the request declares at least one
// tool (else undefined, so `tools is defined` is false); documents (None);
// add_generation_prompt; bos_token / eos_token (only when the tokenizer has them);
// enable_thinking and thinking, both false unless the request enables thinking (a
// template's own default, e.g. Qwen 3 thinking on, never applies); preserve_thinking
// false. {% generation %} blocks render their body (parser.cpp).
jinja::Value BuildContext(const ChatRequest& request);
// The request declares at least one tool (what `tools` being defined and the
// "tool_use" template choice follow).
bool HasTools(const ChatRequest& request);

// Parses and renders `source` with BuildContext(request).
absl::StatusOr<std::string> RenderChat(const std::string& source, const ChatRequest& request,
                                       const jinja::RenderOptions& options = {});

// The templates a model carries, by name ("default" for the unnamed one), plus the
// special-token strings the template may print.
struct ModelTemplates {
  std::string origin;  // the file they came from, for messages
  std::map<std::string, std::string> named;
  std::optional<std::string> bos_token, eos_token;
  // Set when the file carries no template and a built-in one stands in (one line to
  // announce: which template, and the vocabulary marker that chose it).
  std::string builtin_note;
};

// From a GGUF file (tokenizer.chat_template, tokenizer.chat_template.NAME, BOS/EOS
// pieces of tokenizer.ggml.tokens) or a directory (tokenizer_config.json's
// chat_template as a string or a [{name, template}] list; else chat_template.jinja).
// A GGUF without a template gets the built-in one its vocabulary's turn markers choose
// (builtin_templates.h; `builtin_note` says so); otherwise `named` stays empty.
absl::StatusOr<ModelTemplates> LoadModelTemplates(const std::string& path);

// HF's choice: the only template; with several, "tool_use" when tools are given and
// it exists, else "default"; otherwise an error listing the names. NotFound (naming
// the file) when the model has no chat template.
absl::StatusOr<std::string> SelectTemplate(const ModelTemplates& templates, bool has_tools);

}  // namespace uaii::chat
