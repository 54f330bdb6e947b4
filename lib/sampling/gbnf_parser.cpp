// ParseGbnf: llama.cpp's GBNF syntax (src/llama-grammar.cpp, llama_grammar_parser) into
// Grammar. Groups and repetitions become generated rules the way llama.cpp's do
// (x* is r ::= x r | ; x? is r ::= x | ; x{m,n} is m copies then nested optionals), so
// the language is the same; only the element layout is ours.
#include <algorithm>
#include <functional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "util/str_cat.h"
#include "sampling/grammar.h"

namespace uaii::sampling {
namespace {

struct Item {
  bool is_ref;
  uint32_t id;  // charset index or rule index
};
using Sequence = std::vector<Item>;
using Alternatives = std::vector<Sequence>;

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  absl::StatusOr<std::shared_ptr<const Grammar>> Run(std::string_view root_name) {
    SkipSpace(true);
    while (pos_ < text_.size()) {
      if (absl::Status s = ParseRule(); !s.ok()) return s;
      SkipSpace(true);
    }
    for (size_t r = 0; r < rules_.size(); ++r) {
      if (!defined_[r]) {
        return absl::InvalidArgumentError(StrCat("grammar: undefined rule '", names_[r], "'"));
      }
    }
    auto root = ids_.find(std::string(root_name));
    if (root == ids_.end()) {
      return absl::InvalidArgumentError(StrCat("grammar: no rule named '", root_name, "' (the start rule)"));
    }
    if (absl::Status s = CheckLeftRecursion(); !s.ok()) return s;
    return Flatten(root->second);
  }

 private:
  absl::Status Error(std::string_view what) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') ++line, col = 1; else ++col;
    }
    return absl::InvalidArgumentError(StrCat("grammar: ", what, " at line ", line, ", column ", col));
  }
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }

  // Spaces, tabs and comments; newlines too when `newlines` (between rules, inside groups).
  void SkipSpace(bool newlines) {
    while (!AtEnd()) {
      const char c = Peek();
      if (c == ' ' || c == '\t') {
        ++pos_;
      } else if (c == '#') {
        while (!AtEnd() && Peek() != '\r' && Peek() != '\n') ++pos_;
      } else if (newlines && (c == '\r' || c == '\n')) {
        ++pos_;
      } else {
        break;
      }
    }
  }

  uint32_t RuleId(std::string_view name) {
    auto [it, inserted] = ids_.try_emplace(std::string(name), static_cast<uint32_t>(rules_.size()));
    if (inserted) {
      rules_.emplace_back();
      names_.emplace_back(name);
      defined_.push_back(false);
    }
    return it->second;
  }
  // A rule the parser makes for a group or repetition, named after the rule being defined.
  uint32_t NewRule(Alternatives alts) {
    const uint32_t base = current_rule_;
    std::string name;
    do {
      name = StrCat(names_[base], "_", ++generated_[base]);
    } while (ids_.contains(name));
    const uint32_t id = RuleId(name);
    rules_[id] = std::move(alts);
    defined_[id] = true;
    return id;
  }
  uint32_t AddCharSet(CharSet cs) {
    charsets_.push_back(std::move(cs));
    return static_cast<uint32_t>(charsets_.size() - 1);
  }

  absl::Status ParseRule() {
    const size_t start = pos_;
    while (!AtEnd() && IsWordChar(Peek())) ++pos_;
    if (pos_ == start) return Error("expecting a rule name");
    const uint32_t id = RuleId(text_.substr(start, pos_ - start));
    current_rule_ = id;
    SkipSpace(false);
    if (text_.substr(pos_, 3) != "::=") return Error("expecting ::=");
    pos_ += 3;
    SkipSpace(true);
    absl::StatusOr<Alternatives> alts = ParseAlternatives(false, 0);
    if (!alts.ok()) return alts.status();
    rules_[id] = *std::move(alts);
    defined_[id] = true;
    if (!AtEnd()) {
      if (Peek() == '\r') ++pos_;
      if (Peek() != '\n') return Error("expecting newline or end");
      ++pos_;
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Alternatives> ParseAlternatives(bool nested, int depth) {
    Alternatives alts;
    while (true) {
      absl::StatusOr<Sequence> seq = ParseSequence(nested, depth);
      if (!seq.ok()) return seq.status();
      alts.push_back(*std::move(seq));
      if (Peek() != '|') break;
      ++pos_;
      SkipSpace(true);
    }
    return alts;
  }

  // One character of a literal or class: a UTF-8 sequence or an escape.
  absl::StatusOr<uint32_t> ParseChar() {
    if (AtEnd()) return Error("unexpected end of input");
    const unsigned char c = static_cast<unsigned char>(Peek());
    if (c == '\\') {
      ++pos_;
      const char e = Peek();
      ++pos_;
      int hex = 0;
      switch (e) {
        case 'x': hex = 2; break;
        case 'u': hex = 4; break;
        case 'U': hex = 8; break;
        case 't': return uint32_t{'\t'};
        case 'r': return uint32_t{'\r'};
        case 'n': return uint32_t{'\n'};
        case '\\': case '"': case '[': case ']': case '-': return static_cast<uint32_t>(e);
        default: --pos_; return Error(StrCat("unknown escape '\\", std::string(1, e), "'"));
      }
      uint32_t v = 0;
      for (int i = 0; i < hex; ++i, ++pos_) {
        const char h = Peek();
        int d = (h >= '0' && h <= '9') ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                : (h >= 'A' && h <= 'F') ? h - 'A' + 10 : -1;
        if (d < 0) return Error("expecting a hex digit in an escape");
        v = v * 16 + static_cast<uint32_t>(d);
      }
      if (v > 0x10FFFF) return Error("escape beyond U+10FFFF");
      return v;
    }
    int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || pos_ + n > text_.size()) return Error("invalid UTF-8");
    uint32_t v = n == 1 ? c : c & (0x7F >> n);
    for (int i = 1; i < n; ++i) {
      const unsigned char k = static_cast<unsigned char>(text_[pos_ + i]);
      if ((k >> 6) != 2) return Error("invalid UTF-8");
      v = (v << 6) | (k & 0x3F);
    }
    pos_ += n;
    return v;
  }

  absl::StatusOr<Sequence> ParseSequence(bool nested, int depth) {
    Sequence seq;
    size_t last_start = 0;  // the items the next repetition operator applies to
    bool have_last = false;
    while (!AtEnd()) {
      const char c = Peek();
      const size_t item_start = seq.size();
      if (c == '"') {
        ++pos_;
        while (Peek() != '"') {
          if (AtEnd()) return Error("unterminated literal");
          absl::StatusOr<uint32_t> ch = ParseChar();
          if (!ch.ok()) return ch.status();
          seq.push_back({false, AddCharSet(CharSet{{{*ch, *ch}}, false})});
        }
        ++pos_;
      } else if (c == '[') {
        ++pos_;
        CharSet cs;
        if (Peek() == '^') cs.negated = true, ++pos_;
        while (Peek() != ']') {
          if (AtEnd()) return Error("unterminated character class");
          absl::StatusOr<uint32_t> lo = ParseChar();
          if (!lo.ok()) return lo.status();
          uint32_t hi = *lo;
          if (Peek() == '-' && Peek(1) != ']' && pos_ + 1 < text_.size()) {
            ++pos_;
            absl::StatusOr<uint32_t> h = ParseChar();
            if (!h.ok()) return h.status();
            hi = *h;
          }
          cs.ranges.emplace_back(*lo, hi);
        }
        ++pos_;
        seq.push_back({false, AddCharSet(std::move(cs))});
      } else if (IsWordChar(c)) {
        const size_t start = pos_;
        while (!AtEnd() && IsWordChar(Peek())) ++pos_;
        seq.push_back({true, RuleId(text_.substr(start, pos_ - start))});
      } else if (c == '(') {
        if (depth >= kMaxGroupNesting) return Error("groups nested too deeply");
        ++pos_;
        SkipSpace(true);
        const uint32_t saved_rule = current_rule_;
        absl::StatusOr<Alternatives> alts = ParseAlternatives(true, depth + 1);
        if (!alts.ok()) return alts.status();
        current_rule_ = saved_rule;
        if (Peek() != ')') return Error("expecting ')'");
        ++pos_;
        seq.push_back({true, NewRule(*std::move(alts))});
      } else if (c == '.') {
        ++pos_;
        seq.push_back({false, AddCharSet(CharSet{{}, true})});
      } else if (c == '*' || c == '+' || c == '?' || c == '{') {
        if (!have_last) return Error(StrCat("expecting an item before '", std::string(1, c), "'"));
        uint32_t min = 0, max = 0;
        bool unbounded = false;
        ++pos_;
        if (c == '*') unbounded = true;
        else if (c == '+') min = 1, unbounded = true;
        else if (c == '?') max = 1;
        else {
          SkipSpace(false);
          absl::StatusOr<uint32_t> m = ParseInt();
          if (!m.ok()) return m.status();
          min = max = *m;
          SkipSpace(false);
          if (Peek() == ',') {
            ++pos_;
            SkipSpace(false);
            if (Peek() >= '0' && Peek() <= '9') {
              absl::StatusOr<uint32_t> n = ParseInt();
              if (!n.ok()) return n.status();
              max = *n;
              if (max < min) return Error("repetition {m,n} with n < m");
            } else {
              unbounded = true;
            }
            SkipSpace(false);
          }
          if (Peek() != '}') return Error("expecting '}'");
          ++pos_;
        }
        Sequence item(seq.begin() + static_cast<ptrdiff_t>(last_start), seq.end());
        seq.resize(last_start);
        if (absl::Status s = AppendRepetition(seq, std::move(item), min, max, unbounded); !s.ok()) return s;
        have_last = seq.size() > last_start;  // as in llama.cpp, "a**" repeats the repetition
        SkipSpace(nested);
        continue;
      } else if (c == '<' || c == '!') {
        return Error("token references (<...>, !<...>) are not supported");
      } else {
        break;
      }
      last_start = item_start;
      have_last = true;
      SkipSpace(nested);
    }
    return seq;
  }

  absl::StatusOr<uint32_t> ParseInt() {
    const size_t start = pos_;
    uint64_t v = 0;
    while (Peek() >= '0' && Peek() <= '9') {
      v = v * 10 + static_cast<uint64_t>(Peek() - '0');
      if (v > kMaxRepetition) return Error(StrCat("repetition count above ", kMaxRepetition));
      ++pos_;
    }
    if (pos_ == start) return Error("expecting an integer");
    return static_cast<uint32_t>(v);
  }

  absl::Status AppendRepetition(Sequence& seq, Sequence item, uint32_t min, uint32_t max, bool unbounded) {
    const size_t total = item.size() * static_cast<size_t>(std::max(min, max) + 1);
    element_budget_ += total;
    if (element_budget_ > kMaxGrammarElements) {
      return absl::InvalidArgumentError(StrCat("grammar: more than ", kMaxGrammarElements,
                                                     " elements after expanding repetitions"));
    }
    for (uint32_t i = 0; i < min; ++i) seq.insert(seq.end(), item.begin(), item.end());
    if (unbounded) {
      // r ::= item r |
      const uint32_t r = NewRule({});
      Sequence rec = item;
      rec.push_back({true, r});
      rules_[r] = {rec, {}};
      seq.push_back({true, r});
    } else if (max > min) {
      // innermost first: o1 ::= item | ; ok ::= item o(k-1) |
      uint32_t inner = NewRule({item, {}});
      for (uint32_t k = 1; k < max - min; ++k) {
        Sequence s = item;
        s.push_back({true, inner});
        inner = NewRule({s, {}});
      }
      seq.push_back({true, inner});
    }
    return absl::OkStatus();
  }

  // llama.cpp's detect_left_recursion: a rule reachable again at the head of its own
  // expansion (through nullable prefixes) would recurse without consuming input.
  absl::Status CheckLeftRecursion() const {
    const size_t n = rules_.size();
    std::vector<bool> nullable(n, false);
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t r = 0; r < n; ++r) {
        if (nullable[r]) continue;
        for (const Sequence& s : rules_[r]) {
          if (std::all_of(s.begin(), s.end(), [&](const Item& i) { return i.is_ref && nullable[i.id]; })) {
            nullable[r] = changed = true;
            break;
          }
        }
      }
    }
    // heads[r]: rules that can come first in r.
    std::vector<std::vector<uint32_t>> heads(n);
    for (size_t r = 0; r < n; ++r) {
      for (const Sequence& s : rules_[r]) {
        for (const Item& i : s) {
          if (!i.is_ref) break;
          heads[r].push_back(i.id);
          if (!nullable[i.id]) break;
        }
      }
    }
    // Iterative DFS colouring: 0 new, 1 on the path, 2 done.
    std::vector<uint8_t> colour(n, 0);
    for (size_t start = 0; start < n; ++start) {
      if (colour[start]) continue;
      std::vector<std::pair<uint32_t, size_t>> stack{{static_cast<uint32_t>(start), 0}};
      colour[start] = 1;
      while (!stack.empty()) {
        auto& [r, next] = stack.back();
        if (next < heads[r].size()) {
          const uint32_t h = heads[r][next++];
          if (colour[h] == 1) {
            return absl::InvalidArgumentError(StrCat("grammar: left recursion in rule '", names_[h], "'"));
          }
          if (colour[h] == 0) colour[h] = 1, stack.push_back({h, 0});
        } else {
          colour[r] = 2;
          stack.pop_back();
        }
      }
    }
    return absl::OkStatus();
  }

  std::shared_ptr<const Grammar> Flatten(uint32_t root) {
    auto g = std::make_shared<Grammar>();
    g->charsets = std::move(charsets_);
    g->rule_names = names_;
    g->root = root;
    g->rule_alternatives.resize(rules_.size());
    for (size_t r = 0; r < rules_.size(); ++r) {
      for (const Sequence& s : rules_[r]) {
        g->rule_alternatives[r].push_back(static_cast<uint32_t>(g->elements.size()));
        for (const Item& i : s) {
          g->elements.push_back({i.is_ref ? Grammar::Kind::kRuleRef : Grammar::Kind::kChar, i.id});
        }
        g->elements.push_back({Grammar::Kind::kEnd, 0});
      }
    }
    return g;
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::vector<Alternatives> rules_;
  std::vector<std::string> names_;
  std::vector<bool> defined_;
  absl::flat_hash_map<std::string, uint32_t> ids_;
  absl::flat_hash_map<uint32_t, uint32_t> generated_;
  std::vector<CharSet> charsets_;
  uint32_t current_rule_ = 0;
  size_t element_budget_ = 0;
};

}  // namespace

absl::StatusOr<std::shared_ptr<const Grammar>> ParseGbnf(std::string_view gbnf, std::string_view root) {
  if (gbnf.size() > kMaxGbnfBytes) {
    return absl::InvalidArgumentError(StrCat("grammar: ", gbnf.size(), " bytes, above the limit of ",
                                                   kMaxGbnfBytes));
  }
  return Parser(gbnf).Run(root);
}

}  // namespace uaii::sampling
