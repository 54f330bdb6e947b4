// The last N accepted tokens and how often each occurs among them: the state
// behind the repetition / presence / frequency penalties (llama.cpp's
// llama_sampler_penalties: a ring buffer of penalty_last_n tokens plus a count
// per token).
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "sampling/candidates.h"

namespace uaii::sampling {

class PenaltyWindow {
 public:
  // capacity > 0: the last `capacity` tokens; 0: nothing is kept; -1: every
  // token since the last Clear.
  explicit PenaltyWindow(int32_t capacity) : capacity_(capacity) {}

  void Push(int32_t token);
  void Clear();

  size_t size() const { return tokens_.size(); }
  // The distinct tokens of the window with their counts, sorted by id.
  std::vector<TokenCount> Counts() const;
  int32_t CountOf(int32_t token) const;

 private:
  int32_t capacity_;
  std::deque<int32_t> tokens_;  // oldest first
  absl::flat_hash_map<int32_t, int32_t> counts_;
};

}  // namespace uaii::sampling
