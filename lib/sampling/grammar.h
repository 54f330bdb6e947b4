// Grammars for constrained sampling, in llama.cpp's GBNF format (grammars/README.md of
// llama.cpp), and the matcher that follows one code point at a time.
//
// GBNF accepted here: `name ::= alternatives` rules (names of [A-Za-z0-9-]; a later
// definition of a name replaces the earlier one, as in llama.cpp); `|` alternatives (an
// empty one matches nothing); "literals" and [character classes] ([^...] negated, a-z
// ranges) with the escapes \xHH \uHHHH \UHHHHHHHH \t \n \r \\ \" \[ \] \- ; `.` for any
// character; ( groups ); the postfix repetitions * + ? {m} {m,} {m,n}; `#` comments.
// Newlines end a rule except inside parentheses. A rule may not be left-recursive (it
// would never consume input), like llama.cpp, which rejects it too.
//
// The matcher is llama.cpp's pushdown automaton (src/llama-grammar.cpp): a set of stacks
// of positions in the rules, each stack's top a character element. Stacks are interned
// as parent-linked nodes and the sets of them as numbered states, so the same position
// reached twice is one state and the transitions between states can be cached: inside a
// JSON string the state after every character is the same one.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace uaii::sampling {

// A set of code points: ranges, or everything outside them (negated), or any (`.`).
struct CharSet {
  std::vector<std::pair<uint32_t, uint32_t>> ranges;  // inclusive [lo, hi]
  bool negated = false;
  bool Matches(uint32_t cp) const;
  // Whether some code point in [lo, hi] matches (a UTF-8 prefix's possible completions).
  bool MatchesSomeIn(uint32_t lo, uint32_t hi) const;
};

struct Grammar {
  enum class Kind : uint8_t { kEnd, kChar, kRuleRef };
  struct Element {
    Kind kind;
    uint32_t value;  // kChar: index into charsets; kRuleRef: rule index
  };
  // Every alternative of every rule, flattened; each alternative ends with a kEnd element.
  std::vector<Element> elements;
  std::vector<CharSet> charsets;
  std::vector<std::vector<uint32_t>> rule_alternatives;  // rule -> start index of each alternative
  std::vector<std::string> rule_names;                   // generated rules are named like llama.cpp's: root_1
  uint32_t root = 0;
};

// Limits on a grammar text (hostile or runaway input): past them ParseGbnf fails.
inline constexpr size_t kMaxGbnfBytes = 16u << 20;
inline constexpr size_t kMaxGrammarElements = 4u << 20;
inline constexpr uint32_t kMaxRepetition = 100000;  // m and n in {m,n}
inline constexpr int kMaxGroupNesting = 256;

// InvalidArgument naming the line and column (and what was expected) for syntax errors;
// an undefined rule, a missing root rule, left recursion, or a limit passed, named.
absl::StatusOr<std::shared_ptr<const Grammar>> ParseGbnf(std::string_view gbnf,
                                                        std::string_view root = "root");

// Follows a grammar over bytes (UTF-8, possibly split across calls). Copyable: a copy
// shares nothing and continues from the same point. Not thread-safe.
class GrammarMatcher {
 public:
  // A UTF-8 character cut short: the bits seen so far and how many bytes are missing.
  struct Partial {
    uint32_t value = 0;
    uint8_t remaining = 0;
    bool operator==(const Partial&) const = default;
  };
  using StateId = uint32_t;
  static constexpr StateId kDead = 0;  // no stack left: nothing more can match

  explicit GrammarMatcher(std::shared_ptr<const Grammar> grammar);

  // Consumes the bytes; false (state unchanged) when they leave the grammar.
  bool AcceptBytes(std::string_view bytes);
  // The input so far is a whole sentence of the grammar (it may also continue).
  bool IsComplete() const;
  // Nothing but the end can follow (every stack is empty).
  bool OnlyEndAllowed() const;
  // Too many stacks at once (a badly ambiguous grammar): the matcher gives up. Set with a
  // message by the step that passed kMaxStacks; the state is then dead.
  const absl::Status& error() const { return error_; }
  static constexpr size_t kMaxStacks = 8192;

  // The lower-level walk the token mask uses: the state after `byte` from (state, partial),
  // kDead when the byte cannot follow.
  StateId state() const { return state_; }
  Partial partial() const { return partial_; }
  StateId Step(StateId state, Partial& partial, uint8_t byte);
  // Whether a character starting with `partial`'s bytes could still follow in `state`.
  bool PartialCanFollow(StateId state, const Partial& partial) const;
  // Moves to a state the lower-level walk reached.
  void Set(StateId state, Partial partial) { state_ = state, partial_ = partial; }

 private:
  struct Node {
    uint32_t pos;     // element index: a kChar or kRuleRef element
    uint32_t parent;  // node below; 0 is the empty stack
  };
  uint32_t Intern(uint32_t pos, uint32_t parent);
  uint32_t Continue(uint32_t pos, uint32_t parent);  // node for pos, or parent if pos is kEnd
  const std::vector<uint32_t>& Closure(uint32_t node);
  StateId InternState(std::vector<uint32_t> nodes);
  StateId Transition(StateId state, uint32_t cp);

  std::shared_ptr<const Grammar> g_;
  std::vector<Node> nodes_;  // [0] is the empty stack
  absl::flat_hash_map<uint64_t, uint32_t> node_ids_;
  absl::flat_hash_map<uint32_t, std::vector<uint32_t>> closures_;
  std::vector<std::vector<uint32_t>> states_;  // sorted node ids; [0] empty (dead)
  absl::flat_hash_map<std::vector<uint32_t>, StateId> state_ids_;
  absl::flat_hash_map<uint64_t, StateId> transitions_;
  StateId state_ = kDead;
  Partial partial_;
  absl::Status error_;
};

}  // namespace uaii::sampling
