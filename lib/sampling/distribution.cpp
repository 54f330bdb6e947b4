#include "sampling/distribution.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sampling/sampler.h"

namespace uaii::sampling {

absl::Status ChainProbabilities(const SamplingParams& params, std::span<const TokenCount> counts,
                                std::span<const float> logits, Candidates& out) {
  if (absl::Status st = ApplyChain(params, counts, logits, out); !st.ok()) return st;
  float max_l = -std::numeric_limits<float>::infinity();
  for (const TokenData& t : out.data) max_l = std::max(max_l, t.logit);
  const bool inf_max = max_l == std::numeric_limits<float>::infinity();
  double sum = 0.0;
  for (TokenData& t : out.data) {
    // The same float expressions as DrawIndex, so the numbers are the draw's.
    t.p = inf_max ? (t.logit == max_l ? 1.0f : 0.0f) : std::exp(t.logit - max_l);
    sum += t.p;
  }
  for (TokenData& t : out.data) t.p = static_cast<float>(t.p / sum);
  std::erase_if(out.data, [](const TokenData& t) { return !(t.p > 0.0f); });
  return absl::OkStatus();
}

size_t PickIndex(std::span<const TokenData> data, double u) {
  double total = 0.0;
  for (const TokenData& t : data) total += std::max(0.0f, t.p);
  if (!(total > 0.0)) return data.size();
  const double target = total * u;
  double run = 0.0;
  size_t last_positive = data.size();
  for (size_t i = 0; i < data.size(); ++i) {
    if (!(data[i].p > 0.0f)) continue;
    run += data[i].p;
    last_positive = i;
    if (run >= target) return i;
  }
  return last_positive;
}

}  // namespace uaii::sampling
