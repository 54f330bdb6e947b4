// uaii::TokenSampler: the sampling chain of uaii/sampling.h as an object an application
// drives over any logits — its own evaluation loop, a logits row from Session::Eval, or
// a row it computed elsewhere. The same chain Generator runs: the same parameters and
// seed pick the same tokens. The C ABI's uaii_sampler is one of these.
#pragma once
#include <cstdint>
#include <memory>
#include <span>

#include "absl/status/statusor.h"
#include "uaii/sampling.h"
#include "uaii/tokenizer.h"

namespace uaii {

class TokenSampler {
 public:
  // InvalidArgument naming the field when `params` are invalid (ValidateSamplingParams).
  static absl::StatusOr<std::unique_ptr<TokenSampler>> Create(const sampling::SamplingParams& params);
  // Constrained to a GBNF grammar (uaii/grammar.h) over `vocabulary`'s tokens: Sample
  // returns only tokens the grammar allows next (end-of-generation only where it is
  // complete), and Accept follows the grammar. Empty `gbnf`: unconstrained. Also fails
  // with InvalidArgument when the grammar does not parse.
  static absl::StatusOr<std::unique_ptr<TokenSampler>> Create(const sampling::SamplingParams& params,
                                                              const Tokenizer& vocabulary,
                                                              std::string_view gbnf);
  ~TokenSampler();

  // Picks an id in [0, logits.size()) without recording it. Fails (leaving the state
  // untouched) on empty logits, a NaN or +inf logit, or all logits -inf; with a grammar,
  // also when the grammar allows no token here (FailedPrecondition).
  absl::StatusOr<int32_t> Sample(std::span<const float> logits);
  // Records a token in the penalty window (a generated or a prompt token) and, with a
  // grammar, moves the grammar past it: then only generated tokens belong here, and a
  // token the grammar does not allow is refused (InvalidArgument, nothing recorded).
  absl::Status Accept(int32_t token);
  // Sample, then Accept of the result.
  absl::StatusOr<int32_t> SampleAndAccept(std::span<const float> logits);
  // Back to the state right after Create: empty window, PRNG re-seeded, grammar at its start.
  void Reset();
  bool constrained() const;
  // With a grammar: the tokens accepted so far form a whole sentence of it.
  bool grammar_complete() const;
  const sampling::SamplingParams& params() const;

 private:
  struct Impl;
  explicit TokenSampler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace uaii
