// The sampler's random numbers, specified bit for bit so that a seed means the
// same tokens on every platform and standard library.
//
// Engine: std::mt19937 (MT19937, 32-bit Mersenne Twister). Its output sequence
// and its seeding from one 32-bit value are fixed by the C++ standard
// ([rand.eng.mers]; the 10000th output for the default seed is 4123659995), so
// it is the same everywhere. It is also llama.cpp's engine (llama_sampler_dist).
//
// Uniform draw (written here, because std::uniform_real_distribution and
// std::generate_canonical are allowed to differ between standard libraries):
//   a = next(), b = next()                       (two 32-bit outputs, in order)
//   u = double(a + b * 2^32, rounded to double) / 2^64
//   if u >= 1 (the rounding can reach 2^64): u = the largest double below 1
// This is exactly what libstdc++'s std::uniform_real_distribution<double>(0, 1)
// computes on a std::mt19937, which is what llama.cpp's dist sampler calls, so
// on Linux builds of llama.cpp the same seed and the same filtered candidates
// give the same token (tests/golden/sampling checks this against llama.cpp).
#pragma once
#include <cstdint>
#include <random>

namespace uaii::sampling {

class Rng {
 public:
  explicit Rng(uint32_t seed) : engine_(seed) {}

  void Seed(uint32_t seed) { engine_.seed(seed); }
  // Next 32-bit output of MT19937.
  uint32_t NextU32() { return static_cast<uint32_t>(engine_()); }
  // Uniform double in [0, 1), as documented above. Consumes two outputs.
  double NextUniform();

 private:
  std::mt19937 engine_;
};

// A seed from std::random_device, for callers that want an unreproducible run
// (the CLI's `--seed -1`). Record it if the run may need replaying.
uint32_t RandomSeed();

}  // namespace uaii::sampling
