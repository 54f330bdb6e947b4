// The rejection-sampling rule keeps the target's distribution: over thousands of seeds
// the second and third generated tokens (the first and second verified positions) of a
// speculative run are distributed as plain sampling's, by a two-sample chi-square test.
// The drafter is the tiny llama's Q4_0 quantization, whose distribution differs from the
// F32 target's (the test tells the two apart: its power check), so proposals are both
// kept and rejected.
#include "speculative_helpers.h"

#include <cmath>
#include <map>

using namespace spec_test;

namespace {

constexpr int kSeeds = 3000;

// Token counts at reply positions 1 and 2 over kSeeds seeds starting at `seed0`.
struct Counts {
  std::map<TokenId, int> at[2];
  int64_t drafted = 0, accepted = 0;
};

Counts Sample(Generator& g, uint32_t seed0) {
  Counts c;
  for (int i = 0; i < kSeeds; ++i) {
    g.Reset();
    auto r = g.Run(Request(seed0 + static_cast<uint32_t>(i), 1.0f, 3));
    REQUIRE(r.ok());
    REQUIRE(r->tokens.size() == 3);
    ++c.at[0][r->tokens[1]];
    ++c.at[1][r->tokens[2]];
    c.drafted += r->draft_tokens;
    c.accepted += r->draft_accepted;
  }
  return c;
}

// Two-sample chi-square statistic over equal sample sizes, bins with fewer than 10
// observations together pooled into one; `df` receives bins - 1.
double ChiSquare(const std::map<TokenId, int>& a, const std::map<TokenId, int>& b, int* df) {
  std::map<TokenId, std::pair<int, int>> both;
  for (auto [t, n] : a) both[t].first += n;
  for (auto [t, n] : b) both[t].second += n;
  double stat = 0;
  int bins = 0;
  std::pair<int, int> pool{0, 0};
  auto add = [&](std::pair<int, int> n) {
    const double d = n.first - n.second;
    stat += d * d / (n.first + n.second);
    ++bins;
  };
  for (auto [t, n] : both) {
    if (n.first + n.second < 10) {
      pool.first += n.first;
      pool.second += n.second;
    } else {
      add(n);
    }
  }
  if (pool.first + pool.second > 0) add(pool);
  *df = bins - 1;
  return stat;
}

// The chi-square distribution's 0.999 quantile (Wilson-Hilferty).
double Critical(int df) {
  const double z = 3.090, k = df;
  return k * std::pow(1 - 2 / (9 * k) + z * std::sqrt(2 / (9 * k)), 3);
}

}  // namespace

TEST_CASE("speculative sampling: the rejection rule's tokens have the target's distribution", "[generation]") {
  auto model = Tiny("tiny-llama-f32.gguf");
  auto draft = Tiny("tiny-llama-q4_0.gguf");
  auto plain = Plain(model);
  auto spec = WithSpec(model, DraftModel(draft, 4, AcceptanceRule::kRejectionSampling));
  const Counts want = Sample(*plain, 1);
  const Counts got = Sample(*spec, 1000001);  // other seeds: independent samples
  // Both paths ran, hundreds of times each: the tiny models' top-40 sets overlap little
  // (their logits are nearly flat, so quantization reorders them), so most proposals are
  // rejected and resampled from the residual, some kept.
  REQUIRE(got.drafted > 0);
  const double rate = static_cast<double>(got.accepted) / static_cast<double>(got.drafted);
  INFO("acceptance " << rate << " of " << got.drafted);
  CHECK(got.accepted > 200);
  CHECK(got.drafted - got.accepted > 200);
  for (int pos = 0; pos < 2; ++pos) {
    int df = 0;
    const double stat = ChiSquare(want.at[pos], got.at[pos], &df);
    INFO("reply position " << pos + 1 << ": chi-square " << stat << " on " << df << " degrees of freedom, 0.999 quantile "
                           << Critical(df));
    CHECK(df >= 10);
    CHECK(stat < Critical(df));
  }
  // Power: the draft model's own distribution at the same positions is told apart.
  const Counts q = Sample(*Plain(draft), 2000001);
  int df = 0;
  const double stat = ChiSquare(want.at[0], q.at[0], &df);
  INFO("draft vs target: chi-square " << stat << " on " << df);
  CHECK(stat > Critical(df));
}

TEST_CASE("speculative sampling: the rejection rule keeps more proposals than exact match", "[generation]") {
  auto model = Tiny("tiny-llama-f32.gguf");
  auto draft = Tiny("tiny-llama-q4_0.gguf");
  auto exact = WithSpec(model, DraftModel(draft, 4, AcceptanceRule::kExactMatch));
  auto rejection = WithSpec(model, DraftModel(draft, 4, AcceptanceRule::kAuto));  // sampled: the rejection rule
  int64_t kept[2] = {0, 0}, drafted[2] = {0, 0};
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    int i = 0;
    for (Generator* g : {exact.get(), rejection.get()}) {
      g->Reset();
      auto r = g->Run(Request(seed, 1.0f, 30));
      REQUIRE(r.ok());
      kept[i] += r->draft_accepted;
      drafted[i] += r->draft_tokens;
      ++i;
    }
  }
  INFO("exact " << kept[0] << "/" << drafted[0] << ", rejection " << kept[1] << "/" << drafted[1]);
  CHECK(kept[1] * drafted[0] > 3 * kept[0] * drafted[1]);
}
