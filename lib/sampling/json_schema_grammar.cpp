// JsonSchemaToGbnf: the schema tree (json_schema_grammar_schema.h) walked into named
// GBNF rules. Rule names and bodies follow llama.cpp's converter (common/json-schema-to-
// grammar.cpp) so that the language is the same, its quirks included: no whitespace
// before a ',' or after the last value, properties in the schema's order with the
// optional ones after the required ones (each optional one may be left out), other keys
// after those, and the key of an additional property may not be a prefix of a named one.
#include "sampling/json_schema_grammar.h"

#include <functional>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "sampling/json_schema_grammar_rules.h"
#include "sampling/json_schema_grammar_schema.h"
#include "util/str_cat.h"

namespace uaii::sampling {
namespace {

using json_schema::Kind;
using json_schema::Node;
using json_schema::RuleSet;
using json_schema::SchemaError;
using json_schema::StringFormat;

std::string Dash(const std::string& name) { return name.empty() ? "" : name + "-"; }

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += StrCat(i ? sep : "", parts[i]);
  return out;
}

class Converter {
 public:
  explicit Converter(RuleSet& rules) : rules_(rules) {}
  // Returns the name of the rule matching `node`, adding the rules it needs; `name` is
  // the schema's position ("" for the root, "a-b" for property b of property a, ...).
  std::string Visit(const Node& node, const std::string& name) {
    if (++depth_ > 4 * JsonSchemaLimits::kMaxDepth)
      throw SchemaError(StrCat("schemas nest deeper than the limit of ", JsonSchemaLimits::kMaxDepth));
    std::string rule = VisitKind(node, name);
    --depth_;
    return rule;
  }

  std::string Grammar() const { return rules_.Format(); }

 private:
  std::string VisitKind(const Node& node, const std::string& name) {
    const std::string rule_name = json_schema::IsReservedRuleName(name) ? name + "-" : name.empty() ? "root" : name;
    switch (node.kind) {
      case Kind::kRef: return rules_.Add(rule_name, ResolveRef(node));
      case Kind::kAnyOf: {
        std::vector<std::string> alts;
        for (size_t i = 0; i < node.children.size(); ++i)
          alts.push_back(Visit(*node.children[i], name + (name.empty() ? "alternative-" : "-") + std::to_string(i)));
        return rules_.Add(rule_name, Join(alts, " | "));
      }
      case Kind::kAllOf: return VisitAllOf(node, name, rule_name);
      case Kind::kConst: return rules_.Add(rule_name, json_schema::GbnfLiteral(node.values[0]));
      case Kind::kEnum: return rules_.Add(rule_name, StrCat("(", EnumAlternatives(node.values), ")"));
      case Kind::kObject: {
        if (node.properties.empty() && node.additional && node.additional->kind == Kind::kAny)
          return rules_.Add(rule_name, rules_.AddBuiltin("object", "object"));
        std::vector<std::pair<std::string, const Node*>> props;
        std::unordered_set<std::string> required;
        for (const auto& p : node.properties) {
          props.emplace_back(p.name, p.schema.get());
          if (p.required) required.insert(p.name);
        }
        return rules_.Add(rule_name, ObjectRule(props, required, name, node.additional.get()));
      }
      case Kind::kTuple: {
        std::string rule = "\"[\" space ";
        for (size_t i = 0; i < node.children.size(); ++i)
          rule += StrCat(i ? " \",\" space " : "", Visit(*node.children[i], StrCat(Dash(name), "tuple-", i)));
        return rules_.Add(rule_name, rule + " space \"]\"");
      }
      case Kind::kArray: {
        if (node.items->kind == Kind::kAny && node.min_items == 0 && node.max_items < 0) return Primitive(rule_name, "array");
        const std::string item = Visit(*node.items, Dash(name) + "item");
        const int max = node.max_items < 0 ? std::numeric_limits<int>::max() : node.max_items;
        return rules_.Add(rule_name,
                          "\"[\" space " + json_schema::BuildRepetition(item, node.min_items, max, "\",\" space") + " space \"]\"");
      }
      case Kind::kString: return StringRule(node, rule_name);
      case Kind::kInteger:
        if (node.minimum == std::numeric_limits<int64_t>::min() && node.maximum == std::numeric_limits<int64_t>::max())
          return Primitive(rule_name, "integer");
        return rules_.Add(rule_name, json_schema::IntegerRangeRule(node.minimum, node.maximum));
      case Kind::kNumber: return Primitive(rule_name, "number");
      case Kind::kBoolean: return Primitive(rule_name, "boolean");
      case Kind::kNull: return Primitive(rule_name, "null");
      case Kind::kAny: return rules_.Add(rule_name, rules_.AddBuiltin("value", "value"));
    }
    return "";
  }

  // A built-in type's rule: named after the type, except at the root.
  std::string Primitive(const std::string& rule_name, const std::string& type) {
    return rules_.AddBuiltin(rule_name == "root" ? "root" : type, type);
  }

  static std::string EnumAlternatives(const std::vector<std::string>& values) {
    std::vector<std::string> alts;
    for (const std::string& v : values) alts.push_back(json_schema::GbnfLiteral(v));
    return Join(alts, " | ");
  }

  std::string StringRule(const Node& node, const std::string& rule_name) {
    if (!node.pattern.empty()) return json_schema::PatternRule(rules_, node.pattern, rule_name);
    switch (node.format) {
      case StringFormat::kUuid: return Primitive(rule_name, "uuid");
      case StringFormat::kDate: return rules_.Add(rule_name, rules_.AddBuiltin("date-string", "date-string"));
      case StringFormat::kTime: return rules_.Add(rule_name, rules_.AddBuiltin("time-string", "time-string"));
      case StringFormat::kDateTime: return rules_.Add(rule_name, rules_.AddBuiltin("date-time-string", "date-time-string"));
      case StringFormat::kNone: break;
    }
    if (node.min_length > 0 || node.max_length >= 0) {
      const std::string char_rule = rules_.AddBuiltin("char", "char");
      const int max = node.max_length < 0 ? std::numeric_limits<int>::max() : node.max_length;
      return rules_.Add(rule_name, "\"\\\"\" " + json_schema::BuildRepetition(char_rule, node.min_length, max) + " \"\\\"\"");
    }
    return Primitive(rule_name, "string");
  }

  // "ref-<fragment>" for the target; a $ref met again while its target is being
  // converted (recursion) names that rule without converting it again.
  std::string ResolveRef(const Node& node) {
    const size_t hash = node.ref.find('#');
    std::string ref_name = "ref" + node.ref.substr(hash == std::string::npos ? 0 : hash + 1);
    ref_name = rules_.SafeName(ref_name);
    if (!rules_.Has(ref_name) && refs_being_resolved_.count(node.ref) == 0) {
      refs_being_resolved_.insert(node.ref);
      ref_name = Visit(*node.target, ref_name);
      refs_being_resolved_.erase(node.ref);
    }
    return ref_name;
  }

  // allOf: the object of every component's properties (those of anyOf components
  // optional, the others required), or the values common to every component's enum.
  std::string VisitAllOf(const Node& node, const std::string& name, const std::string& rule_name) {
    std::unordered_set<std::string> required;
    std::vector<std::pair<std::string, const Node*>> props;
    std::map<std::string, size_t> enum_counts;  // by literal, sorted as llama.cpp's std::map
    std::function<void(const Node&, bool)> add = [&](const Node& comp, bool is_required) {
      if (comp.kind == Kind::kRef) {
        if (comp.target) add(*comp.target, is_required);  // ref chains end (cycles are refused)
      } else if (comp.kind == Kind::kObject) {
        for (const auto& p : comp.properties) {
          props.emplace_back(p.name, p.schema.get());
          if (is_required) required.insert(p.name);
        }
      } else if (comp.kind == Kind::kEnum) {
        for (const std::string& v : comp.values) ++enum_counts[json_schema::GbnfLiteral(v)];
      }
    };
    for (const auto& child : node.children) {
      if (child->kind == Kind::kAnyOf) {
        for (const auto& alt : child->children) add(*alt, false);
      } else {
        add(*child, true);
      }
    }
    std::vector<std::string> common;
    for (const auto& [literal, count] : enum_counts)
      if (count == node.children.size()) common.push_back(literal);
    if (!common.empty()) return rules_.Add(rule_name, StrCat("(", Join(common, " | "), ")"));
    return rules_.Add(rule_name, ObjectRule(props, required, name, nullptr));
  }

  std::string ObjectRule(const std::vector<std::pair<std::string, const Node*>>& props,
                         const std::unordered_set<std::string>& required, const std::string& name, const Node* additional) {
    std::vector<std::string> required_props, optional_props, prop_names;
    std::unordered_map<std::string, std::string> kv_rules;  // property name ("*": any other) -> its key-value rule
    for (const auto& [prop_name, schema] : props) {
      const std::string value = Visit(*schema, Dash(name) + prop_name);
      kv_rules[prop_name] = rules_.Add(Dash(name) + prop_name + "-kv",
                                       json_schema::GbnfLiteral(json_schema::JsonQuote(prop_name)) + " space \":\" space " + value);
      (required.count(prop_name) ? required_props : optional_props).push_back(prop_name);
      prop_names.push_back(prop_name);
    }
    if (additional) {
      const std::string sub = Dash(name) + "additional";
      const std::string value =
          additional->kind != Kind::kAny ? Visit(*additional, sub + "-value") : rules_.AddBuiltin("value", "value");
      const std::string key = prop_names.empty()
                                  ? rules_.AddBuiltin("string", "string")
                                  : rules_.Add(sub + "-k", json_schema::NotStringsRule(prop_names, rules_.AddBuiltin("char", "char")));
      kv_rules["*"] = rules_.Add(sub + "-kv", key + " \":\" space " + value);
      optional_props.push_back("*");
    }
    if (required_props.empty() && optional_props.empty()) return "\"{\" space \"}\"";

    std::string rule = "\"{\" space ";
    for (size_t i = 0; i < required_props.size(); ++i) rule += (i ? " \",\" space " : "") + kv_rules[required_props[i]];
    if (!optional_props.empty()) {
      rule += " (";
      if (!required_props.empty()) rule += " \",\" space ( ";
      // rest[j]: what may follow once optional_props[j-1] is written: each later optional
      // property after a comma, or none; "*" any number of times. Built from the end, once.
      const size_t n = optional_props.size();
      std::vector<std::string> rest(n + 1);  // rest[j] for j in 1..n-1: a rule name; rest[n]: ""
      for (size_t j = n - 1; j >= 1; --j) {
        const std::string& k = optional_props[j];
        const std::string comma = "( \",\" space " + kv_rules[k] + " )";
        std::string body = comma + (k == "*" ? "*" : "?");
        if (j + 1 < n) body += " " + rest[j + 1];
        rest[j] = rules_.Add(Dash(name) + optional_props[j - 1] + "-rest", body);
      }
      for (size_t i = 0; i < n; ++i) {
        const std::string& k = optional_props[i];
        std::string alt = kv_rules[k] + (k == "*" ? " ( \",\" space " + kv_rules[k] + " )*" : "");
        if (i + 1 < n) alt += " " + rest[i + 1];
        rule += (i ? " | " : "") + alt;
      }
      if (!required_props.empty()) rule += " )";
      rule += " )?";
    }
    return rule + " space \"}\"";
  }

  RuleSet& rules_;
  std::unordered_set<std::string> refs_being_resolved_;
  int depth_ = 0;
};

}  // namespace

absl::StatusOr<std::string> JsonSchemaToGbnf(std::string_view schema_json) {
  try {
    json_schema::Document doc = json_schema::ParseSchema(schema_json);
    RuleSet rules;
    Converter converter(rules);
    converter.Visit(*doc.root, "");
    return converter.Grammar();
  } catch (const SchemaError& e) {
    return absl::InvalidArgumentError(e.what());
  }
}

GbnfBuilder::GbnfBuilder() : rules_(std::make_unique<RuleSet>()) {}
GbnfBuilder::~GbnfBuilder() = default;

absl::StatusOr<std::string> GbnfBuilder::AddSchema(const std::string& name, std::string_view schema_json) {
  if (name.empty() || json_schema::IsReservedRuleName(name))
    return absl::InvalidArgumentError(StrCat("a schema's rule needs a name other than \"", name, "\""));
  try {
    json_schema::Document doc = json_schema::ParseSchema(schema_json);
    Converter converter(*rules_);
    return converter.Visit(*doc.root, name);
  } catch (const SchemaError& e) {
    return absl::InvalidArgumentError(e.what());
  }
}

absl::StatusOr<std::string> GbnfBuilder::AddRule(const std::string& name, const std::string& body) {
  try {
    return rules_->Add(name, body);
  } catch (const SchemaError& e) {
    return absl::InvalidArgumentError(e.what());
  }
}

std::string GbnfBuilder::FreeName(const std::string& name) const {
  const std::string safe = RuleSet::SafeName(name);
  if (!rules_->Has(safe)) return safe;
  for (int i = 0;; ++i)
    if (!rules_->Has(safe + std::to_string(i))) return safe + std::to_string(i);
}

std::string GbnfBuilder::AddBuiltin(const std::string& name) {
  return name == "space" ? name : rules_->AddBuiltin(name, name);  // every rule set holds `space`
}

std::string GbnfBuilder::Literal(std::string_view text) { return json_schema::GbnfLiteral(text); }

std::string GbnfBuilder::Format() const { return rules_->Format(); }

}  // namespace uaii::sampling
