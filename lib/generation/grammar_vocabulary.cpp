#include "generation/grammar_vocabulary.h"

#include <string>
#include <vector>

namespace uaii {
namespace {

// The piece llama.cpp's grammar matches for a token (llama_vocab::token_to_piece with
// specials rendered): the decoded bytes, a control token's text, U+2585 for the unknown
// token, nothing for an unused one (never allowed).
std::string GrammarPiece(const Tokenizer& tokenizer, TokenId id) {
  switch (tokenizer.Type(id)) {
    case TokenType::kUnused: return {};
    case TokenType::kUnknown: return "\xE2\x96\x85";
    default: return std::string(tokenizer.TokenBytes(id));
  }
}

}  // namespace

std::shared_ptr<const sampling::GrammarVocabulary> MakeGrammarVocabulary(const Tokenizer& tokenizer) {
  std::vector<std::string> bytes(tokenizer.vocab_size());
  for (size_t id = 0; id < bytes.size(); ++id) bytes[id] = GrammarPiece(tokenizer, static_cast<TokenId>(id));
  return std::make_shared<const sampling::GrammarVocabulary>(std::move(bytes), tokenizer.end_of_generation_ids());
}

absl::StatusOr<std::unique_ptr<sampling::GrammarConstraint>> MakeGrammarConstraint(
    std::string_view gbnf, std::shared_ptr<const sampling::GrammarVocabulary> vocab) {
  auto grammar = sampling::ParseGbnf(gbnf);
  if (!grammar.ok()) return grammar.status();
  return std::make_unique<sampling::GrammarConstraint>(*std::move(grammar), std::move(vocab));
}

}  // namespace uaii
