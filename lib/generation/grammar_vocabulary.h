// The vocabulary a grammar constrains: each token's bytes as llama.cpp's grammar sees
// them (its piece, control tokens as their text) and the end-of-generation ids.
#pragma once
#include <memory>

#include "sampling/grammar_constraint.h"
#include "uaii/tokenizer.h"

namespace uaii {

std::shared_ptr<const sampling::GrammarVocabulary> MakeGrammarVocabulary(const Tokenizer& tokenizer);

// A constraint for `gbnf` over the vocabulary (InvalidArgument when the grammar does not parse).
absl::StatusOr<std::unique_ptr<sampling::GrammarConstraint>> MakeGrammarConstraint(
    std::string_view gbnf, std::shared_ptr<const sampling::GrammarVocabulary> vocab);

}  // namespace uaii
