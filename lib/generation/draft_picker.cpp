// DraftPicker (uaii/drafter.h): a drafter's logits row -> the next proposal and its q.
#include <algorithm>
#include <cmath>
#include <limits>

#include "sampling/distribution.h"
#include "sampling/rng.h"
#include "uaii/drafter.h"

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
    if (absl::Status st = sampling::FillCandidates(logits, s.cur); !st.ok()) return st;
    // The argmax (lowest id on ties) and its softmax probability at temperature 1.
    size_t best = 0;
    for (size_t i = 1; i < logits.size(); ++i)
      if (logits[i] > logits[best]) best = i;
    const float max_l = logits[best];
    double sum = 0.0;
    for (float l : logits) sum += std::exp(static_cast<double>(l) - max_l);
    if (1.0 / sum < s.p_min) return std::nullopt;
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
