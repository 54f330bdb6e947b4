// Files named on the command line: their contents, and the grammar flags read from them.
#pragma once
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "args.h"

namespace uaii::cli {

// FILE's bytes; NotFound "cannot open WHAT FILE" when it cannot be read.
absl::StatusOr<std::string> ReadFile(const std::string& path, std::string_view what);

// The GBNF grammar the flags ask for: --grammar FILE (GBNF) or --json-schema FILE (a
// JSON Schema, turned into GBNF); "" when neither is given. InvalidArgument naming the
// file when both are given, or when the grammar or schema is invalid.
absl::StatusOr<std::string> GrammarFromArgs(const Args& args);

}  // namespace uaii::cli
