// Candidate arrays and the sampler chain's filters as pure functions.
//
// A Candidates array mirrors llama.cpp's llama_token_data_array: entries
// {id, logit, p} plus a `sorted` flag that says the entries are in descending
// logit order. Each filter follows the formula of the llama.cpp sampler of the
// same name (src/llama-sampler.cpp, as vendored by llama-cpp-python 0.3.36) and
// also its effect on the order of the entries, because the final draw walks the
// entries in array order: keeping the same order keeps the same token for the
// same random number.
//
// One deliberate difference: llama.cpp sorts with `a.logit > b.logit` and an
// unstable sort, so equal logits come out in an unspecified order. uaii sorts by
// (logit descending, id ascending), a total order, so ties always resolve to the
// lowest id and every platform gets the same array.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"

namespace uaii::sampling {

struct TokenData {
  int32_t id = 0;
  float logit = 0.0f;
  float p = 0.0f;  // set by Softmax / TopP; 0 until then
};

struct Candidates {
  std::vector<TokenData> data;
  bool sorted = false;  // data is in (logit desc, id asc) order

  size_t size() const { return data.size(); }
};

// The comparator every sort uses: logit descending, then id ascending.
inline bool Before(const TokenData& a, const TokenData& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// Fills `out` with ids 0..n-1 and the given logits, p = 0, unsorted. Fails on an
// empty span, on NaN or +inf (naming the index), or when every logit is -inf
// (nothing could be sampled).
absl::Status FillCandidates(std::span<const float> logits, Candidates& out);

// Occurrence count of a token in the penalty window.
struct TokenCount {
  int32_t id;
  int32_t count;  // > 0
};

// Penalties (llama.cpp llama_sampler_penalties_apply), for each candidate whose
// id has count c > 0 in the window:
//   logit = logit <= 0 ? logit * repeat : logit / repeat
//   logit -= c * frequency + presence
// Leaves the array unsorted. `counts` ids must be distinct (any order); ids that are not
// candidates are ignored.
void ApplyPenalties(Candidates& c, std::span<const TokenCount> counts, float repeat,
                    float frequency, float presence);

// Top-k (llama_sampler_top_k): k <= 0 is a no-op; else keeps the min(k, n)
// highest logits, sorted. Ties at the cut keep the lowest ids.
void TopK(Candidates& c, int32_t k);

// Softmax over the current entries in their current order:
//   p_i = expf(l_i - max) / sum_j expf(l_j - max)   (float, like llama.cpp)
// Does not reorder.
void Softmax(Candidates& c);

// Top-p / nucleus (llama_sampler_top_p): p >= 1 is a no-op. Else softmax, sort,
// and keep the shortest prefix whose running float sum of p reaches p and that
// holds at least min_keep entries (everything when the sum never reaches p).
// Leaves the array sorted, p set (not renormalised over the kept set).
void TopP(Candidates& c, float p, size_t min_keep);

// Min-p (llama_sampler_min_p): p <= 0 is a no-op. Else keeps the entries with
//   logit >= max_logit + logf(p)      (i.e. p_i >= p * p_max)
// and, when that leaves fewer than min_keep, the min_keep highest instead.
// Keeps the current order (sorted or not), like llama.cpp.
void MinP(Candidates& c, float p, size_t min_keep);

// Temperature (llama_sampler_temp): t > 0 divides every logit by t. t <= 0 keeps
// the first maximal logit (lowest id on ties, given this module's order) and
// sets every other logit to -inf.
void Temperature(Candidates& c, float t);

// Index (into c.data) of the greedy choice: highest logit, lowest id on ties.
size_t ArgMax(const Candidates& c);

// The final draw (llama_sampler_dist): p_i = expf(l_i - max) as float, summed
// in double; returns the first index whose running double sum reaches
// u * sum, skipping p_i == 0 (matters only for u == 0). Also normalises p.
// u must be in [0, 1). Requires a non-empty array.
size_t DrawIndex(Candidates& c, double u);

}  // namespace uaii::sampling
