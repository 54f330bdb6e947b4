#include "sampling/sampler.h"

#include "sampling/distribution.h"

#include <algorithm>
#include <limits>
#include <vector>

namespace uaii::sampling {

absl::Status ApplyChain(const SamplingParams& params, std::span<const TokenCount> counts,
                        std::span<const float> logits, Candidates& out) {
  if (absl::Status s = FillCandidates(logits, out); !s.ok()) return s;
  const size_t min_keep = static_cast<size_t>(params.min_keep);
  if (params.penalties_enabled()) {
    ApplyPenalties(out, counts, params.repeat_penalty, params.frequency_penalty, params.presence_penalty);
  }
  TopK(out, params.top_k);
  TopP(out, params.top_p, min_keep);
  MinP(out, params.min_p, min_keep);
  Temperature(out, params.temperature);
  return absl::OkStatus();
}

Sampler::Sampler(const SamplingParams& params)
    : params_(params), rng_(params.seed), window_(params.penalty_last_n) {}

absl::StatusOr<Sampler> Sampler::Create(const SamplingParams& params) {
  if (absl::Status s = ValidateSamplingParams(params); !s.ok()) return s;
  return Sampler(params);
}

absl::StatusOr<int32_t> Sampler::Sample(std::span<const float> logits) {
  const std::vector<TokenCount> counts = window_.Counts();
  if (absl::Status s = ApplyChain(params_, counts, logits, cur_); !s.ok()) return s;
  // One draw per call, greedy included (llama.cpp's dist also draws when a
  // single candidate is left), so the PRNG position depends only on the
  // number of Sample calls.
  const double u = rng_.NextUniform();
  const size_t idx = params_.greedy() ? ArgMax(cur_) : DrawIndex(cur_, u);
  if (params_.greedy()) {
    for (TokenData& t : cur_.data) t.p = 0.0f;
    cur_.data[idx].p = 1.0f;
  }
  return cur_.data[idx].id;
}

absl::StatusOr<int32_t> Sampler::Sample(std::span<const float> logits, GrammarConstraint* grammar) {
  if (grammar == nullptr) return Sample(logits);
  absl::StatusOr<int32_t> first = Sample(logits);
  if (!first.ok() || grammar->Allows(*first)) return first;
  masked_.assign(logits.begin(), logits.end());
  grammar->Mask(masked_);
  if (!grammar->error().ok()) return grammar->error();
  constexpr float kMasked = -std::numeric_limits<float>::infinity();
  if (std::all_of(masked_.begin(), masked_.end(), [](float l) { return l == kMasked; })) {
    return absl::FailedPreconditionError("grammar: no token of the vocabulary can continue the grammar here");
  }
  return Sample(masked_);
}

absl::Status Sampler::Probabilities(std::span<const float> logits, Candidates& out) const {
  return ChainProbabilities(params_, window_.Counts(), logits, out);
}

void Sampler::Accept(int32_t token) { window_.Push(token); }

absl::StatusOr<int32_t> Sampler::SampleAndAccept(std::span<const float> logits) {
  absl::StatusOr<int32_t> tok = Sample(logits);
  if (tok.ok()) Accept(*tok);
  return tok;
}

void Sampler::Reset() {
  rng_.Seed(params_.seed);
  window_.Clear();
  cur_.data.clear();
  cur_.sorted = false;
}

}  // namespace uaii::sampling
