// JSON Schema -> GBNF grammar (llama.cpp's grammar format, root rule `root`), for
// grammar-constrained sampling of JSON output. The grammar accepts the same language as
// the one llama.cpp's own converter builds (common/json-schema-to-grammar.cpp, the
// converter of llama-server's response_format and llama-cli's --json-schema), checked
// against it case by case (tests/golden/json_schema_grammar.json; docs/sampling.md).
//
// Supported keywords, as llama.cpp reads them: type (one name or a list), properties,
// required, additionalProperties (true / false / a schema; absent means none when
// properties are given, any otherwise), items (a schema, or a list: a tuple),
// prefixItems, minItems, maxItems, enum, const, anyOf, oneOf (as anyOf), allOf (objects'
// properties merged, enums intersected), $ref into the same document ("#/$defs/...",
// "#/definitions/...", any "#/..." path), minLength, maxLength, format (date, time,
// date-time, uuid, uuid1..uuid5), pattern (a regex subset: ^...$ anchored, literals,
// ., [...] classes, groups, (?:...), |, *, +, ?, {m}, {m,}, {m,n}; a pattern outside the
// subset accepts any string, as in llama.cpp), and for integers minimum, maximum,
// exclusiveMinimum, exclusiveMaximum (digit-range rules). Number bounds are ignored
// (as in llama.cpp). The empty schema accepts any JSON value. Whitespace between
// tokens is llama.cpp's rule `space`: nothing, one space, or one or two newlines and up
// to 20 spaces or tabs.
//
// Errors are InvalidArgument naming the cause and the schema path: invalid JSON, a
// schema that is not an object, an unrecognized type, an unresolvable or non-local $ref,
// a $ref cycle with nothing between (a -> b -> a), an invalid pattern (unbalanced
// parentheses, unterminated class, nothing to repeat, trailing backslash), keywords of
// the wrong JSON type, and the limits below.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace uaii::sampling {

// Limits against hostile schemas: past one, the conversion fails with InvalidArgument
// naming it (llama.cpp has none; real schemas stay far below).
struct JsonSchemaLimits {
  static constexpr size_t kMaxSchemaBytes = size_t{4} << 20;    // the schema's JSON text
  static constexpr int kMaxDepth = 128;                          // nested schemas (incl. $ref chains)
  static constexpr size_t kMaxNodes = 100'000;                   // schemas in the document
  static constexpr int64_t kMaxRepetition = 10'000;              // minItems, maxItems, minLength, maxLength, regex {m,n}
  static constexpr int64_t kMaxIntegerBound = 1'000'000'000'000'000'000;  // |minimum|, |maximum|, ...
  static constexpr size_t kMaxGrammarBytes = size_t{16} << 20;   // the GBNF text produced
};

// The GBNF grammar for `schema_json` (a JSON Schema as JSON text).
absl::StatusOr<std::string> JsonSchemaToGbnf(std::string_view schema_json);

namespace json_schema {
class RuleSet;
}

// A grammar assembled from several schemas and hand-written rules in one rule set, so
// names never collide (a taken name with another body gets "name0", "name1", ...): the
// way llama.cpp's common_grammar_builder (add_rule / add_schema) builds the grammars of
// tool calls. Errors are InvalidArgument, as JsonSchemaToGbnf's, with the same limits.
class GbnfBuilder {
 public:
  GbnfBuilder();
  ~GbnfBuilder();
  // The rules matching the schema, its top rule named after `name` (not "root" or a
  // built-in's name); returns the name used.
  absl::StatusOr<std::string> AddSchema(const std::string& name, std::string_view schema_json);
  // `body` (GBNF) under `name`, or a free variant of it; returns the name used.
  absl::StatusOr<std::string> AddRule(const std::string& name, const std::string& body);
  // A name no rule has yet: `name` made safe, or it with the first free number appended.
  // (For rules that refer to each other before all are added.)
  std::string FreeName(const std::string& name) const;
  // One of llama.cpp's built-in JSON rules ("space", "string", "number", "integer",
  // "boolean", "null", "value", "object", ...) with those it uses; returns its name.
  std::string AddBuiltin(const std::string& name);
  // `text` as a GBNF string literal.
  static std::string Literal(std::string_view text);
  std::string Format() const;

 private:
  std::unique_ptr<json_schema::RuleSet> rules_;
};

}  // namespace uaii::sampling
