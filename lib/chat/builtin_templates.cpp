#include "chat/builtin_templates.h"

#include <array>

namespace uaii::chat {
namespace builtin {
extern const std::string_view kGemma, kLlama3, kChatml;  // builtin_templates_data.cpp (generated)
}  // namespace builtin

namespace {

struct Row {
  BuiltinTemplate t;
  std::array<std::string_view, 2> pieces;  // both must be in the vocabulary
};

const std::array<Row, 3>& Rows() {
  static const std::array<Row, 3> rows = {{
      {{"gemma", builtin::kGemma, "<start_of_turn>"}, {"<start_of_turn>", "<end_of_turn>"}},
      {{"llama3", builtin::kLlama3, "<|start_header_id|>"}, {"<|start_header_id|>", "<|eot_id|>"}},
      {{"chatml", builtin::kChatml, "<|im_start|>"}, {"<|im_start|>", "<|im_end|>"}},
  }};
  return rows;
}

}  // namespace

const BuiltinTemplate* PickBuiltinTemplate(const std::function<bool(std::string_view piece)>& has_piece) {
  for (const Row& r : Rows())
    if (has_piece(r.pieces[0]) && has_piece(r.pieces[1])) return &r.t;
  return nullptr;
}

const BuiltinTemplate* FindBuiltinTemplate(std::string_view name) {
  for (const Row& r : Rows())
    if (r.t.name == name) return &r.t;
  return nullptr;
}

}  // namespace uaii::chat
