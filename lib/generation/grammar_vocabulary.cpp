#include "generation/grammar_vocabulary.h"

#include <string>
#include <vector>

#include "sampling/json_schema_grammar.h"
#include "uaii/grammar.h"
#include "util/str_cat.h"

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

absl::Status ValidateGrammar(std::string_view gbnf, std::string_view root) {
  return sampling::ParseGbnf(gbnf, root).status();
}

absl::StatusOr<std::string> JsonSchemaToGrammar(std::string_view schema_json) {
  absl::StatusOr<std::string> gbnf = sampling::JsonSchemaToGbnf(schema_json);
  if (!gbnf.ok()) return gbnf;
  // The converter writes llama.cpp's grammar text even where llama.cpp's loader cannot
  // take it (a minItems / minLength above the maximum gives {m,n} with n < m; a count
  // above 2000): refused here, naming both the schema and the grammar's error.
  if (absl::Status st = sampling::ParseGbnf(*gbnf).status(); !st.ok()) {
    return absl::InvalidArgumentError(StrCat("JSON schema: its grammar cannot be used (a minimum count above the "
                                             "maximum, or more than 2000 repetitions): ",
                                             std::string(st.message())));
  }
  return gbnf;
}

}  // namespace uaii
