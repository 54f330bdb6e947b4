// GrammarMatcher: llama.cpp's stacks (llama_grammar_advance_stack / _accept) over
// interned nodes and states.
#include <algorithm>

#include "util/str_cat.h"
#include "sampling/grammar.h"

namespace uaii::sampling {

bool CharSet::Matches(uint32_t cp) const {
  bool in = ranges.empty() && negated;  // `.`: no ranges, negated
  if (!ranges.empty()) {
    in = false;
    for (const auto& [lo, hi] : ranges) {
      if (lo <= cp && cp <= hi) { in = true; break; }
    }
    if (negated) in = !in;
  }
  return in;
}

bool CharSet::MatchesSomeIn(uint32_t lo, uint32_t hi) const {
  if (!negated) {
    for (const auto& [a, b] : ranges) {
      if (a <= hi && lo <= b) return true;
    }
    return false;
  }
  // Negated: some code point of [lo, hi] lies outside every range.
  std::vector<std::pair<uint32_t, uint32_t>> sorted = ranges;
  std::sort(sorted.begin(), sorted.end());
  uint32_t next = lo;  // smallest candidate not yet known to be covered
  for (const auto& [a, b] : sorted) {
    if (a > next) break;
    if (b >= next) {
      if (b >= hi) return false;
      next = b + 1;
    }
  }
  return next <= hi;
}

GrammarMatcher::GrammarMatcher(std::shared_ptr<const Grammar> grammar) : g_(std::move(grammar)) {
  nodes_.push_back({0, 0});
  states_.emplace_back();  // kDead
  // The start: one stack per alternative of the root rule, advanced to character tops.
  std::vector<uint32_t> start;
  for (uint32_t alt : g_->rule_alternatives[g_->root]) {
    const std::vector<uint32_t>& c = Closure(Continue(alt, 0));
    start.insert(start.end(), c.begin(), c.end());
  }
  state_ = InternState(std::move(start));
}

uint32_t GrammarMatcher::Intern(uint32_t pos, uint32_t parent) {
  const uint64_t key = (static_cast<uint64_t>(pos) << 32) | parent;
  auto [it, inserted] = node_ids_.try_emplace(key, static_cast<uint32_t>(nodes_.size()));
  if (inserted) nodes_.push_back({pos, parent});
  return it->second;
}

uint32_t GrammarMatcher::Continue(uint32_t pos, uint32_t parent) {
  return g_->elements[pos].kind == Grammar::Kind::kEnd ? parent : Intern(pos, parent);
}

// Every stack `node` can become without consuming input whose top is a character element,
// plus the empty stack (0) when the rules below it can all end.
const std::vector<uint32_t>& GrammarMatcher::Closure(uint32_t node) {
  if (auto it = closures_.find(node); it != closures_.end()) return it->second;
  std::vector<uint32_t> out;
  std::vector<uint32_t> work{node};
  absl::flat_hash_map<uint32_t, bool> seen;
  while (!work.empty()) {
    const uint32_t x = work.back();
    work.pop_back();
    if (!seen.try_emplace(x, true).second) continue;
    if (x == 0) { out.push_back(0); continue; }
    const Node n = nodes_[x];
    const Grammar::Element e = g_->elements[n.pos];
    if (e.kind == Grammar::Kind::kChar) { out.push_back(x); continue; }
    // A rule reference: each alternative of the rule on top of what follows the reference.
    const uint32_t cont = Continue(n.pos + 1, n.parent);
    for (uint32_t alt : g_->rule_alternatives[e.value]) work.push_back(Continue(alt, cont));
  }
  std::sort(out.begin(), out.end());
  return closures_.emplace(node, std::move(out)).first->second;
}

GrammarMatcher::StateId GrammarMatcher::InternState(std::vector<uint32_t> nodes) {
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  if (nodes.empty()) return kDead;
  if (nodes.size() > kMaxStacks) {
    error_ = absl::ResourceExhaustedError(StrCat(
        "grammar: more than ", kMaxStacks, " parses at once (the grammar is too ambiguous)"));
    return kDead;
  }
  auto it = state_ids_.find(nodes);
  if (it != state_ids_.end()) return it->second;
  const StateId id = static_cast<StateId>(states_.size());
  states_.push_back(nodes);
  state_ids_.emplace(std::move(nodes), id);
  return id;
}

GrammarMatcher::StateId GrammarMatcher::Transition(StateId state, uint32_t cp) {
  if (state == kDead) return kDead;
  const uint64_t key = (static_cast<uint64_t>(state) << 32) | cp;
  if (auto it = transitions_.find(key); it != transitions_.end()) return it->second;
  std::vector<uint32_t> next;
  // Closure interns nodes, not states: states_ does not move until InternState below.
  for (uint32_t x : states_[state]) {
    if (x == 0) continue;  // an empty stack accepts nothing more
    const Node n = nodes_[x];
    if (!g_->charsets[g_->elements[n.pos].value].Matches(cp)) continue;
    const std::vector<uint32_t>& c = Closure(Continue(n.pos + 1, n.parent));
    next.insert(next.end(), c.begin(), c.end());
  }
  const StateId id = InternState(std::move(next));
  transitions_.emplace(key, id);
  return id;
}

GrammarMatcher::StateId GrammarMatcher::Step(StateId state, Partial& partial, uint8_t b) {
  if (state == kDead) return kDead;
  uint32_t cp;
  if (partial.remaining == 0) {
    if (b < 0x80) {
      cp = b;
    } else {
      // A lead byte starts a partial character (llama.cpp's decode_utf8 table).
      const int n = (b >> 5) == 6 ? 1 : (b >> 4) == 14 ? 2 : (b >> 3) == 30 ? 3 : -1;
      if (n < 0) return kDead;
      partial = {static_cast<uint32_t>(b & (0x3F >> n)), static_cast<uint8_t>(n)};
      return PartialCanFollow(state, partial) ? state : kDead;
    }
  } else {
    if ((b >> 6) != 2) return kDead;
    partial.value = (partial.value << 6) | (b & 0x3F);
    if (--partial.remaining > 0) return PartialCanFollow(state, partial) ? state : kDead;
    cp = partial.value;
    partial = {};
  }
  if (cp == 0) return kDead;  // llama.cpp ends a piece at NUL: never part of a match
  return Transition(state, cp);
}

bool GrammarMatcher::PartialCanFollow(StateId state, const Partial& partial) const {
  if (partial.remaining == 0) return true;
  // llama.cpp's llama_grammar_match_partial_char: the code points the bytes so far could
  // complete to, overlong forms excluded (a 7-bit character in two bytes never matches).
  if (partial.remaining == 1 && partial.value < 2) return false;
  const uint32_t shift = 6u * partial.remaining;
  uint32_t lo = partial.value << shift;
  const uint32_t hi = lo | ((1u << shift) - 1);
  if (lo == 0) lo = partial.remaining == 2 ? 0x800 : partial.remaining == 3 ? 0x10000 : lo;
  for (uint32_t x : states_[state]) {
    if (x != 0 && g_->charsets[g_->elements[nodes_[x].pos].value].MatchesSomeIn(lo, hi)) return true;
  }
  return false;
}

bool GrammarMatcher::AcceptBytes(std::string_view bytes) {
  StateId s = state_;
  Partial p = partial_;
  for (char c : bytes) {
    s = Step(s, p, static_cast<uint8_t>(c));
    if (s == kDead) return false;
  }
  state_ = s;
  partial_ = p;
  return true;
}

bool GrammarMatcher::IsComplete() const {
  if (partial_.remaining != 0 || state_ == kDead) return false;
  const std::vector<uint32_t>& nodes = states_[state_];
  return !nodes.empty() && nodes.front() == 0;  // sorted: the empty stack comes first
}

bool GrammarMatcher::OnlyEndAllowed() const {
  const std::vector<uint32_t>& nodes = states_[state_];
  return partial_.remaining == 0 && nodes.size() == 1 && nodes.front() == 0;
}

}  // namespace uaii::sampling
