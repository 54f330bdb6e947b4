// The schema tree JsonSchemaToGbnf converts: the JSON Schema's text parsed (simdjson)
// into one node per schema, each of one kind, with every $ref resolved to its target.
// Which keyword decides a node's kind, and which keywords are checked, follow llama.cpp's
// common/json-schema.cpp, so that the same schemas convert and the same ones fail.
// Internal to lib/sampling.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace uaii::sampling::json_schema {

// A schema the converter refuses; the message names the cause (and the schema path).
struct SchemaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class Kind { kAny, kRef, kAnyOf, kAllOf, kConst, kEnum, kNull, kBoolean, kNumber, kInteger, kString, kArray, kTuple, kObject };
enum class StringFormat { kNone, kDate, kTime, kDateTime, kUuid };

struct Node;
using NodePtr = std::unique_ptr<Node>;

struct Property {
  std::string name;
  NodePtr schema;
  bool required = false;
};

struct Node {
  Kind kind = Kind::kAny;
  std::string ref;               // kRef: "#/..."
  const Node* target = nullptr;  // kRef: the node it names (owned by Document::refs)
  std::vector<NodePtr> children;     // kAnyOf, kAllOf: the alternatives; kTuple: the items in order
  std::vector<std::string> values;   // kConst (one), kEnum: each value as compact JSON text
  std::string pattern;                                    // kString
  StringFormat format = StringFormat::kNone;              // kString
  int min_length = 0, max_length = -1;                    // kString (-1: unbounded)
  NodePtr items;                                          // kArray
  int min_items = 0, max_items = -1;                      // kArray (-1: unbounded)
  int64_t minimum = std::numeric_limits<int64_t>::min();  // kInteger (inclusive; min: none)
  int64_t maximum = std::numeric_limits<int64_t>::max();  // kInteger (inclusive; max: none)
  std::vector<Property> properties;                       // kObject, in the schema's order
  NodePtr additional;  // kObject: the schema of other keys (kAny: any value); null: no other keys
};

struct Document {
  NodePtr root;
  std::map<std::string, NodePtr> refs;  // each $ref string -> its target
};

// Parses and checks `json_text`; throws SchemaError.
Document ParseSchema(std::string_view json_text);

// `s` as a JSON string literal, escaped as nlohmann::json's dump() escapes it (what
// llama.cpp writes into its grammars): \" \\ \b \f \n \r \t, other controls as \u00xx.
std::string JsonQuote(std::string_view s);

}  // namespace uaii::sampling::json_schema
