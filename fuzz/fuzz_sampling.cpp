// Sampling parameters as the C ABI (uaii_generate_options) and the CLI flags deliver them:
// any float (NaN, infinities, huge), any integer. ValidateSamplingParams must refuse
// what the sampler cannot take; whatever it accepts must sample without a crash, and
// every drawn id must be a valid index of the logits (lib/sampling). Input: the
// parameter fields' bytes, then the logits (f32; NaN and infinities included) and
// penalty-window tokens.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

#include "sampling/sampler.h"
#include "uaii/sampling.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace uaii::sampling;
  FuzzedDataProvider in(data, size);
  auto f32 = [&] {
    uint32_t bits = in.ConsumeIntegral<uint32_t>();
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  };
  SamplingParams p;
  p.temperature = f32();
  p.top_k = in.ConsumeIntegral<int32_t>();
  p.top_p = f32();
  p.min_p = f32();
  p.repeat_penalty = f32();
  p.presence_penalty = f32();
  p.frequency_penalty = f32();
  p.penalty_last_n = in.ConsumeIntegralInRange<int32_t>(-2, 300);
  p.seed = in.ConsumeIntegral<uint32_t>();
  p.min_keep = in.ConsumeIntegral<int32_t>();
  if (!ValidateSamplingParams(p).ok()) return 0;
  auto sampler = Sampler::Create(p);
  if (!sampler.ok()) return 0;
  const size_t n_vocab = in.ConsumeIntegralInRange<size_t>(1, 512);
  std::vector<float> logits(n_vocab);
  for (float& l : logits) l = in.remaining_bytes() >= 4 ? f32() : 0.0f;
  for (int n = in.ConsumeIntegralInRange(0, 512); n > 0 && in.remaining_bytes() > 0; --n)
    sampler->Accept(in.ConsumeIntegralInRange<int32_t>(0, static_cast<int32_t>(n_vocab) - 1));
  for (int step = 0; step < 3; ++step) {
    auto id = sampler->SampleAndAccept(logits);
    if (!id.ok()) continue;
    if (*id < 0 || static_cast<size_t>(*id) >= n_vocab) {
      std::fprintf(stderr, "fuzz_sampling: drew id %d of %zu logits\n", *id, n_vocab);
      std::abort();
    }
  }
  return 0;
}
