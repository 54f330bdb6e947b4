// The pieces of GBNF text JsonSchemaToGbnf assembles: the named rule set (names made
// safe and kept distinct), llama.cpp's built-in JSON rules, repetitions, integer ranges
// as digit rules, and the conversion of a regex pattern. Internal to lib/sampling.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace uaii::sampling::json_schema {

// The grammar's rules by name, printed sorted by name ("name ::= body" lines).
class RuleSet {
 public:
  RuleSet();
  // Adds `body` under `name` (runs of characters other than [a-zA-Z0-9-] become '-');
  // an existing rule of that name with another body keeps it, and the new one takes the
  // first free "name0", "name1", ... (or one with the same body). Returns the name used.
  std::string Add(const std::string& name, const std::string& body);
  bool Has(const std::string& name) const { return rules_.count(name) > 0; }
  // `name` with each run of characters other than [a-zA-Z0-9-] replaced by '-'.
  static std::string SafeName(const std::string& name);
  // A built-in rule (PrimitiveRule / format rule) under `name`, with the built-ins it uses.
  std::string AddBuiltin(const std::string& name, const std::string& builtin);
  std::string Format() const;

  std::map<std::string, std::string> Snapshot() const { return rules_; }
  void Restore(std::map<std::string, std::string> rules) { rules_ = std::move(rules); }

 private:
  std::map<std::string, std::string> rules_;
  size_t bytes_ = 0;  // of the bodies added so far, against JsonSchemaLimits::kMaxGrammarBytes
};

// Names the converter never gives a schema's rule as is ("root" and the built-ins).
bool IsReservedRuleName(const std::string& name);

// `item` repeated min..max times (max = INT_MAX: unbounded), `separator` between items.
std::string BuildRepetition(const std::string& item, int min, int max, const std::string& separator = "");

// Alternatives over decimal digits matching the integers in [min, max] (INT64_MIN /
// INT64_MAX: no bound; at least one bound), as llama.cpp's build_min_max_int writes them.
std::string IntegerRangeRule(int64_t min, int64_t max);

// A GBNF string literal of `text` (\r \n " \ escaped).
std::string GbnfLiteral(std::string_view text);

// A JSON string that is none of `strings` (llama.cpp's _not_strings, quirks included:
// a proper prefix of one of them is refused too).
std::string NotStringsRule(const std::vector<std::string>& strings, const std::string& char_rule);

// The rule for a JSON string matching `pattern` (an ECMA regex, ^...$ anchored), added to
// `rules` under `name`. A valid pattern outside the supported subset gives the rule of
// any string (as llama.cpp does); an invalid one throws SchemaError.
std::string PatternRule(RuleSet& rules, const std::string& pattern, const std::string& name);

}  // namespace uaii::sampling::json_schema
