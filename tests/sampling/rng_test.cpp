// The PRNG: standard MT19937 and the documented uniform draw.
#include <random>

#include <catch2/catch.hpp>

#include "sampling/rng.h"

using namespace uaii::sampling;

TEST_CASE("Rng is the standard MT19937", "[sampling][rng]") {
  Rng r(5489u);  // the default seed; the standard fixes its 10000th output
  uint32_t v = 0;
  for (int i = 0; i < 10000; ++i) v = r.NextU32();
  CHECK(v == 4123659995u);
  Rng a(7), b(7);
  for (int i = 0; i < 100; ++i) CHECK(a.NextUniform() == b.NextUniform());
  a.Seed(7);
  Rng c(7);
  CHECK(a.NextU32() == c.NextU32());
}

TEST_CASE("NextUniform is in 0..1 and equals two outputs over 2^64", "[sampling][rng]") {
  Rng r(123), raw(123);
  for (int i = 0; i < 1000; ++i) {
    const double u = r.NextUniform();
    CHECK(u >= 0.0);
    CHECK(u < 1.0);
    const double a = raw.NextU32(), b = raw.NextU32();
    CHECK(u == (a + b * 4294967296.0) / 18446744073709551616.0);
  }
}

#ifdef __GLIBCXX__
TEST_CASE("NextUniform matches libstdc++ uniform_real_distribution as llama.cpp draws", "[sampling][rng]") {
  for (uint32_t seed : {0u, 42u, 4294967295u}) {
    Rng r(seed);
    std::mt19937 eng(seed);
    std::uniform_real_distribution<double> dist(0.0, 1.0);
    for (int i = 0; i < 2000; ++i) CHECK(r.NextUniform() == dist(eng));
  }
}
#endif
