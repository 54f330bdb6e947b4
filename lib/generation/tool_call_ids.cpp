#include "generation/tool_call_ids.h"

#include <string_view>

namespace uaii {

ToolCallIds::ToolCallIds() : rng_(std::random_device{}()) {}

std::string ToolCallIds::Next() {
  static constexpr std::string_view kChars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::uniform_int_distribution<size_t> pick(0, kChars.size() - 1);
  while (true) {
    std::string id = "call_";
    for (int i = 0; i < 24; ++i) id += kChars[pick(rng_)];
    if (issued_.insert(id).second) return id;
  }
}

void ToolCallIds::Assign(std::vector<chat::OutputBlock>& blocks) {
  for (auto& b : blocks)
    if (b.kind == chat::BlockKind::kToolCall) b.call.id = Next();
}

}  // namespace uaii
