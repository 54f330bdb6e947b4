// Sampler: picks the next token from a row of logits, following llama.cpp's
// default sampler chain (common/sampling.cpp, common_sampler_init):
//
//   logits -> penalties -> top_k -> top_p -> min_p -> temperature -> dist
//
// with the formulas of src/llama-sampler.cpp (see candidates.h and
// docs/sampling.md). Greedy (temperature <= 0) returns the argmax of the
// penalized logits, lowest id on ties.
//
// Usage in a generation loop:
//   ASSIGN_OR_RETURN(Sampler s, Sampler::Create(params));
//   for (int32_t t : prompt) s.Accept(t);     // optional: llama-cli penalizes prompt tokens too
//   loop { ASSIGN_OR_RETURN(int32_t tok, s.Sample(logits)); s.Accept(tok); ... }
//
// Reproducibility: the state is (seed, PRNG position, penalty window). Each
// Sample call draws exactly one uniform number (rng.h), greedy or not, so the
// same params, the same logits and the same Accept calls give the same tokens.
// Not thread-safe; one Sampler per sequence.
#pragma once
#include <cstdint>
#include <span>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sampling/candidates.h"
#include "sampling/grammar_constraint.h"
#include "sampling/params.h"
#include "sampling/penalty_window.h"
#include "sampling/rng.h"

namespace uaii::sampling {

// Runs the chain up to (and including) temperature, without drawing:
// FillCandidates, then each enabled filter in order. `counts` is the penalty
// window (PenaltyWindow::Counts). On success `out` holds the surviving
// candidates in the order the draw walks them. Errors: bad logits (see
// FillCandidates). Params are assumed valid (ValidateSamplingParams).
absl::Status ApplyChain(const SamplingParams& params, std::span<const TokenCount> counts,
                        std::span<const float> logits, Candidates& out);

class Sampler {
 public:
  // Fails with ValidateSamplingParams' error when `params` are invalid.
  static absl::StatusOr<Sampler> Create(const SamplingParams& params);

  // Picks a token id in [0, logits.size()). Does not Accept it. Errors (the
  // PRNG and the penalty window are then untouched): empty logits, a NaN or
  // +inf logit, all logits -inf.
  absl::StatusOr<int32_t> Sample(std::span<const float> logits);

  // Sample under a grammar (nullptr: Sample above), the way llama.cpp's common_sampler_sample
  // does it: the chain runs and draws as usual; when the grammar allows the token drawn it
  // is the answer (one draw, one grammar check — the common case). Otherwise the logits are
  // masked to the tokens the grammar allows and the chain runs and draws again (a second
  // uniform number). Does not advance the grammar: Accept the token into it. Errors also:
  // FailedPrecondition when the grammar allows no token of the vocabulary here.
  absl::StatusOr<int32_t> Sample(std::span<const float> logits, GrammarConstraint* grammar);

  // The probabilities Sample would draw from here (ChainProbabilities over the penalty
  // window), without drawing: speculative decoding's accept/reject rule compares them
  // with the drafter's. Errors as Sample's.
  absl::Status Probabilities(std::span<const float> logits, Candidates& out) const;
  // One uniform number from this sampler's PRNG (the accept/reject rule's draws, so a
  // seed reproduces a speculative run too).
  double NextUniform() { return rng_.NextUniform(); }

  // Records a token in the penalty window (generated or prompt tokens).
  void Accept(int32_t token);

  // Sample followed by Accept of the result.
  absl::StatusOr<int32_t> SampleAndAccept(std::span<const float> logits);

  // Back to the state right after Create: empty window, PRNG re-seeded.
  void Reset();

  const SamplingParams& params() const { return params_; }
  const PenaltyWindow& window() const { return window_; }
  // The candidates of the last successful Sample, after the chain, with p set
  // to the probabilities the draw used (for logprobs and debugging).
  const Candidates& last_candidates() const { return cur_; }

 private:
  explicit Sampler(const SamplingParams& params);

  SamplingParams params_;
  Rng rng_;
  PenaltyWindow window_;
  std::vector<float> masked_;  // the grammar-masked copy of the logits (reused)
  Candidates cur_;  // reused between calls to avoid reallocating a vocabulary-sized array
};

}  // namespace uaii::sampling
