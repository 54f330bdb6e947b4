// uaii::sampling::SamplingParams: the knobs of the sampler chain, with llama.cpp's
// defaults (common/common.h, struct common_params_sampling), and their validation.
//
// Chain (llama.cpp's default order, common/sampling.cpp):
//   penalties -> top_k -> top_p -> min_p -> temperature -> dist
// typical_p, top_n_sigma, XTC and DRY sit in that chain too but are disabled by
// llama.cpp's defaults; uaii does not implement them yet.
#pragma once
#include <cstdint>

#include "absl/status/status.h"

namespace uaii::sampling {

// The seed used when the caller gives none. Fixed, so that two runs with default
// parameters give the same tokens. (llama.cpp's default, 0xFFFFFFFF, means
// "random"; uaii has no such magic value: every seed is a literal seed. Callers
// that want a fresh seed draw one themselves.)
inline constexpr uint32_t kDefaultSeed = 42;

struct SamplingParams {
  // Softmax temperature: logits are divided by it. <= 0 means greedy: the
  // token with the highest (penalized) logit, lowest id on ties.
  float temperature = 0.8f;
  // Keep the k highest logits. <= 0 disables (keeps the whole vocabulary).
  int32_t top_k = 40;
  // Nucleus: keep the smallest prefix (by descending probability) whose mass is
  // >= top_p. Must be in (0, 1]; 1 disables.
  float top_p = 0.95f;
  // Keep tokens with p >= min_p * p_max. Must be in [0, 1]; 0 disables.
  float min_p = 0.05f;
  // Repetition penalty for tokens seen in the window: logit > 0 is divided by
  // it, logit <= 0 multiplied. Must be > 0; 1 disables.
  float repeat_penalty = 1.0f;
  // Subtracted once from the logit of any token seen in the window. 0 disables.
  float presence_penalty = 0.0f;
  // Subtracted count times, count = occurrences in the window. 0 disables.
  float frequency_penalty = 0.0f;
  // Window of accepted tokens the penalties look at: the last N. 0 disables the
  // penalties; -1 means every token accepted since the last Reset (llama.cpp's
  // -1 means "context size", which is the same thing for one context).
  int32_t penalty_last_n = 64;
  // Seed of the sampler's PRNG (std::mt19937, the same engine and seeding as
  // llama.cpp's dist sampler). Same seed + same logits => same tokens, on every
  // platform.
  uint32_t seed = kDefaultSeed;
  // Lower bound on how many candidates top_p and min_p keep (llama.cpp's
  // min_keep; 0 = no bound, the default).
  int32_t min_keep = 0;

  // True when Sample returns the argmax (temperature <= 0).
  bool greedy() const { return temperature <= 0.0f; }
  // False when the penalties sampler is a no-op (llama.cpp's is_disabled):
  // penalty_last_n == 0, or repeat 1, frequency 0 and presence 0.
  bool penalties_enabled() const {
    return penalty_last_n != 0 &&
           (repeat_penalty != 1.0f || frequency_penalty != 0.0f || presence_penalty != 0.0f);
  }
  // Parameters for greedy decoding: temperature 0, every filter off.
  static SamplingParams Greedy();
};

// OK, or InvalidArgument naming the first bad field and its value, e.g.
// "sampling: top_p = 1.5 is outside (0, 1]". NaN and infinity are rejected
// everywhere.
absl::Status ValidateSamplingParams(const SamplingParams& p);

}  // namespace uaii::sampling
