// Parity with llama.cpp (llama-cpp-python, CPU, F16 KV cache, no flash attention),
// against the committed goldens in tests/golden/llamacpp/ (see tests/oracles/).
//
// Tolerances (golden.h; llama.cpp's CPU build uses other SIMD paths — AVX-512, llamafile
// sgemm, repacked Q4 layouts — so its float sums differ from ours in order, not in
// math; the figures below bound that drift and are reported by every run):
//   tiny models:   max |logit - llama.cpp| <= TinyTolerance(type) over 64 rows x 320
//   greedy:        tokens equal; a divergence passes only where llama.cpp's own
//                  top-2 gap at that step is < kGapEps (then the case stops there)
//   teacher-forced: top-1 equals llama.cpp's where its top-2 gap >= kGapEps;
//                  llama.cpp's top-20 logits within kTopTol; full rows within
//                  kTopTol + the golden's quantization (1 / (2 * scale)).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "golden.h"
#include "loaders/model_locator.h"
#include "simdjson.h"
#include "uaii/session.h"

using namespace uaii;
using namespace uaii::testing;


TEST_CASE("parity: tiny random models match llama.cpp logits") {
  const std::string dir = GoldenDir() + "/tiny";
  REQUIRE(std::filesystem::exists(dir));
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    simdjson::dom::parser parser;
    auto doc = parser.load(entry.path().string());
    REQUIRE(doc.error() == simdjson::SUCCESS);
    std::string file = std::string(std::string_view(doc["model_file"]));
    std::string path = std::string(UAII_FIXTURE_DIR) + "/tiny/" + file;
    if (!std::filesystem::exists(path)) FAIL("missing fixture " << path << " (run make_tiny_models.py)");
    auto prompt = Ints(doc["prompt_tokens"]);
    auto want = F32FromBase64(std::string_view(doc["logits_f32_b64"]));
    auto m = Load(path);
    auto s = NewSession(m, 256);
    auto got = s->Eval(prompt, /*all_logits=*/true);
    REQUIRE(got.ok());
    REQUIRE(got->size() == want.size());
    double max_diff = 0;
    for (size_t i = 0; i < want.size(); ++i) max_diff = std::max(max_diff, double(std::fabs((*got)[i] - want[i])));
    const double tol = TinyTolerance(file);
    std::printf("parity tiny %-22s max |dlogit| = %.6f (tolerance %.3f)\n", file.c_str(), max_diff, tol);
    CHECK(max_diff <= tol);
    ++n;
  }
  CHECK(n == 10);
}

TEST_CASE("parity: default model greedy continuations equal llama.cpp's") {
  auto path = DefaultModel();
  if (!path) {
    std::printf("SKIP default model not installed\n");
    return;
  }
  simdjson::dom::parser parser;
  auto doc = parser.load(GoldenDir() + "/greedy.json");
  REQUIRE(doc.error() == simdjson::SUCCESS);
  auto m = Load(*path);
  int cases = 0;
  for (auto c : doc["cases"].get_array()) {
    auto prompt = Ints(c["prompt_tokens"]);
    auto want = Ints(c["tokens"]);
    std::vector<double> gaps;
    for (auto g : c["top2_gaps"].get_array()) gaps.push_back(double(g));
    auto s = NewSession(m, 256);
    auto logits = s->Eval(prompt);
    REQUIRE(logits.ok());
    size_t same = 0;
    for (; same < want.size(); ++same) {
      TokenId t = ArgMax(*logits);
      if (t != want[same]) break;
      logits = s->Decode(t);
      REQUIRE(logits.ok());
    }
    std::string_view p = c["prompt"];
    if (same == want.size()) {
      std::printf("parity greedy '%.*s': %zu/%zu tokens equal\n", int(p.size()), p.data(), same, want.size());
    } else {
      std::printf("parity greedy '%.*s': diverges at step %zu where llama.cpp's top-2 gap is %.4f (eps %.2f)\n",
                  int(p.size()), p.data(), same, gaps[same], kGapEps);
      CHECK(gaps[same] < kGapEps);
    }
    ++cases;
  }
  CHECK(cases >= 5);
}

