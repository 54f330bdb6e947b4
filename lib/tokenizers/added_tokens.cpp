#include "tokenizers/tokenizer_impl.h"

namespace uaii::tok {

void AddedTokenMatcher::Build(const std::vector<AddedToken>& tokens, bool normalized) {
  nodes_.assign(1, Node{});
  edges_.clear();
  for (size_t t = 0; t < tokens.size(); ++t) {
    const AddedToken& tk = tokens[t];
    if (tk.normalized != normalized || tk.content.empty()) continue;
    int32_t node = 0;
    for (char ch : tk.content) {
      const uint64_t key = (static_cast<uint64_t>(node) << 8) | static_cast<uint8_t>(ch);
      auto it = edges_.find(key);
      if (it == edges_.end()) {
        nodes_.push_back(Node{});
        it = edges_.emplace(key, static_cast<int32_t>(nodes_.size() - 1)).first;
      }
      node = it->second;
    }
    // A later duplicate keeps the first registration unless it is less special.
    if (nodes_[node].token < 0 || (nodes_[node].special && !tk.special)) {
      nodes_[node].token = static_cast<int32_t>(t);
      nodes_[node].special = tk.special;
    }
  }
}

int32_t AddedTokenMatcher::LongestAt(std::string_view text, size_t pos, bool parse_special,
                                     size_t* len) const {
  int32_t node = 0, best = -1;
  for (size_t i = pos; i < text.size(); ++i) {
    auto it = edges_.find((static_cast<uint64_t>(node) << 8) | static_cast<uint8_t>(text[i]));
    if (it == edges_.end()) break;
    node = it->second;
    const Node& n = nodes_[node];
    if (n.token >= 0 && (parse_special || !n.special)) {
      best = n.token;
      *len = i + 1 - pos;
    }
  }
  return best;
}

}  // namespace uaii::tok
