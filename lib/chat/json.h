// JSON <-> jinja values. Parsing (simdjson) keeps object key order and tells
// integers from floats, as Python's json.loads does; dumping reproduces Python's
// json.dumps byte for byte (indent, separators, sort_keys, ensure_ascii).
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "chat/value.h"

namespace uaii::jinja {

// `what` names the input in errors ("messages file /x/m.json").
absl::StatusOr<Value> ParseJson(std::string_view text, std::string_view what);

struct JsonDumpOptions {
  bool ensure_ascii = true;
  std::optional<std::string> indent;  // nullopt: single line; "" (indent=0): newlines only
  std::optional<std::string> item_sep, key_sep;  // default (", ", ": ") or (",", ": ") with indent
  bool sort_keys = false;
};

// Throws JinjaError (TypeError "Object of type X is not JSON serializable").
std::string JsonDump(const Value& v, const JsonDumpOptions& opts);

}  // namespace uaii::jinja
