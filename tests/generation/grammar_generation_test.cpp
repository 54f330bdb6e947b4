// Generation under a grammar (GenerationRequest::grammar, TokenSampler with a grammar):
// every reply follows the grammar whatever the seed, ends with end-of-generation where
// the grammar completes, and a bad grammar is refused before anything runs. On the tiny
// random llama (tests/fixtures/make_tiny_models.py): its logits favour no grammar.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <regex>
#include <string>

#include "uaii/generation.h"
#include "uaii/grammar.h"
#include "uaii/token_sampler.h"

using namespace uaii;

namespace {

std::shared_ptr<const Model> Tiny() {
  const char* dir = std::getenv("UAII_FIXTURE_DIR");
  static std::shared_ptr<const Model> model = [&] {
    auto m = Model::Load(std::string(dir ? dir : UAII_FIXTURE_DIR) + "/tiny/tiny-llama-f32.gguf");
    REQUIRE(m.ok());
    return *m;
  }();
  return model;
}

std::unique_ptr<Generator> NewGenerator() {
  SessionOptions o;
  o.threads = 1;
  o.max_context = 256;
  auto g = Generator::Create(Tiny(), o);
  REQUIRE(g.ok());
  return *std::move(g);
}

GenerationRequest Request(const std::string& grammar, uint32_t seed) {
  GenerationRequest r;
  r.prompt = {1, 300, 301, 302};
  r.max_tokens = 60;
  r.grammar = grammar;
  r.sampling = sampling::SamplingParams{};  // llama.cpp's defaults: temperature 0.8, top-k 40, ...
  r.sampling.temperature = 1.5f;            // spread the draws over many tokens
  r.sampling.seed = seed;
  return r;
}

}  // namespace

TEST_CASE("grammar generation: every seed's reply follows the grammar and ends where it completes",
          "[generation][grammar]") {
  const std::string gbnf = "root ::= \"{\" item (\", \" item){0,2} \"}\"\nitem ::= [a-z]{1,4} \"=\" [0-9]+\n";
  const std::regex whole(R"(\{[a-z]{1,4}=[0-9]+(, [a-z]{1,4}=[0-9]+){0,2}\})");
  auto gen = NewGenerator();
  int ended = 0;
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    auto r = gen->Run(Request(gbnf, seed));
    REQUIRE(r.ok());
    INFO("seed " << seed << ": " << r->text);
    if (r->stop == StopReason::kEndOfGeneration) {
      ++ended;
      CHECK(std::regex_match(r->text, whole));
    } else {
      // Cut by max_tokens: still a prefix the grammar allows (digits may run on).
      CHECK(r->stop == StopReason::kMaxTokens);
      CHECK(r->text.rfind('{', 0) == 0);
    }
  }
  CHECK(ended > 0);
}

TEST_CASE("grammar generation: greedy under a grammar picks the best token it allows", "[generation][grammar]") {
  const Tokenizer& tok = Tiny()->tokenizer();
  const TokenId x = tok.Encode("x", {.add_special = false})->back();
  const TokenId y = tok.Encode("y", {.add_special = false})->back();
  std::vector<float> logits(tok.vocab_size(), 0.0f);
  logits[x] = 5.0f;  // the best overall, but the grammar wants "y"
  logits[y] = 1.0f;
  auto s = TokenSampler::Create(sampling::SamplingParams::Greedy(), tok, "root ::= [y-z]+\n");
  REQUIRE(s.ok());
  auto t = (*s)->Sample(logits);
  REQUIRE(t.ok());
  CHECK(*t == y);
  // Unconstrained, the same logits give x.
  auto free = TokenSampler::Create(sampling::SamplingParams::Greedy());
  CHECK(*(*free)->Sample(logits) == x);
}

TEST_CASE("grammar generation: an invalid grammar fails before generating", "[generation][grammar]") {
  auto gen = NewGenerator();
  auto r = gen->Run(Request("root ::= undefined-rule\n", 1));
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(std::string(r.status().message()), Catch::Contains("undefined rule 'undefined-rule'"));
  CHECK(ValidateGrammar("root ::= ").ok());  // the empty sentence alone is a valid grammar
}

TEST_CASE("grammar generation: a TokenSampler with a grammar samples and accepts only what it allows",
          "[generation][grammar]") {
  auto s = TokenSampler::Create(sampling::SamplingParams::Greedy(), Tiny()->tokenizer(), "root ::= \"ab\"\n");
  REQUIRE(s.ok());
  CHECK((*s)->constrained());
  const Tokenizer& tok = Tiny()->tokenizer();
  std::vector<float> logits(tok.vocab_size(), 0.0f);
  std::string out;
  for (int i = 0; i < 4 && !(*s)->grammar_complete(); ++i) {
    auto t = (*s)->SampleAndAccept(logits);
    REQUIRE(t.ok());
    out += tok.TokenBytes(*t);
  }
  CHECK(out == "ab");
  CHECK((*s)->grammar_complete());
  // Only end-of-generation is left.
  auto last = (*s)->Sample(logits);
  REQUIRE(last.ok());
  CHECK(tok.IsEndOfGeneration(*last));
  // A token outside the grammar is refused by Accept, naming it.
  (*s)->Reset();
  const TokenId z = tok.Encode("z", {.add_special = false})->front();
  absl::Status st = (*s)->Accept(z);
  CHECK_FALSE(st.ok());
  CHECK_THAT(std::string(st.message()), Catch::Contains("not allowed"));
}

TEST_CASE("grammar generation: a schema whose grammar no loader can take is refused, naming why",
          "[generation][grammar]") {
  // llama.cpp's converter writes {2,1} here, which its own grammar loader never finishes.
  auto g = JsonSchemaToGrammar(R"({"type": "string", "minLength": 2, "maxLength": 1})");
  REQUIRE_FALSE(g.ok());
  CHECK_THAT(std::string(g.status().message()), Catch::Contains("cannot be used"));
  CHECK_THAT(std::string(g.status().message()), Catch::Contains("n < m"));
  CHECK(JsonSchemaToGrammar(R"({"type": "string", "minLength": 1, "maxLength": 2})").ok());
}
