// uaii/grammar.h: checking a GBNF grammar and turning a JSON Schema into one.
#include "uaii/grammar.h"

#include "sampling/grammar.h"
#include "sampling/json_schema_grammar.h"
#include "util/str_cat.h"

namespace uaii {

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
