// Rank-ordered BPE over one pre-tokenized word (Hugging Face's BPE model and
// llama.cpp's llm_tokenizer_bpe agree on it): start from the word's characters,
// repeatedly merge the adjacent pair with the lowest merge rank (leftmost on ties)
// until no pair is in the merge table. A heap with lazy invalidation keeps long
// words (Gemma/Llama-2 style inputs without word splitting) at O(n log n).
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "tokenizers/vocab.h"

namespace uaii::tok {

class BpeModel {
 public:
  // merges: pairs of pieces in rank order. Fails naming a merge whose piece or
  // result is not in the vocabulary when `strict` (HF rejects those; llama.cpp
  // skips them).
  absl::Status Init(const Vocab* vocab,
                    const std::vector<std::pair<std::string_view, std::string_view>>& merges,
                    bool strict);
  bool ignore_merges = false;  // a word found whole in the vocabulary is one token
  bool byte_fallback = true;   // unknown characters become <0xHH> tokens when present
  TokenId unk = kNoToken;
  bool fuse_unk = false;
  // gemma4: a word made only of newlines is one token when the vocabulary has it.
  bool whole_newline_runs = false;

  void Encode(std::string_view word, std::vector<TokenId>& out) const;

 private:
  struct Merge { uint32_t rank; TokenId result; };
  static uint64_t Key(TokenId a, TokenId b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }
  const Vocab* vocab_ = nullptr;
  absl::flat_hash_map<uint64_t, Merge> merges_;
};

}  // namespace uaii::tok
