// uaii::TokenSampler: the public face of sampling::Sampler.
#include "uaii/token_sampler.h"

#include "sampling/sampler.h"

namespace uaii {

struct TokenSampler::Impl {
  sampling::Sampler sampler;
};

absl::StatusOr<std::unique_ptr<TokenSampler>> TokenSampler::Create(const sampling::SamplingParams& params) {
  auto s = sampling::Sampler::Create(params);
  if (!s.ok()) return s.status();
  return std::unique_ptr<TokenSampler>(new TokenSampler(std::make_unique<Impl>(Impl{*std::move(s)})));
}

TokenSampler::TokenSampler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TokenSampler::~TokenSampler() = default;

absl::StatusOr<int32_t> TokenSampler::Sample(std::span<const float> logits) { return impl_->sampler.Sample(logits); }
void TokenSampler::Accept(int32_t token) { impl_->sampler.Accept(token); }
absl::StatusOr<int32_t> TokenSampler::SampleAndAccept(std::span<const float> logits) {
  return impl_->sampler.SampleAndAccept(logits);
}
void TokenSampler::Reset() { impl_->sampler.Reset(); }
const sampling::SamplingParams& TokenSampler::params() const { return impl_->sampler.params(); }

}  // namespace uaii
