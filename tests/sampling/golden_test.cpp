// The sampler against committed goldens written by references that are not
// uaii: numpy transcriptions of llama.cpp's formulas (tests/oracles/
// sampler_penalties.py, sampler_filters.py) and llama.cpp itself through
// llama-cpp-python (tests/oracles/sampler_llama_cpp.py). All share the cases of
// tests/oracles/sampler_cases.py; each case names a stage:
//   penalties | top_k | top_p | min_p | temperature : one filter on a fresh array
//   chain : the whole chain without the draw        draw : seeded tokens, accepted
// ids must match exactly and in order (the draw walks that order); logits to
// 1e-6 relative (numpy's float32 exp/log may differ from libm's by an ulp).
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <simdjson.h>

#include "sampling/sampler.h"

using namespace uaii::sampling;
namespace fs = std::filesystem;

namespace {

fs::path GoldenDir() { return fs::path(UAII_SOURCE_DIR) / "tests" / "golden" / "sampling"; }

std::vector<float> Floats(simdjson::dom::array a) {
  std::vector<float> out;
  for (simdjson::dom::element e : a) {
    out.push_back(e.is_null() ? -std::numeric_limits<float>::infinity() : static_cast<float>(double(e)));
  }
  return out;
}

std::vector<int32_t> Ints(simdjson::dom::array a) {
  std::vector<int32_t> out;
  for (simdjson::dom::element e : a) out.push_back(static_cast<int32_t>(int64_t(e)));
  return out;
}

SamplingParams Params(simdjson::dom::object o) {
  SamplingParams p;
  p.temperature = static_cast<float>(double(o["temperature"]));
  p.top_k = static_cast<int32_t>(int64_t(o["top_k"]));
  p.top_p = static_cast<float>(double(o["top_p"]));
  p.min_p = static_cast<float>(double(o["min_p"]));
  p.repeat_penalty = static_cast<float>(double(o["repeat_penalty"]));
  p.presence_penalty = static_cast<float>(double(o["presence_penalty"]));
  p.frequency_penalty = static_cast<float>(double(o["frequency_penalty"]));
  p.penalty_last_n = static_cast<int32_t>(int64_t(o["penalty_last_n"]));
  p.min_keep = static_cast<int32_t>(int64_t(o["min_keep"]));
  return p;
}

void CheckLogits(const Candidates& c, const std::vector<float>& want) {
  REQUIRE(c.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const float got = c.data[i].logit;
    if (std::isinf(want[i])) {
      CHECK(got == want[i]);
    } else {
      INFO("entry " << i << " id " << c.data[i].id);
      CHECK(got == Approx(want[i]).epsilon(1e-6).margin(1e-6));
    }
  }
}

// Runs every case of one golden file; returns how many ran.
int RunGolden(const std::string& file) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.load((GoldenDir() / file).string());
  INFO("golden " << file << ", reference: " << std::string_view(doc["reference"]));
  int n = 0;
  for (simdjson::dom::object c : doc["cases"].get_array()) {
    const std::string name{std::string_view(c["name"])};
    const std::string stage{std::string_view(c["stage"])};
    INFO("case " << name);
    const SamplingParams p = Params(c["params"]);
    REQUIRE(ValidateSamplingParams(p).ok());
    PenaltyWindow window(p.penalty_last_n);
    for (int32_t t : Ints(c["window"])) window.Push(t);
    const std::vector<TokenCount> counts = window.Counts();

    if (stage == "draw") {
      SamplingParams sp = p;
      sp.seed = static_cast<uint32_t>(int64_t(c["seed"]));
      auto s = Sampler::Create(sp);
      REQUIRE(s.ok());
      std::vector<int32_t> got;
      for (simdjson::dom::array row : c["rows"].get_array()) got.push_back(*s->SampleAndAccept(Floats(row)));
      CHECK(got == Ints(c["tokens"]));
      ++n;
      continue;
    }
    const std::vector<float> logits = Floats(c["logits"]);
    Candidates cand;
    if (stage == "chain") {
      REQUIRE(ApplyChain(p, counts, logits, cand).ok());
    } else {
      REQUIRE(FillCandidates(logits, cand).ok());
      if (stage == "penalties") {
        if (p.penalties_enabled())
          ApplyPenalties(cand, counts, p.repeat_penalty, p.frequency_penalty, p.presence_penalty);
      } else if (stage == "top_k") {
        TopK(cand, p.top_k);
      } else if (stage == "top_p") {
        TopP(cand, p.top_p, static_cast<size_t>(p.min_keep));
      } else if (stage == "min_p") {
        MinP(cand, p.min_p, static_cast<size_t>(p.min_keep));
      } else if (stage == "temperature") {
        Temperature(cand, p.temperature);
      } else {
        FAIL("unknown stage " << stage);
      }
    }
    std::vector<int32_t> ids;
    for (const TokenData& t : cand.data) ids.push_back(t.id);
    CHECK(ids == Ints(c["ids"]));
    if (ids == Ints(c["ids"])) CheckLogits(cand, Floats(c["logits_out"]));
    ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("Penalties match the numpy transcription of llama.cpp", "[sampling][golden]") {
  CHECK(RunGolden("penalties_numpy.json") >= 8);
}

TEST_CASE("Filters and chain and seeded draws match the numpy transcription of llama.cpp", "[sampling][golden]") {
  CHECK(RunGolden("filters_numpy.json") >= 40);
}

TEST_CASE("Filters and chain and seeded draws match llama.cpp via llama-cpp-python", "[sampling][golden]") {
  if (!fs::exists(GoldenDir() / "llama_cpp.json")) {
    WARN("SKIP: tests/golden/sampling/llama_cpp.json not generated yet (tests/oracles/sampler_llama_cpp.py)");
    return;
  }
  CHECK(RunGolden("llama_cpp.json") >= 40);
}
