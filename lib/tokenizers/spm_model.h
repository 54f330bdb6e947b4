// SentencePiece-style BPE as llama.cpp's llm_tokenizer_spm runs it on a GGUF `llama`
// vocabulary: start from UTF-8 characters, repeatedly merge the adjacent pair whose
// concatenation is a vocabulary piece with the highest score (leftmost on ties);
// symbols that are not pieces are re-split along the merges that built them, and
// what is left becomes <0xHH> byte tokens.
#pragma once
#include <string_view>
#include <vector>

#include "tokenizers/vocab.h"

namespace uaii::tok {

class SpmModel {
 public:
  explicit SpmModel(const Vocab* vocab, TokenId unk) : vocab_(vocab), unk_(unk) {}
  // `text` is already escaped (spaces as U+2581).
  void Encode(std::string_view text, std::vector<TokenId>& out) const;

 private:
  const Vocab* vocab_;
  TokenId unk_;
};

}  // namespace uaii::tok
