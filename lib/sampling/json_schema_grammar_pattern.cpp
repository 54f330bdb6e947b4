// A JSON Schema "pattern" as GBNF, translating llama.cpp's regex subset 1:1
// (_visit_pattern / _pattern_to_rule in common/json-schema-to-grammar.cpp): the regex
// syntax maps onto GBNF's almost token by token; {m,n} repetitions get a sub-rule for
// their operand. The match is over the string's raw JSON text (escapes are not decoded).
#include <functional>
#include <limits>
#include <set>
#include <unordered_map>
#include <utility>

#include "sampling/json_schema_grammar.h"
#include "sampling/json_schema_grammar_rules.h"
#include "sampling/json_schema_grammar_schema.h"
#include "util/str_cat.h"

namespace uaii::sampling::json_schema {
namespace {

// A valid regex with no grammar equivalent: the pattern then accepts any string.
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Not a valid regex: the conversion fails.
struct Invalid : std::runtime_error {
  using std::runtime_error::runtime_error;
};

constexpr int kMaxPatternDepth = 100;  // llama.cpp's MAX_PATTERN_DEPTH: deeper groups are unsupported

bool IsNonLiteral(char c) { return std::string_view("|.()[]{}*+?^$").find(c) != std::string_view::npos; }
bool EscapedInRegexOnly(char c) { return std::string_view("^$.[]()|{}*+?").find(c) != std::string_view::npos; }

bool IsHex(char h) { return (h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F'); }

// Length of the GBNF-compatible escape at `pos` (\xHH \uHHHH \UHHHHHHHH \t \r \n \\ \" \[ \] \-), 0 if none.
size_t GbnfEscapeLength(const std::string& p, size_t pos) {
  if (pos + 1 >= p.size() || p[pos] != '\\') return 0;
  size_t n_hex = 0;
  switch (p[pos + 1]) {
    case 'x': n_hex = 2; break;
    case 'u': n_hex = 4; break;
    case 'U': n_hex = 8; break;
    case 't': case 'r': case 'n': case '\\': case '"': case '[': case ']': case '-': return 2;
    default: return 0;
  }
  if (pos + 2 + n_hex > p.size()) return 0;
  for (size_t i = pos + 2; i < pos + 2 + n_hex; ++i)
    if (!IsHex(p[i])) return 0;
  return 2 + n_hex;
}

class PatternConverter {
 public:
  PatternConverter(RuleSet& rules, std::string sub_pattern, const std::string& name)
      : rules_(rules), p_(std::move(sub_pattern)), name_(name) {}

  std::string Convert() {
    std::string rule = ToRule(Transform());
    if (depth_ != 0) throw Invalid("unbalanced parentheses");
    return rule;
  }

 private:
  using Piece = std::pair<std::string, bool>;  // text, whether a literal (unquoted)

  static std::string ToRule(const Piece& piece) { return piece.second ? "\"" + piece.first + "\"" : piece.first; }

  // The pieces in order, consecutive literals merged, as one (non-literal) sequence.
  static Piece Join(const std::vector<Piece>& seq) {
    std::vector<std::string> parts;
    std::string literal;
    for (const Piece& piece : seq) {
      if (piece.second) {
        literal += piece.first;
        continue;
      }
      if (!literal.empty()) parts.push_back("\"" + literal + "\"");
      literal.clear();
      parts.push_back(piece.first);
    }
    if (!literal.empty()) parts.push_back("\"" + literal + "\"");
    std::string out;
    for (size_t i = 0; i < parts.size(); ++i) out += (i ? " " : "") + parts[i];
    return {out, false};
  }

  // One sequence, up to the ')' closing the current group or the end.
  Piece Transform() {
    std::vector<Piece> seq;
    while (i_ < p_.size()) {
      const char c = p_[i_];
      if (c == '.') {
        seq.emplace_back(rules_.Add("dot", "[^\\x0A\\x0D]"), false);
        ++i_;
      } else if (c == '(') {
        ++i_;
        if (i_ < p_.size() && p_[i_] == '?') {
          if (i_ + 1 < p_.size() && p_[i_ + 1] == ':') {
            i_ += 2;  // (?:...) is a plain group
          } else {
            throw Unsupported("unsupported group syntax");  // lookaround, named group, flags
          }
        }
        if (++depth_ > kMaxPatternDepth) throw Unsupported("pattern nesting too deep");
        seq.emplace_back(StrCat("(", ToRule(Transform()), ")"), false);
      } else if (c == ')') {
        ++i_;
        if (depth_ == 0) throw Invalid("unbalanced parentheses");
        --depth_;
        return Join(seq);
      } else if (c == '^' || c == '$') {
        throw Unsupported("anchor inside the pattern");
      } else if (c == '[') {
        std::string cls = "[";
        ++i_;
        while (i_ < p_.size() && p_[i_] != ']') {
          if (p_[i_] == '\\') {
            const size_t n = GbnfEscapeLength(p_, i_);
            if (n == 0) throw Unsupported("unsupported escape in character class: " + p_.substr(i_, 2));
            cls += p_.substr(i_, n);
            i_ += n;
          } else {
            cls += p_[i_++];
          }
        }
        if (i_ >= p_.size()) throw Invalid("unterminated character class");
        cls += ']';
        ++i_;
        seq.emplace_back(cls, false);
      } else if (c == '|') {
        seq.emplace_back("|", false);
        ++i_;
      } else if (c == '*' || c == '+' || c == '?') {
        if (seq.empty()) throw Invalid("nothing to repeat");
        seq.back() = {ToRule(seq.back()) + c, false};
        ++i_;
      } else if (c == '{') {
        Repeat(seq);
      } else {
        seq.emplace_back(Literal(c), true);
      }
    }
    return Join(seq);
  }

  // {m}, {m,}, {,n}, {m,n} on the last piece (a non-literal one becomes a sub-rule).
  void Repeat(std::vector<Piece>& seq) {
    const size_t close = p_.find('}', i_);
    if (close == std::string::npos) throw Unsupported("unterminated curly brackets");
    const std::string inner = p_.substr(i_ + 1, close - i_ - 1);
    i_ = close + 1;
    std::vector<std::string> nums;
    for (size_t start = 0;;) {
      const size_t comma = inner.find(',', start);
      nums.push_back(inner.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (nums.size() != 1 && nums.size() != 2) throw Unsupported("wrong number of values in curly brackets");
    int min_times = 0, max_times = std::numeric_limits<int>::max();
    try {  // std::stoi's reading (leading blanks, a sign, trailing text ignored), as llama.cpp's
      if (nums.size() == 1) {
        min_times = max_times = std::stoi(nums[0]);
      } else {
        if (!nums[0].empty()) min_times = std::stoi(nums[0]);
        if (!nums[1].empty()) max_times = std::stoi(nums[1]);
      }
    } catch (const std::logic_error&) {
      throw Unsupported("invalid number in curly brackets");
    }
    if (min_times < 0 || max_times < 0) throw Invalid("negative repetition count");  // llama.cpp writes an unparsable {-1}
    const int64_t limit = JsonSchemaLimits::kMaxRepetition;
    if (min_times > limit || (max_times != std::numeric_limits<int>::max() && max_times > limit))
      throw SchemaError(StrCat("pattern repetition {", inner, "} exceeds the limit of ", limit));
    if (seq.empty()) throw Invalid("nothing to repeat");
    auto& [sub, is_literal] = seq.back();
    if (!is_literal) {
      std::string& id = sub_rule_ids_[sub];
      if (id.empty()) id = rules_.Add(StrCat(name_, "-", sub_rule_ids_.size()), sub);
      sub = id;
    }
    sub = BuildRepetition(is_literal ? "\"" + sub + "\"" : sub, min_times, max_times);
    is_literal = false;
  }

  // A run of literal characters starting at `c` (an escape, or a plain character that
  // is not the operand of a following operator unless it comes first).
  std::string Literal(char c) {
    std::string literal;
    while (i_ < p_.size()) {
      if (p_[i_] == '\\') {
        if (i_ == p_.size() - 1) throw Invalid("trailing backslash");
        const char next = p_[i_ + 1];
        if (EscapedInRegexOnly(next)) {
          literal += next;
          i_ += 2;
        } else {
          const size_t n = GbnfEscapeLength(p_, i_);
          if (n == 0) throw Unsupported("unsupported escape: " + p_.substr(i_, 2));
          literal += p_.substr(i_, n);
          i_ += n;
        }
      } else if (p_[i_] == '"') {
        literal += "\\\"";
        ++i_;
      } else if (!IsNonLiteral(p_[i_]) &&
                 (i_ == p_.size() - 1 || literal.empty() || p_[i_ + 1] == '.' || !IsNonLiteral(p_[i_ + 1]))) {
        literal += p_[i_++];
      } else {
        break;
      }
    }
    if (literal.empty()) throw Unsupported(std::string("unsupported character: ") + c);  // a stray ']' or '}'
    return literal;
  }

  RuleSet& rules_;
  const std::string p_;
  const std::string name_;
  size_t i_ = 0;
  int depth_ = 0;
  std::unordered_map<std::string, std::string> sub_rule_ids_;
};

}  // namespace

std::string PatternRule(RuleSet& rules, const std::string& pattern, const std::string& name) {
  auto snapshot = rules.Snapshot();
  try {
    if (pattern.size() < 2 || pattern.front() != '^' || pattern.back() != '$')
      throw Unsupported("not anchored with '^' and '$'");
    const std::string rule = PatternConverter(rules, pattern.substr(1, pattern.size() - 2), name).Convert();
    return rules.Add(name, "\"\\\"\" (" + rule + ") \"\\\"\"");
  } catch (const Unsupported&) {
    rules.Restore(std::move(snapshot));
    return rules.Add(name, rules.AddBuiltin("string", "string"));
  } catch (const Invalid& e) {
    throw SchemaError(StrCat("invalid pattern ", pattern, ": ", e.what()));
  }
}

}  // namespace uaii::sampling::json_schema
