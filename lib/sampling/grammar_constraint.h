// GrammarConstraint: a grammar applied to a vocabulary — which tokens may come next,
// and following the tokens that were chosen. The rules are llama.cpp's
// (llama_grammar_apply_impl / llama_grammar_accept_impl):
//   * a token is allowed when its bytes (the piece, control tokens as their text) can
//     continue the grammar, a trailing partial UTF-8 character included;
//   * an end-of-generation token is allowed only where the grammar is complete;
//   * a token with no bytes, or whose bytes start with NUL, is never allowed.
//
// The full mask walks a trie of the vocabulary's byte strings, pruning every branch the
// grammar rejects, and is cached per grammar state: the states of a JSON grammar repeat
// (inside a string, after a comma, …), so most masks after the first few are lookups.
#pragma once
#include <cstdint>
#include <list>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "sampling/grammar.h"

namespace uaii::sampling {

// The vocabulary as a grammar sees it. Immutable; share one between constraints.
class GrammarVocabulary {
 public:
  // token_bytes[id]: the bytes of token id. eog_ids: the end-of-generation tokens.
  GrammarVocabulary(std::vector<std::string> token_bytes, std::vector<int32_t> eog_ids);

  struct TrieNode {
    uint32_t first_child = 0;
    uint32_t n_children = 0;
    uint32_t first_token = 0;  // into token_order
    uint32_t n_tokens = 0;     // tokens whose bytes end here
    uint8_t byte = 0;
  };
  size_t size() const { return bytes_.size(); }
  const std::string& bytes(int32_t id) const { return bytes_[static_cast<size_t>(id)]; }
  bool IsEndOfGeneration(int32_t id) const;
  const std::vector<TrieNode>& trie() const { return trie_; }  // [0] is the root
  const std::vector<int32_t>& token_order() const { return token_order_; }
  const std::vector<int32_t>& eog_ids() const { return eog_; }

 private:
  std::vector<std::string> bytes_;
  std::vector<int32_t> eog_;  // sorted
  std::vector<TrieNode> trie_;
  std::vector<int32_t> token_order_;
};

class GrammarConstraint {
 public:
  GrammarConstraint(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const GrammarVocabulary> vocab);

  // Whether `id` may come next (ids outside the vocabulary never may).
  bool Allows(int32_t id);
  // Sets the logits of every token that may not come next to -inf. `logits` covers ids
  // 0..logits.size()-1; ids beyond the vocabulary are masked too.
  void Mask(std::span<float> logits);
  // Follows a chosen token. InvalidArgument naming the token when the grammar does not
  // allow it (the state is then unchanged).
  absl::Status Accept(int32_t id);
  // The output so far is a whole sentence of the grammar.
  bool Complete() const { return matcher_.IsComplete(); }
  // Back to the start of the grammar.
  void Reset();
  // Set when the grammar became too ambiguous to follow (see GrammarMatcher::error).
  const absl::Status& error() const { return matcher_.error(); }

 private:
  using Bits = std::vector<uint64_t>;
  const Bits& MaskBits();
  void Walk(Bits& bits);

  std::shared_ptr<const Grammar> grammar_;
  std::shared_ptr<const GrammarVocabulary> vocab_;
  GrammarMatcher matcher_;
  // Masks of recent states, most recent first: (state, partial) -> allowed-token bits.
  struct CachedMask {
    GrammarMatcher::StateId state;
    GrammarMatcher::Partial partial;
    Bits bits;
  };
  std::list<CachedMask> masks_;
  static constexpr size_t kMaxCachedMasks = 32;
};

}  // namespace uaii::sampling
