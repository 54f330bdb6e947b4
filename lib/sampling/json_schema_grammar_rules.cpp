#include "sampling/json_schema_grammar_rules.h"

#include <functional>
#include <limits>

#include "sampling/json_schema_grammar.h"
#include "sampling/json_schema_grammar_schema.h"
#include "util/str_cat.h"

namespace uaii::sampling::json_schema {
namespace {

struct Builtin {
  const char* body;
  std::vector<std::string> deps;
};

// llama.cpp's PRIMITIVE_RULES and STRING_FORMAT_RULES (common/json-schema-to-grammar.cpp).
const std::map<std::string, Builtin>& Builtins() {
  static const std::map<std::string, Builtin> kBuiltins = {
      {"boolean", {R"g(("true" | "false"))g", {}}},
      {"decimal-part", {R"g([0-9]{1,16})g", {}}},
      {"integral-part", {R"g([0] | [1-9] [0-9]{0,15})g", {}}},
      {"number", {R"g(("-"? integral-part) ("." decimal-part)? ([eE] [-+]? integral-part)?)g", {"integral-part", "decimal-part"}}},
      {"integer", {R"g(("-"? integral-part))g", {"integral-part"}}},
      {"value", {R"g(object | array | string | number | boolean | null)g", {"object", "array", "string", "number", "boolean", "null"}}},
      {"object", {R"g("{" space ( string ":" space value ("," space string ":" space value)* )? space "}")g", {"string", "value"}}},
      {"array", {R"g("[" space ( value ("," space value)* )? space "]")g", {"value"}}},
      {"uuid", {R"g("\"" [0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12} "\"")g", {}}},
      {"char", {R"g([^"\\\x7F\x00-\x1F] | [\\] (["\\bfnrt] | "u" [0-9a-fA-F]{4}))g", {}}},
      {"string", {R"g("\"" char* "\"")g", {"char"}}},
      {"null", {R"g("null")g", {}}},
      {"date", {R"g([0-9]{4} "-" ( "0" [1-9] | "1" [0-2] ) "-" ( "0" [1-9] | [1-2] [0-9] | "3" [0-1] ))g", {}}},
      {"time", {R"g(([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ( "." [0-9]{3} )? ( "Z" | ( "+" | "-" ) ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ))g", {}}},
      {"date-time", {R"g(date "T" time)g", {"date", "time"}}},
      {"date-string", {R"g("\"" date "\"")g", {"date"}}},
      {"time-string", {R"g("\"" time "\"")g", {"time"}}},
      {"date-time-string", {R"g("\"" date-time "\"")g", {"date-time"}}},
  };
  return kBuiltins;
}

// llama.cpp's whitespace between tokens: nothing, a space, or 1-2 newlines and up to 20 blanks.
constexpr const char* kSpaceRule = R"g(| " " | "\n"{1,2} [ \t]{0,20})g";

bool IsRuleNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

}  // namespace

std::string RuleSet::SafeName(const std::string& name) {
  std::string out;
  for (size_t i = 0; i < name.size();) {
    if (IsRuleNameChar(name[i])) {
      out += name[i++];
    } else {
      out += '-';
      while (i < name.size() && !IsRuleNameChar(name[i])) ++i;
    }
  }
  return out;
}

namespace {

// UTF-8 -> code points; stops at the first malformed sequence (as llama.cpp's trie does).
std::vector<uint32_t> CodePoints(const std::string& s) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = s[i];
    const int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size()) break;
    uint32_t cp = len == 1 ? c : c & (0x7F >> len);
    for (int k = 1; k < len; ++k) {
      const unsigned char cc = s[i + k];
      if ((cc >> 6) != 2) return out;
      cp = (cp << 6) | (cc & 0x3F);
    }
    out.push_back(cp);
    i += len;
  }
  return out;
}

std::string Utf8(uint32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

}  // namespace

RuleSet::RuleSet() { rules_["space"] = kSpaceRule; }

std::string RuleSet::Add(const std::string& name, const std::string& body) {
  bytes_ += name.size() + body.size();
  if (bytes_ > JsonSchemaLimits::kMaxGrammarBytes)
    throw SchemaError(StrCat("the grammar exceeds the limit of ", JsonSchemaLimits::kMaxGrammarBytes, " bytes"));
  const std::string safe = SafeName(name);
  auto it = rules_.find(safe);
  if (it == rules_.end() || it->second == body) {
    rules_[safe] = body;
    return safe;
  }
  for (int i = 0;; ++i) {
    const std::string key = safe + std::to_string(i);
    auto k = rules_.find(key);
    if (k == rules_.end() || k->second == body) {
      rules_[key] = body;
      return key;
    }
  }
}

std::string RuleSet::AddBuiltin(const std::string& name, const std::string& builtin) {
  const Builtin& b = Builtins().at(builtin);
  std::string added = Add(name, b.body);
  for (const std::string& dep : b.deps)
    if (!Has(dep)) AddBuiltin(dep, dep);
  return added;
}

std::string RuleSet::Format() const {
  std::string out;
  for (const auto& [name, body] : rules_) out += StrCat(name, " ::= ", body, "\n");
  return out;
}

bool IsReservedRuleName(const std::string& name) { return name == "root" || Builtins().count(name) > 0; }

std::string BuildRepetition(const std::string& item, int min, int max, const std::string& separator) {
  const bool has_max = max != std::numeric_limits<int>::max();
  if (max == 0) return "";
  if (min == 0 && max == 1) return item + "?";
  if (separator.empty()) {
    if (min == 1 && !has_max) return item + "+";
    if (min == 0 && !has_max) return item + "*";
    return StrCat(item, "{", min, ",", has_max ? std::to_string(max) : "", "}");
  }
  std::string result =
      item + " " + BuildRepetition("(" + separator + " " + item + ")", min == 0 ? 0 : min - 1, has_max ? max - 1 : max);
  return min == 0 ? "(" + result + ")?" : result;
}

namespace {

// llama.cpp's build_min_max_int, appending to `out`; `decimals_left` bounds the digits
// of an unbounded side, `top_level` says whether a leading zero is excluded.
void AppendIntegerRange(int64_t min, int64_t max, std::string& out, int decimals_left = 16, bool top_level = true) {
  const bool has_min = min != std::numeric_limits<int64_t>::min();
  const bool has_max = max != std::numeric_limits<int64_t>::max();
  auto digit_range = [&](char from, char to) {
    out += "[";
    out += from;
    if (from != to) {
      out += "-";
      out += to;
    }
    out += "]";
  };
  auto more_digits = [&](int min_digits, int max_digits) {
    out += "[0-9]";
    if (min_digits == max_digits && min_digits == 1) return;
    out += StrCat("{", min_digits);
    if (max_digits != min_digits) {
      out += ",";
      if (max_digits != std::numeric_limits<int>::max()) out += std::to_string(max_digits);
    }
    out += "}";
  };
  // Numbers of equal length from `from` to `to`, digit by digit.
  std::function<void(std::string_view, std::string_view)> uniform_range = [&](std::string_view from, std::string_view to) {
    size_t i = 0;
    while (i < from.size() && i < to.size() && from[i] == to[i]) ++i;
    if (i > 0) out += "\"" + std::string(from.substr(0, i)) + "\"";
    if (i >= from.size() || i >= to.size()) return;
    if (i > 0) out += " ";
    const size_t sub_len = from.size() - i - 1;
    if (sub_len == 0) {
      out += StrCat("[", std::string(1, from[i]), "-", std::string(1, to[i]), "]");
      return;
    }
    const std::string_view from_sub = from.substr(i + 1), to_sub = to.substr(i + 1);
    const std::string zeros(sub_len, '0'), nines(sub_len, '9');
    bool to_reached = false;
    out += "(";
    if (from_sub == zeros) {
      digit_range(from[i], static_cast<char>(to[i] - 1));
      out += " ";
      more_digits(static_cast<int>(sub_len), static_cast<int>(sub_len));
    } else {
      out += StrCat("[", std::string(1, from[i]), "] (");
      uniform_range(from_sub, nines);
      out += ")";
      if (from[i] < to[i] - 1) {
        out += " | ";
        if (to_sub == nines) {
          digit_range(static_cast<char>(from[i] + 1), to[i]);
          to_reached = true;
        } else {
          digit_range(static_cast<char>(from[i] + 1), static_cast<char>(to[i] - 1));
        }
        out += " ";
        more_digits(static_cast<int>(sub_len), static_cast<int>(sub_len));
      }
    }
    if (!to_reached) {
      out += " | ";
      digit_range(to[i], to[i]);
      out += " ";
      uniform_range(zeros, to_sub);
    }
    out += ")";
  };

  if (has_min && has_max) {
    if (min < 0 && max < 0) {
      out += "\"-\" (";
      AppendIntegerRange(-max, -min, out, decimals_left, true);
      out += ")";
      return;
    }
    if (min < 0) {
      out += "\"-\" (";
      AppendIntegerRange(0, -min, out, decimals_left, true);
      out += ") | ";
      min = 0;
    }
    std::string min_s = std::to_string(min);
    const std::string max_s = std::to_string(max);
    for (size_t digits = min_s.size(); digits < max_s.size(); ++digits) {
      uniform_range(min_s, std::string(digits, '9'));
      min_s = StrCat("1", std::string(digits, '0'));
      out += " | ";
    }
    uniform_range(min_s, max_s);
    return;
  }

  const int less_decimals = std::max(decimals_left - 1, 1);
  if (has_min) {
    if (min < 0) {
      out += "\"-\" (";
      AppendIntegerRange(std::numeric_limits<int64_t>::min(), -min, out, decimals_left, false);
      out += ") | [0] | [1-9] ";
      more_digits(0, decimals_left - 1);
    } else if (min == 0) {
      if (top_level) {
        out += "[0] | [1-9] ";
        more_digits(0, less_decimals);
      } else {
        more_digits(1, decimals_left);
      }
    } else if (min <= 9) {
      const char c = static_cast<char>('0' + min);
      const char range_start = top_level ? '1' : '0';
      if (c > range_start) {
        digit_range(range_start, static_cast<char>(c - 1));
        out += " ";
        more_digits(1, less_decimals);
        out += " | ";
      }
      digit_range(c, '9');
      out += " ";
      more_digits(0, less_decimals);
    } else {
      const std::string min_s = std::to_string(min);
      const int len = static_cast<int>(min_s.size());
      const char c = min_s[0];
      if (c > '1') {
        digit_range(top_level ? '1' : '0', static_cast<char>(c - 1));
        out += " ";
        more_digits(len, less_decimals);
        out += " | ";
      }
      digit_range(c, c);
      out += " (";
      AppendIntegerRange(std::stoll(min_s.substr(1)), std::numeric_limits<int64_t>::max(), out, less_decimals, false);
      out += ")";
      if (c < '9') {
        out += " | ";
        digit_range(static_cast<char>(c + 1), '9');
        out += " ";
        more_digits(len - 1, less_decimals);
      }
    }
    return;
  }
  if (max >= 0) {
    if (top_level) {
      out += "\"-\" [1-9] ";
      more_digits(0, less_decimals);
      out += " | ";
    }
    AppendIntegerRange(0, max, out, decimals_left, true);
  } else {
    out += "\"-\" (";
    AppendIntegerRange(-max, std::numeric_limits<int64_t>::max(), out, decimals_left, false);
    out += ")";
  }
}

}  // namespace

std::string IntegerRangeRule(int64_t min, int64_t max) {
  std::string out = "(";
  AppendIntegerRange(min, max, out);
  return out + ")";
}

std::string GbnfLiteral(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '\r': out += "\\r"; break;
      case '\n': out += "\\n"; break;
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      default: out += c;
    }
  }
  return out + "\"";
}

std::string NotStringsRule(const std::vector<std::string>& strings, const std::string& char_rule) {
  struct TrieNode {
    std::map<uint32_t, size_t> children;
    bool terminal = false;
  };
  std::vector<TrieNode> trie(1);
  for (const std::string& s : strings) {
    size_t at = 0;
    for (uint32_t cp : CodePoints(s)) {
      auto it = trie[at].children.find(cp);
      if (it == trie[at].children.end()) {
        trie.emplace_back();
        it = trie[at].children.emplace(cp, trie.size() - 1).first;
      }
      at = it->second;
    }
    trie[at].terminal = true;
  }
  std::string out = "[\"] ( ";
  // A depth-first walk with an explicit stack (a key may be long): at each node every
  // child character in code point order, then whatever is none of them.
  struct Frame {
    size_t node;
    std::map<uint32_t, size_t>::const_iterator next;
    std::string rejects;
  };
  std::vector<Frame> stack{{0, trie[0].children.begin(), ""}};
  while (!stack.empty()) {
    Frame& top = stack.back();
    const TrieNode& node = trie[top.node];
    if (top.next == node.children.end()) {
      if (!node.children.empty()) out += " | [^\"" + top.rejects + "] " + char_rule + "*";
      stack.pop_back();
      if (!stack.empty()) out += ")";
      continue;
    }
    const auto [cp, child] = *top.next++;
    if (!top.rejects.empty()) out += " | ";
    const std::string c = Utf8(cp);
    top.rejects += c;
    out += "[" + c + "]";
    if (!trie[child].children.empty()) {
      out += " (";
      stack.push_back({child, trie[child].children.begin(), ""});
    } else {
      out += " " + char_rule + "+";
    }
  }
  out += " )";
  if (!trie[0].terminal) out += "?";
  return out + " [\"]";
}

}  // namespace uaii::sampling::json_schema
