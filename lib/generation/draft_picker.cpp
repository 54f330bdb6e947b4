// DraftPicker (uaii/drafter.h): a drafter's logits row -> the next proposal and its q.
#include <algorithm>
#include <cmath>
#include <limits>

#include "sampling/distribution.h"
#include "sampling/rng.h"
#include "uaii/drafter.h"
#include "util/str_cat.h"

namespace uaii {

struct DraftPicker::Impl {
  sampling::SamplingParams params;
  bool greedy = true;
  float p_min = 0.0f;
  sampling::Rng rng;
  sampling::Candidates cur;
  Impl(const sampling::SamplingParams& p, bool g, float pm, uint32_t seed) : params(p), greedy(g), p_min(pm), rng(seed) {
    // No penalties: the drafter does not see the target's window, and q may be any
    // distribution (the rejection rule corrects for it). Everything else as requested,
    // so q is close to the target's p and most proposals are kept.
    params.penalty_last_n = 0;
  }
};

DraftPicker::DraftPicker(const sampling::SamplingParams& params, bool greedy, float p_min, uint32_t seed)
    : impl_(std::make_unique<Impl>(params, greedy || params.greedy(), p_min, seed)) {}
DraftPicker::~DraftPicker() = default;
DraftPicker::DraftPicker(DraftPicker&&) noexcept = default;
DraftPicker& DraftPicker::operator=(DraftPicker&&) noexcept = default;

absl::StatusOr<std::optional<DraftToken>> DraftPicker::Pick(std::span<const float> logits) {
  Impl& s = *impl_;
  if (s.greedy) {
    // The argmax (lowest id on ties) and, when p_min asks, its softmax probability at
    // temperature 1. One pass checks the row as FillCandidates would, without building
    // the vocabulary-sized candidate array: this runs once per proposal.
    if (logits.empty()) return absl::InvalidArgumentError("draft: the logits are empty");
    size_t best = 0;
    for (size_t i = 0; i < logits.size(); ++i) {
      const float l = logits[i];
      if (std::isnan(l) || l == std::numeric_limits<float>::infinity())
        return absl::InvalidArgumentError(StrCat("draft: logit of token ", i, " is ", l, " (NaN or +inf)"));
      if (l > logits[best]) best = i;
    }
    const float max_l = logits[best];
    if (max_l == -std::numeric_limits<float>::infinity())
      return absl::InvalidArgumentError("draft: every logit is -inf");
    if (s.p_min > 0.0f) {
      float sum = 0.0f;
      for (float l : logits) sum += std::exp(l - max_l);
      if (1.0f / sum < s.p_min) return std::nullopt;
    }
    DraftToken d;
    d.token = static_cast<TokenId>(best);
    d.q = {{d.token, 1.0f}};
    return d;
  }
  if (absl::Status st = sampling::ChainProbabilities(s.params, {}, logits, s.cur); !st.ok()) return st;
  float top = 0.0f;
  for (const sampling::TokenData& t : s.cur.data) top = std::max(top, t.p);
  if (top < s.p_min) return std::nullopt;
  const size_t idx = sampling::PickIndex(s.cur.data, s.rng.NextUniform());
  if (idx >= s.cur.data.size()) return std::nullopt;  // no mass at all (cannot happen after ChainProbabilities)
  DraftToken d;
  d.token = s.cur.data[idx].id;
  d.q.reserve(s.cur.data.size());
  for (const sampling::TokenData& t : s.cur.data) d.q.push_back({t.id, t.p});
  return d;
}

}  // namespace uaii
