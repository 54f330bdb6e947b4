#include "sampling/grammar_constraint.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "absl/strings/escaping.h"
#include "util/str_cat.h"

namespace uaii::sampling {

GrammarVocabulary::GrammarVocabulary(std::vector<std::string> token_bytes, std::vector<int32_t> eog_ids)
    : bytes_(std::move(token_bytes)), eog_(std::move(eog_ids)) {
  std::sort(eog_.begin(), eog_.end());
  // Tokens that can ever be allowed, in byte order: a prefix sorts before its extensions,
  // so each trie node's tokens and children are contiguous runs.
  for (size_t id = 0; id < bytes_.size(); ++id) {
    const std::string& b = bytes_[id];
    if (!b.empty() && b[0] != '\0' && !IsEndOfGeneration(static_cast<int32_t>(id))) {
      token_order_.push_back(static_cast<int32_t>(id));
    }
  }
  std::stable_sort(token_order_.begin(), token_order_.end(),
                   [&](int32_t a, int32_t b) { return bytes_[a] < bytes_[b]; });
  // Breadth-first: a node covers the sorted run [lo, hi) of tokens sharing its prefix of
  // length depth.
  struct Pending {
    uint32_t node, lo, hi, depth;
  };
  trie_.push_back({});
  std::vector<Pending> queue{{0, 0, static_cast<uint32_t>(token_order_.size()), 0}};
  for (size_t q = 0; q < queue.size(); ++q) {
    const Pending p = queue[q];
    uint32_t i = p.lo;
    trie_[p.node].first_token = i;
    while (i < p.hi && bytes_[token_order_[i]].size() == p.depth) ++i;
    trie_[p.node].n_tokens = i - p.lo;
    trie_[p.node].first_child = static_cast<uint32_t>(trie_.size());
    while (i < p.hi) {
      const uint8_t byte = static_cast<uint8_t>(bytes_[token_order_[i]][p.depth]);
      uint32_t j = i;
      while (j < p.hi && static_cast<uint8_t>(bytes_[token_order_[j]][p.depth]) == byte) ++j;
      TrieNode child;
      child.byte = byte;
      queue.push_back({static_cast<uint32_t>(trie_.size()), i, j, p.depth + 1});
      trie_.push_back(child);
      ++trie_[p.node].n_children;
      i = j;
    }
  }
}

bool GrammarVocabulary::IsEndOfGeneration(int32_t id) const {
  return std::binary_search(eog_.begin(), eog_.end(), id);
}

GrammarConstraint::GrammarConstraint(std::shared_ptr<const Grammar> grammar,
                                     std::shared_ptr<const GrammarVocabulary> vocab)
    : grammar_(grammar), vocab_(std::move(vocab)), matcher_(std::move(grammar)) {}

void GrammarConstraint::Reset() {
  matcher_ = GrammarMatcher(grammar_);
  masks_.clear();
}

bool GrammarConstraint::Allows(int32_t id) {
  if (id < 0 || static_cast<size_t>(id) >= vocab_->size()) return false;
  if (vocab_->IsEndOfGeneration(id)) return matcher_.IsComplete();
  const std::string& b = vocab_->bytes(id);
  if (b.empty() || b[0] == '\0') return false;
  GrammarMatcher::StateId s = matcher_.state();
  GrammarMatcher::Partial p = matcher_.partial();
  for (char c : b) {
    s = matcher_.Step(s, p, static_cast<uint8_t>(c));
    if (s == GrammarMatcher::kDead) return false;
  }
  return true;
}

absl::Status GrammarConstraint::Accept(int32_t id) {
  if (!Allows(id)) {
    if (!matcher_.error().ok()) return matcher_.error();
    std::string shown = id >= 0 && static_cast<size_t>(id) < vocab_->size() ? vocab_->bytes(id) : "";
    return absl::InvalidArgumentError(StrCat("grammar: token ", id, " (\"", absl::CEscape(shown),
                                                   "\") is not allowed here"));
  }
  if (!vocab_->IsEndOfGeneration(id)) matcher_.AcceptBytes(vocab_->bytes(id));
  return absl::OkStatus();
}

void GrammarConstraint::Walk(Bits& bits) {
  const auto& trie = vocab_->trie();
  const auto& order = vocab_->token_order();
  struct Frame {
    uint32_t node;
    GrammarMatcher::StateId state;
    GrammarMatcher::Partial partial;
  };
  std::vector<Frame> stack;
  auto push_children = [&](uint32_t node, GrammarMatcher::StateId s, GrammarMatcher::Partial p) {
    const auto& n = trie[node];
    for (uint32_t c = n.first_child; c < n.first_child + n.n_children; ++c) stack.push_back({c, s, p});
  };
  push_children(0, matcher_.state(), matcher_.partial());
  while (!stack.empty()) {
    Frame f = stack.back();
    stack.pop_back();
    const auto& n = trie[f.node];
    GrammarMatcher::Partial p = f.partial;
    const GrammarMatcher::StateId s = matcher_.Step(f.state, p, n.byte);
    if (s == GrammarMatcher::kDead) continue;  // nothing below this prefix can match
    for (uint32_t t = n.first_token; t < n.first_token + n.n_tokens; ++t) {
      const auto id = static_cast<size_t>(order[t]);
      bits[id >> 6] |= uint64_t{1} << (id & 63);
    }
    push_children(f.node, s, p);
  }
  if (matcher_.IsComplete()) {
    for (int32_t id : vocab_->eog_ids()) {
      if (id >= 0 && static_cast<size_t>(id) < vocab_->size()) bits[id >> 6] |= uint64_t{1} << (id & 63);
    }
  }
}

const GrammarConstraint::Bits& GrammarConstraint::MaskBits() {
  const GrammarMatcher::StateId s = matcher_.state();
  const GrammarMatcher::Partial p = matcher_.partial();
  for (auto it = masks_.begin(); it != masks_.end(); ++it) {
    if (it->state == s && it->partial == p) {
      masks_.splice(masks_.begin(), masks_, it);
      return masks_.front().bits;
    }
  }
  if (masks_.size() >= kMaxCachedMasks) masks_.pop_back();
  masks_.push_front({s, p, Bits((vocab_->size() + 63) / 64, 0)});
  Walk(masks_.front().bits);
  return masks_.front().bits;
}

void GrammarConstraint::Mask(std::span<float> logits) {
  const Bits& bits = MaskBits();
  const size_t n = std::min(logits.size(), vocab_->size());
  constexpr float kMasked = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < n; ++i) {
    if (!((bits[i >> 6] >> (i & 63)) & 1)) logits[i] = kMasked;
  }
  for (size_t i = n; i < logits.size(); ++i) logits[i] = kMasked;
}

}  // namespace uaii::sampling
