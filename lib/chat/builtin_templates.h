// Built-in chat templates for GGUF files that carry none (lib/chat/templates/, the
// model families' own Hugging Face templates): chosen by the vocabulary's turn
// markers, so `uaii chat` works on a model whose converter dropped its template.
#pragma once
#include <functional>
#include <string_view>

namespace uaii::chat {

struct BuiltinTemplate {
  std::string_view name;    // "gemma", "llama3", "chatml"
  std::string_view source;  // the Jinja text
  std::string_view marker;  // the vocabulary piece that chose it
};

// The first template whose turn markers are all in the vocabulary (Gemma's
// <start_of_turn> / <end_of_turn>, Llama 3's <|start_header_id|> / <|eot_id|>,
// ChatML's <|im_start|> / <|im_end|>); null when none fits.
const BuiltinTemplate* PickBuiltinTemplate(const std::function<bool(std::string_view piece)>& has_piece);
// By name; null when there is none.
const BuiltinTemplate* FindBuiltinTemplate(std::string_view name);

}  // namespace uaii::chat
