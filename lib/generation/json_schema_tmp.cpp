#include "uaii/grammar.h"
namespace uaii { absl::StatusOr<std::string> JsonSchemaToGrammar(std::string_view) { return absl::UnimplementedError("tmp"); } }
