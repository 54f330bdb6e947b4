// uaii::JsonSchemaToGrammar (uaii/grammar.h): the public name of the sampling library's
// converter (sampling/json_schema_grammar.h, llama.cpp's json_schema_to_grammar language).
#include "sampling/json_schema_grammar.h"
#include "uaii/grammar.h"

namespace uaii {

absl::StatusOr<std::string> JsonSchemaToGrammar(std::string_view schema_json) {
  return sampling::JsonSchemaToGbnf(schema_json);
}

}  // namespace uaii
