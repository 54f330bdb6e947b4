// The vocabulary shared by every scheme: pieces, types, scores, and the lookup of
// piece -> id (llama.cpp keeps the last id when a piece repeats; so do we).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "uaii/tokenizer.h"

namespace uaii::tok {

// Transparent hashing so lookups take std::string_view without a copy (the Debian
// Abseil build only does that for absl::string_view).
struct SvHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
struct SvEq {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const { return a == b; }
};

struct Vocab {
  std::vector<std::string> pieces;
  std::vector<TokenType> types;
  std::vector<float> scores;  // SentencePiece scores (empty when the source has none)
  absl::flat_hash_map<std::string, TokenId, SvHash, SvEq> index;
  TokenId byte_ids[256];      // "<0xHH>" tokens, kNoToken when absent

  void Resize(size_t n) {
    pieces.resize(n);
    types.resize(n, TokenType::kNormal);
  }
  // Builds `index` and `byte_ids` from `pieces`.
  void BuildIndex();
  TokenId Find(std::string_view piece) const {
    auto it = index.find(piece);
    return it == index.end() ? kNoToken : it->second;
  }
  size_t size() const { return pieces.size(); }
};

}  // namespace uaii::tok
