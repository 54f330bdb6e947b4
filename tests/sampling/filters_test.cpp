// Each filter keeps exactly the set its definition says, from fixed logits.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <catch2/catch.hpp>

#include "sampling/candidates.h"

using namespace uaii::sampling;

namespace {

Candidates Make(const std::vector<float>& logits) {
  Candidates c;
  REQUIRE(FillCandidates(logits, c).ok());
  return c;
}

std::vector<int32_t> Ids(const Candidates& c) {
  std::vector<int32_t> ids;
  for (const TokenData& t : c.data) ids.push_back(t.id);
  return ids;
}

constexpr float kInf = std::numeric_limits<float>::infinity();

}  // namespace

TEST_CASE("FillCandidates rejects empty and NaN and +inf and all -inf logits", "[sampling][filters]") {
  Candidates c;
  CHECK(FillCandidates(std::vector<float>{}, c).code() == absl::StatusCode::kInvalidArgument);
  absl::Status s = FillCandidates(std::vector<float>{0.f, NAN, 1.f}, c);
  CHECK(!s.ok());
  CHECK(s.message().find("token 1") != std::string::npos);
  CHECK(!FillCandidates(std::vector<float>{0.f, kInf}, c).ok());
  s = FillCandidates(std::vector<float>{-kInf, -kInf}, c);
  CHECK(s.message().find("-inf") != std::string::npos);
  CHECK(FillCandidates(std::vector<float>{-kInf, 0.f}, c).ok());
  CHECK(Ids(c) == std::vector<int32_t>{0, 1});
  CHECK_FALSE(c.sorted);
}

TEST_CASE("TopK keeps the k highest sorted with ties to the lowest id", "[sampling][filters]") {
  const std::vector<float> logits = {1.0f, 3.0f, 2.0f, 3.0f, -1.0f, 2.0f, 0.5f};
  SECTION("k = 3 with a tie at the cut") {
    Candidates c = Make(logits);
    TopK(c, 3);
    CHECK(Ids(c) == std::vector<int32_t>{1, 3, 2});  // 3,3 then the lower-id 2.0
    CHECK(c.sorted);
  }
  SECTION("k = 1 picks the lowest id among equal maxima") {
    Candidates c = Make(logits);
    TopK(c, 1);
    CHECK(Ids(c) == std::vector<int32_t>{1});
  }
  SECTION("k >= n keeps everything, sorted") {
    Candidates c = Make(logits);
    TopK(c, 100);
    CHECK(Ids(c) == std::vector<int32_t>{1, 3, 2, 5, 0, 6, 4});
  }
  SECTION("k <= 0 is a no-op") {
    Candidates c = Make(logits);
    TopK(c, 0);
    CHECK(Ids(c) == std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6});
    CHECK_FALSE(c.sorted);
  }
  SECTION("the result does not depend on the input order") {
    Candidates c = Make(logits);
    std::reverse(c.data.begin(), c.data.end());
    TopK(c, 3);
    CHECK(Ids(c) == std::vector<int32_t>{1, 3, 2});
  }
}

TEST_CASE("Softmax matches exp of l - max over the sum", "[sampling][filters]") {
  Candidates c = Make({0.0f, 1.0f, 2.0f, -kInf});
  Softmax(c);
  const double z = 1 + std::exp(1.0) + std::exp(2.0);
  CHECK(c.data[0].p == Approx(1 / z));
  CHECK(c.data[1].p == Approx(std::exp(1.0) / z));
  CHECK(c.data[2].p == Approx(std::exp(2.0) / z));
  CHECK(c.data[3].p == 0.0f);
}

TEST_CASE("TopP keeps the smallest prefix with mass >= p", "[sampling][filters]") {
  // probabilities 0.5, 0.25, 0.125, 0.125 (logits are log-probabilities)
  const std::vector<float> logits = {std::log(0.125f), std::log(0.5f), std::log(0.125f), std::log(0.25f)};
  auto run = [&](float p, size_t min_keep = 0) {
    Candidates c = Make(logits);
    TopP(c, p, min_keep);
    CHECK(c.sorted == (p < 1.0f));
    return Ids(c);
  };
  CHECK(run(0.3f) == std::vector<int32_t>{1});          // 0.5 >= 0.3
  CHECK(run(0.49f) == std::vector<int32_t>{1});         // 0.5 >= 0.49
  CHECK(run(0.6f) == std::vector<int32_t>{1, 3});       // 0.75
  CHECK(run(0.8f) == std::vector<int32_t>{1, 3, 0});    // 0.875, tie 0/2 -> lower id first
  CHECK(run(0.3f, 3) == std::vector<int32_t>{1, 3, 0}); // min_keep
  CHECK(run(1.0f) == std::vector<int32_t>{0, 1, 2, 3}); // disabled: untouched
  // sums of p along the kept prefix
  Candidates c = Make(logits);
  TopP(c, 0.6f, 0);
  CHECK(c.data[0].p == Approx(0.5f));
  CHECK(c.data[1].p == Approx(0.25f));
}

TEST_CASE("TopP on a large vocabulary past the partial-sort prefix", "[sampling][filters]") {
  // 5000 equal-ish logits: the 95% nucleus needs far more than 256 entries.
  std::vector<float> logits(5000);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = static_cast<float>((i * 7919) % 5000) * 1e-4f;
  Candidates c = Make(logits);
  TopP(c, 0.95f, 0);
  REQUIRE(c.size() > 256);
  CHECK(std::is_sorted(c.data.begin(), c.data.end(), Before));
  // smallest prefix: the mass without the last entry is below p
  double mass = 0;
  for (size_t i = 0; i + 1 < c.size(); ++i) mass += c.data[i].p;
  CHECK(mass < 0.95);
  CHECK(mass + c.data.back().p >= 0.95 - 1e-4);
  // every dropped logit is <= the smallest kept one
  Candidates all = Make(logits);
  std::sort(all.data.begin(), all.data.end(), Before);
  const std::vector<int32_t> all_ids = Ids(all);
  CHECK(Ids(c) == std::vector<int32_t>(all_ids.begin(), all_ids.begin() + c.size()));
}

TEST_CASE("MinP keeps p >= min_p * p_max and keeps the order", "[sampling][filters]") {
  // p proportional to 8, 4, 2, 1 in id order 2, 0, 3, 1
  const std::vector<float> logits = {std::log(4.f), std::log(1.f), std::log(8.f), std::log(2.f)};
  auto run = [&](float p, size_t min_keep = 0) {
    Candidates c = Make(logits);
    MinP(c, p, min_keep);
    return Ids(c);
  };
  CHECK(run(0.45f) == std::vector<int32_t>{0, 2});       // 4/8 and 8/8, unsorted order kept
  CHECK(run(0.24f) == std::vector<int32_t>{0, 2, 3});
  CHECK(run(0.9f) == std::vector<int32_t>{2});
  CHECK(run(0.0f) == std::vector<int32_t>{0, 1, 2, 3});  // disabled
  CHECK(run(0.9f, 2) == std::vector<int32_t>{2, 0});     // min_keep: falls back to sorted
  Candidates s = Make(logits);
  TopK(s, 4);
  MinP(s, 0.45f, 0);
  CHECK(Ids(s) == std::vector<int32_t>{2, 0});  // sorted input stays sorted
}

TEST_CASE("Temperature scales logits and t <= 0 keeps only the argmax", "[sampling][filters]") {
  Candidates c = Make({1.0f, -2.0f, 4.0f});
  Temperature(c, 0.5f);
  CHECK(c.data[0].logit == 2.0f);
  CHECK(c.data[1].logit == -4.0f);
  CHECK(c.data[2].logit == 8.0f);
  // a temperature > 1 flattens the softmax
  Candidates a = Make({0.0f, 1.0f}), b = Make({0.0f, 1.0f});
  Temperature(b, 2.0f);
  Softmax(a);
  Softmax(b);
  CHECK(b.data[1].p < a.data[1].p);
  for (float t : {0.0f, -1.0f}) {
    Candidates g = Make({1.0f, 5.0f, 5.0f, 2.0f});
    Temperature(g, t);
    CHECK(g.data[1].logit == 5.0f);  // first maximum = lowest id
    CHECK(g.data[0].logit == -kInf);
    CHECK(g.data[2].logit == -kInf);
    CHECK(g.data[3].logit == -kInf);
  }
}

TEST_CASE("ArgMax is the highest logit with the lowest id on ties", "[sampling][filters]") {
  CHECK(ArgMax(Make({0.f, 2.f, 1.f, 2.f})) == 1);
  Candidates c = Make({0.f, 2.f, 1.f, 2.f});
  std::reverse(c.data.begin(), c.data.end());
  CHECK(c.data[ArgMax(c)].id == 1);
  CHECK(ArgMax(Make({-kInf, -3.f})) == 1);
}

TEST_CASE("Penalties follow the llama.cpp formula", "[sampling][filters]") {
  Candidates c = Make({2.0f, -2.0f, 0.0f, 3.0f, 1.0f});
  const std::vector<TokenCount> counts = {{0, 1}, {1, 2}, {2, 3}, {7, 5}};  // 7 is not a candidate
  ApplyPenalties(c, counts, 2.0f, 0.5f, 0.25f);
  CHECK(c.data[0].logit == Approx(2.0f / 2 - 1 * 0.5f - 0.25f));
  CHECK(c.data[1].logit == Approx(-2.0f * 2 - 2 * 0.5f - 0.25f));
  CHECK(c.data[2].logit == Approx(0.0f * 2 - 3 * 0.5f - 0.25f));  // 0 is multiplied
  CHECK(c.data[3].logit == 3.0f);
  CHECK(c.data[4].logit == 1.0f);
  // the same through the slow path (candidates not indexed by id)
  Candidates d = Make({2.0f, -2.0f, 0.0f, 3.0f, 1.0f});
  TopK(d, 5);
  ApplyPenalties(d, counts, 2.0f, 0.5f, 0.25f);
  CHECK_FALSE(d.sorted);
  for (const TokenData& t : d.data) CHECK(t.logit == c.data[t.id].logit);
}

TEST_CASE("DrawIndex inverts the CDF in array order", "[sampling][filters]") {
  Candidates c = Make({std::log(0.25f), std::log(0.5f), std::log(0.25f)});
  CHECK(DrawIndex(c, 0.0) == 0);
  CHECK(DrawIndex(c, 0.2) == 0);
  CHECK(DrawIndex(c, 0.3) == 1);
  CHECK(DrawIndex(c, 0.74) == 1);
  CHECK(DrawIndex(c, 0.76) == 2);
  CHECK(DrawIndex(c, 0.9999999) == 2);
  CHECK(c.data[1].p == Approx(0.5f));
  // zero-probability entries are never drawn, even at u = 0
  Candidates z = Make({-kInf, 0.0f, -kInf});
  CHECK(DrawIndex(z, 0.0) == 1);
  CHECK(DrawIndex(z, 0.999) == 1);
  // +inf logits (tiny temperature) share the mass instead of producing NaN
  Candidates i = Make({1e30f, 1.0f, 1e30f});
  Temperature(i, 1e-20f);
  CHECK(DrawIndex(i, 0.25) == 0);
  CHECK(DrawIndex(i, 0.75) == 2);
}

TEST_CASE("Penalties find tokens in a permuted array", "[sampling][filters]") {
  Candidates c = Make({1.0f, 2.0f, 3.0f, 4.0f});
  std::swap(c.data[1], c.data[2]);  // ids 0 2 1 3: front and back still look like identity
  const std::vector<TokenCount> counts = {{1, 1}, {3, 2}};
  ApplyPenalties(c, counts, 1.0f, 1.0f, 0.0f);
  CHECK(c.data[0].logit == 1.0f);
  CHECK(c.data[1].logit == 3.0f);  // id 2 untouched
  CHECK(c.data[2].logit == 1.0f);  // id 1: 2 - 1
  CHECK(c.data[3].logit == 2.0f);  // id 3: 4 - 2
}
