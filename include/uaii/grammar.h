// Constrained output: GBNF grammars in llama.cpp's format (docs/structured_output.md)
// and JSON Schemas turned into one. A grammar goes into GenerationRequest::grammar or
// TokenSampler::Create; these calls check or build one ahead of time.
#pragma once
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace uaii {

// OK when `gbnf` parses and defines `root`; else InvalidArgument naming the cause and the
// line and column.
absl::Status ValidateGrammar(std::string_view gbnf, std::string_view root = "root");

// GBNF accepting the JSON documents `schema_json` (a JSON Schema) allows: the language
// llama.cpp's json_schema_to_grammar gives (docs/structured_output.md lists the
// keywords). InvalidArgument naming the cause for an invalid or unsupported schema.
absl::StatusOr<std::string> JsonSchemaToGrammar(std::string_view schema_json);

}  // namespace uaii
