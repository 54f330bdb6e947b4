// uaii::TokenSampler: the public face of sampling::Sampler, with an optional grammar.
#include "uaii/token_sampler.h"

#include "generation/grammar_vocabulary.h"
#include "sampling/sampler.h"

namespace uaii {

struct TokenSampler::Impl {
  sampling::Sampler sampler;
  std::unique_ptr<sampling::GrammarConstraint> grammar;  // null: unconstrained
};

absl::StatusOr<std::unique_ptr<TokenSampler>> TokenSampler::Create(const sampling::SamplingParams& params) {
  auto s = sampling::Sampler::Create(params);
  if (!s.ok()) return s.status();
  return std::unique_ptr<TokenSampler>(new TokenSampler(std::make_unique<Impl>(Impl{*std::move(s), nullptr})));
}

absl::StatusOr<std::unique_ptr<TokenSampler>> TokenSampler::Create(const sampling::SamplingParams& params,
                                                                   const Tokenizer& vocabulary,
                                                                   std::string_view gbnf) {
  auto s = Create(params);
  if (!s.ok() || gbnf.empty()) return s;
  auto grammar = MakeGrammarConstraint(gbnf, MakeGrammarVocabulary(vocabulary));
  if (!grammar.ok()) return grammar.status();
  (*s)->impl_->grammar = *std::move(grammar);
  return s;
}

TokenSampler::TokenSampler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TokenSampler::~TokenSampler() = default;

absl::StatusOr<int32_t> TokenSampler::Sample(std::span<const float> logits) {
  return impl_->sampler.Sample(logits, impl_->grammar.get());
}

absl::Status TokenSampler::Accept(int32_t token) {
  if (impl_->grammar) {
    if (absl::Status st = impl_->grammar->Accept(token); !st.ok()) return st;
  }
  impl_->sampler.Accept(token);
  return absl::OkStatus();
}

absl::StatusOr<int32_t> TokenSampler::SampleAndAccept(std::span<const float> logits) {
  absl::StatusOr<int32_t> tok = Sample(logits);
  if (!tok.ok()) return tok;
  if (absl::Status st = Accept(*tok); !st.ok()) return st;
  return tok;
}

void TokenSampler::Reset() {
  impl_->sampler.Reset();
  if (impl_->grammar) impl_->grammar->Reset();
}
bool TokenSampler::constrained() const { return impl_->grammar != nullptr; }
bool TokenSampler::grammar_complete() const { return impl_->grammar && impl_->grammar->Complete(); }
const sampling::SamplingParams& TokenSampler::params() const { return impl_->sampler.params(); }

}  // namespace uaii
