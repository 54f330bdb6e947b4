// The sampler chain's distribution as numbers, for speculative decoding's accept/reject
// rule (docs/speculative.md), which needs the probability the draw would give each token
// rather than one draw.
#pragma once
#include <cstddef>
#include <span>

#include "absl/status/status.h"
#include "sampling/candidates.h"
#include "sampling/params.h"

namespace uaii::sampling {

// ApplyChain, then the probabilities DrawIndex would draw from (p_i = expf(l_i - max),
// normalised over the survivors; +inf logits share the mass), without drawing. Entries
// with p == 0 (masked by temperature <= 0, or -inf) are dropped, so `out` is the support.
absl::Status ChainProbabilities(const SamplingParams& params, std::span<const TokenCount> counts,
                                std::span<const float> logits, Candidates& out);

// The index a uniform u in [0, 1) picks from probabilities (running double sum reaching
// u * total, skipping zeros; the last positive entry when rounding never reaches it).
// `total` <= 0 or no positive entry: data.size().
size_t PickIndex(std::span<const TokenData> data, double u);

}  // namespace uaii::sampling
