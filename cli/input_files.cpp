#include "input_files.h"

#include <fstream>
#include <sstream>

#include "uaii/grammar.h"
#include "uaii/str_cat.h"

namespace uaii::cli {

absl::StatusOr<std::string> ReadFile(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat("cannot open ", what, " ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

absl::StatusOr<std::string> GrammarFromArgs(const Args& args) {
  const bool gbnf = args.has("--grammar"), schema = args.has("--json-schema");
  if (gbnf && schema) return absl::InvalidArgumentError("--grammar and --json-schema exclude each other");
  if (!gbnf && !schema) return std::string();
  const std::string path = args.get(gbnf ? "--grammar" : "--json-schema");
  auto text = ReadFile(path, gbnf ? "grammar file" : "JSON schema file");
  if (!text.ok()) return text.status();
  absl::StatusOr<std::string> grammar = gbnf ? *std::move(text) : JsonSchemaToGrammar(*text);
  if (grammar.ok()) {
    if (absl::Status st = ValidateGrammar(*grammar); !st.ok()) grammar = st;
  }
  if (!grammar.ok()) {
    return absl::InvalidArgumentError(StrCat(path, ": ", std::string(grammar.status().message())));
  }
  return grammar;
}

}  // namespace uaii::cli
