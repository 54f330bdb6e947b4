// Generator: prefix reuse gives a cold run's tokens; stop strings, cancellation,
// max_tokens, context limits and seeded sampling behave as documented. Runs on the
// tiny random llama written by tests/fixtures/make_tiny_models.py.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "uaii/generation.h"

using namespace uaii;

namespace {

std::shared_ptr<const Model> TinyModel() {
  const char* dir = std::getenv("UAII_FIXTURE_DIR");
  std::string path = std::string(dir ? dir : UAII_FIXTURE_DIR) + "/tiny/tiny-llama-f32.gguf";
  static std::shared_ptr<const Model> model = [&] {
    auto m = Model::Load(path);
    INFO((m.ok() ? "" : std::string(m.status().message())));
    REQUIRE(m.ok());
    return *m;
  }();
  return model;
}

std::unique_ptr<Generator> NewGenerator(int64_t max_context = 256) {
  SessionOptions o;
  o.threads = 1;
  o.max_context = max_context;
  auto g = Generator::Create(TinyModel(), o);
  REQUIRE(g.ok());
  return *std::move(g);
}

std::vector<TokenId> Prompt(int n, int salt = 0) {
  std::vector<TokenId> p = {1};  // BOS
  for (int i = 0; i < n; ++i) p.push_back(260 + (i * 7 + salt) % 60);
  return p;
}

GenerationRequest Greedy(std::vector<TokenId> prompt, int64_t max_tokens) {
  GenerationRequest r;
  r.prompt = std::move(prompt);
  r.max_tokens = max_tokens;
  return r;
}

}  // namespace

TEST_CASE("generator: a follow-up turn reuses the prefix and equals a cold run", "[generation]") {
  auto warm = NewGenerator();
  auto first = warm->Run(Greedy(Prompt(12), 6));
  REQUIRE(first.ok());
  CHECK(first->cached_tokens == 0);
  REQUIRE(first->tokens.size() == 6);

  // Next turn: the conversation so far plus new tokens.
  std::vector<TokenId> next = Prompt(12);
  next.insert(next.end(), first->tokens.begin(), first->tokens.end());
  for (TokenId t : Prompt(5, 3)) next.push_back(t);
  auto second = warm->Run(Greedy(next, 8));
  REQUIRE(second.ok());
  // Everything but the last generated token (never evaluated) was in the cache.
  CHECK(second->cached_tokens == 13 + 5);
  CHECK(second->prefilled_tokens == static_cast<int64_t>(next.size()) - (13 + 5));

  auto cold = NewGenerator()->Run(Greedy(next, 8));
  REQUIRE(cold.ok());
  CHECK(cold->cached_tokens == 0);
  CHECK(second->tokens == cold->tokens);
  CHECK(second->text == cold->text);
}

TEST_CASE("generator: the same prompt twice evaluates one token", "[generation]") {
  auto g = NewGenerator();
  auto a = g->Run(Greedy(Prompt(10), 4));
  auto b = g->Run(Greedy(Prompt(10), 4));
  REQUIRE((a.ok() && b.ok()));
  CHECK(b->cached_tokens == 10);
  CHECK(b->prefilled_tokens == 1);
  CHECK(a->tokens == b->tokens);
}

TEST_CASE("generator: a stop string ends the reply before it", "[generation]") {
  auto full = NewGenerator()->Run(Greedy(Prompt(8), 12));
  REQUIRE(full.ok());
  REQUIRE(full->text.size() > 12);
  std::string stop = full->text.substr(full->text.size() / 2, 4);
  size_t at = full->text.find(stop);
  GenerationRequest req = Greedy(Prompt(8), 12);
  req.stop = {stop};
  std::string streamed;
  auto r = NewGenerator()->Run(req, [&](TokenId, std::string_view text) {
    streamed += text;
    return true;
  });
  REQUIRE(r.ok());
  CHECK(r->stop == StopReason::kStopString);
  CHECK(r->text == full->text.substr(0, at));
  CHECK(streamed == r->text);
}

TEST_CASE("generator: max_tokens, cancellation and a full context", "[generation]") {
  auto zero = NewGenerator()->Run(Greedy(Prompt(4), 0));
  REQUIRE(zero.ok());
  CHECK(zero->tokens.empty());
  CHECK(zero->stop == StopReason::kMaxTokens);

  int calls = 0;
  auto cancelled = NewGenerator()->Run(Greedy(Prompt(4), 20), [&](TokenId, std::string_view) {
    return ++calls < 3;
  });
  REQUIRE(cancelled.ok());
  CHECK(cancelled->stop == StopReason::kCancelled);
  CHECK(cancelled->tokens.size() == 3);

  auto full = NewGenerator(/*max_context=*/16)->Run(Greedy(Prompt(10), 50));
  REQUIRE(full.ok());
  CHECK(full->stop == StopReason::kContextFull);
  CHECK(full->tokens.size() == 16 - 11 + 1);

  auto too_long = NewGenerator(16)->Run(Greedy(Prompt(30), 4));
  REQUIRE(!too_long.ok());
  CHECK_THAT(std::string(too_long.status().message()), Catch::Contains("the context holds 16"));
}

TEST_CASE("generator: a seed reproduces a sampled run", "[generation]") {
  GenerationRequest req = Greedy(Prompt(6), 16);
  req.sampling = sampling::SamplingParams{};
  req.sampling.temperature = 1.5f;
  req.sampling.top_k = 0;
  req.sampling.top_p = 1.0f;
  req.sampling.min_p = 0.0f;
  req.sampling.seed = 7;
  auto a = NewGenerator()->Run(req);
  auto b = NewGenerator()->Run(req);
  req.sampling.seed = 8;
  auto c = NewGenerator()->Run(req);
  REQUIRE((a.ok() && b.ok() && c.ok()));
  CHECK(a->tokens == b->tokens);
  CHECK(a->tokens != c->tokens);

  req.sampling.top_p = 2.0f;  // invalid: a named error, not a crash
  auto bad = NewGenerator()->Run(req);
  REQUIRE(!bad.ok());
  CHECK_THAT(std::string(bad.status().message()), Catch::Contains("top_p"));
}
