// Grammar-constrained greedy decoding on the default model equals llama.cpp's
// (tests/golden/llamacpp/grammar_greedy.json, tests/oracles/llamacpp_grammar.py): the
// same GBNF files, and for the JSON Schemas uaii's converter where llama.cpp used its own
// (equal languages give equal tokens). A divergence passes only where llama.cpp's gap
// between its two best allowed tokens is below kGapEps (a near tie; the case stops
// there), as the unconstrained parity test allows.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>

#include "golden.h"
#include "simdjson.h"
#include "uaii/generation.h"
#include "uaii/grammar.h"

using namespace uaii;
using namespace uaii::testing;

TEST_CASE("grammar parity: constrained greedy decoding equals llama.cpp's on the default model") {
  auto path = DefaultModel();
  if (!path) {
    std::printf("SKIP default model not installed\n");
    return;
  }
  simdjson::dom::parser parser;
  auto doc = parser.load(GoldenDir() + "/grammar_greedy.json");
  REQUIRE(doc.error() == simdjson::SUCCESS);
  auto model = Load(*path);
  SessionOptions so;
  so.threads = 2;
  so.max_context = 512;
  auto gen = Generator::Create(model, so);
  REQUIRE(gen.ok());
  int cases = 0;
  for (auto c : doc["cases"].get_array()) {
    const std::string name{std::string_view(c["grammar"])};
    const std::string text = ReadFile(std::string(UAII_SOURCE_DIR) + "/tests/data/grammars/" + name);
    absl::StatusOr<std::string> gbnf = text;
    if (name.ends_with(".schema.json")) gbnf = JsonSchemaToGrammar(text);
    INFO(name);
    REQUIRE(gbnf.ok());
    GenerationRequest req;
    req.prompt = Ints(c["prompt_tokens"]);
    const std::vector<int32_t> want = Ints(c["tokens"]);
    req.max_tokens = static_cast<int64_t>(want.size());
    req.grammar = *gbnf;
    std::vector<double> gaps;
    for (auto g : c["top2_allowed_gaps"].get_array()) gaps.push_back(double(g));
    auto r = (*gen)->Run(req);
    REQUIRE(r.ok());
    std::vector<int32_t> got = r->tokens;
    if (r->stop == StopReason::kEndOfGeneration) got.push_back(want.back());  // the golden keeps its EOG
    size_t same = 0;
    while (same < want.size() && same < got.size() && got[same] == want[same]) ++same;
    if (same == want.size()) {
      std::printf("grammar parity %-20s %zu/%zu tokens equal\n", name.c_str(), same, want.size());
    } else {
      std::printf("grammar parity %-20s diverges at step %zu where llama.cpp's top-2 allowed gap is %.4f\n",
                  name.c_str(), same, gaps[same]);
      CHECK(gaps[same] < kGapEps);
    }
    ++cases;
  }
  CHECK(cases >= 7);
}
