#include "generation/grammar_vocabulary.h"

#include <string>
#include <vector>

#include "uaii/grammar.h"

namespace uaii {

std::shared_ptr<const sampling::GrammarVocabulary> MakeGrammarVocabulary(const Tokenizer& tokenizer) {
  std::vector<std::string> bytes(tokenizer.vocab_size());
  for (size_t id = 0; id < bytes.size(); ++id) bytes[id] = tokenizer.TokenBytes(static_cast<TokenId>(id));
  return std::make_shared<const sampling::GrammarVocabulary>(std::move(bytes), tokenizer.end_of_generation_ids());
}

absl::StatusOr<std::unique_ptr<sampling::GrammarConstraint>> MakeGrammarConstraint(
    std::string_view gbnf, std::shared_ptr<const sampling::GrammarVocabulary> vocab) {
  auto grammar = sampling::ParseGbnf(gbnf);
  if (!grammar.ok()) return grammar.status();
  return std::make_unique<sampling::GrammarConstraint>(*std::move(grammar), std::move(vocab));
}

absl::Status ValidateGrammar(std::string_view gbnf, std::string_view root) {
  return sampling::ParseGbnf(gbnf, root).status();
}

}  // namespace uaii
