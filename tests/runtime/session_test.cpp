// Session on the tiny fixtures and the default model: loading errors, and row-exact
// prefill (a row's logits are bit-identical at once, chunked, or token by token).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "loaders/model_locator.h"
#include "uaii/session.h"

using namespace uaii;

namespace {

std::string Tiny(const std::string& name) { return std::string(UAII_FIXTURE_DIR) + "/tiny/" + name; }

std::vector<TokenId> TinyPrompt() {
  std::ifstream in(Tiny("prompt.txt"));
  return {std::istream_iterator<TokenId>(in), std::istream_iterator<TokenId>()};
}

std::shared_ptr<const Model> LoadOrFail(const std::string& path) {
  if (!std::filesystem::exists(path)) FAIL("missing " << path << " (run tests/fixtures/make_tiny_models.py)");
  auto m = Model::Load(path);
  INFO(m.status().ToString());
  REQUIRE(m.ok());
  return *m;
}

// Logits of every prompt row with the given chunk size (0: one token per Eval call).
std::vector<float> AllRows(std::shared_ptr<const Model> m, const std::vector<TokenId>& prompt, int64_t chunk,
                           int threads = 2) {
  SessionOptions o;
  o.threads = threads;
  o.max_context = 256;
  o.prefill_chunk = chunk > 0 ? chunk : 1;
  auto s = Session::Create(m, o);
  REQUIRE(s.ok());
  std::vector<float> all;
  if (chunk > 0) {
    auto r = (*s)->Eval(prompt, /*all_logits=*/true);
    REQUIRE(r.ok());
    all = *r;
  } else {
    for (TokenId t : prompt) {
      auto r = (*s)->Decode(t);
      REQUIRE(r.ok());
      all.insert(all.end(), r->begin(), r->end());
    }
  }
  return all;
}

void CheckRowExact(const std::string& path, const std::vector<TokenId>& prompt) {
  auto m = LoadOrFail(path);
  auto once = AllRows(m, prompt, 512);
  REQUIRE(once.size() == prompt.size() * m->info().n_vocab);
  CHECK(std::all_of(once.begin(), once.end(), [](float x) { return std::isfinite(x); }));
  for (int64_t chunk : {int64_t{7}, int64_t{0}}) {
    auto other = AllRows(m, prompt, chunk, chunk == 7 ? 1 : 2);
    REQUIRE(other.size() == once.size());
    INFO(path << " chunk " << chunk);
    CHECK(std::memcmp(other.data(), once.data(), once.size() * sizeof(float)) == 0);
  }
}

}  // namespace

TEST_CASE("session: tiny models are row-exact across chunkings") {
  auto prompt = TinyPrompt();
  REQUIRE(prompt.size() == 64);
  for (std::string fam : {"llama", "gemma3"})
    for (std::string ty : {"f32", "f16", "q8_0", "q4_0", "q4_k"}) CheckRowExact(Tiny("tiny-" + fam + "-" + ty + ".gguf"), prompt);
}

TEST_CASE("session: eval errors leave the session usable") {
  auto m = LoadOrFail(Tiny("tiny-llama-f16.gguf"));
  SessionOptions o;
  o.max_context = 8;
  auto s = Session::Create(m, o);
  REQUIRE(s.ok());
  std::vector<TokenId> bad = {5, 6, 99999};
  auto r = (*s)->Eval(bad);
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.status().message()).find("99999") != std::string::npos);
  CHECK((*s)->n_past() == 0);
  const absl::Status null_out = (*s)->DecodeInto(5, nullptr);
  CHECK(std::string(null_out.message()).find("null logits") != std::string::npos);
  CHECK((*s)->n_past() == 0);
  std::vector<TokenId> too_long(9, 5);
  CHECK_FALSE((*s)->Eval(too_long).ok());
  auto ok = (*s)->Eval(std::vector<TokenId>{5, 6, 7});
  REQUIRE(ok.ok());
  CHECK((*s)->n_past() == 3);
  (*s)->Truncate(1);
  CHECK((*s)->n_past() == 1);
}

// The generation loop's step (generation/generator.cpp): DecodeInto gives Decode's
// logits bit for bit, into the caller's reused vector (that it allocates nothing per
// token is decode_alloc_test.cpp's). A chunked prefill with every row's logits still
// concatenates the chunks.
TEST_CASE("session: EvalInto and DecodeInto equal Eval and Decode") {
  auto m = LoadOrFail(Tiny("tiny-gemma3-q4_0.gguf"));
  const auto prompt = TinyPrompt();
  SessionOptions o;
  o.max_context = 128;
  o.prefill_chunk = 7;
  auto a = Session::Create(m, o), b = Session::Create(m, o);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  auto all = (*a)->Eval(prompt, /*all_logits=*/true);
  REQUIRE(all.ok());
  std::vector<float> into;
  REQUIRE((*b)->EvalInto(prompt, &into, /*all_logits=*/true).ok());
  CHECK(into == *all);
  const int64_t vocab = m->info().n_vocab;
  for (int step = 0; step < 6; ++step) {
    const TokenId t = prompt[step];
    auto ref = (*a)->Decode(t);
    REQUIRE(ref.ok());
    REQUIRE((*b)->DecodeInto(t, &into).ok());
    REQUIRE(static_cast<int64_t>(into.size()) == vocab);
    CHECK(std::memcmp(into.data(), ref->data(), vocab * sizeof(float)) == 0);
  }
}

TEST_CASE("session: load errors name the cause") {
  auto r = Model::Load(std::string(UAII_FIXTURE_DIR) + "/does-not-exist.gguf");
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.status().message()).find("does-not-exist.gguf") != std::string::npos);
}

TEST_CASE("session: default model is row-exact") {
  auto path = ResolveModelPath("");
  if (!path.ok()) {
    WARN("SKIP default model: " << path.status().message());
    return;
  }
  auto m = LoadOrFail(*path);
  auto ids = m->tokenizer().Encode("The capital of France is Paris. The capital of Germany is");
  REQUIRE(ids.ok());
  CheckRowExact(*path, *ids);
}

TEST_CASE("session: a model without end-of-generation tokens fails to load") {
  const std::string path = std::string(UAII_FIXTURE_DIR) + "/tiny/noeog-llama-q4_0.gguf";
  if (!std::filesystem::exists(path)) FAIL("missing " << path << " (run tests/fixtures/make_tiny_models.py)");
  auto m = Model::Load(path);
  REQUIRE_FALSE(m.ok());
  const std::string msg(m.status().message());
  CHECK(msg.find("noeog-llama-q4_0.gguf") != std::string::npos);
  CHECK(msg.find("end-of-generation") != std::string::npos);
}

TEST_CASE("session: greedy generation stops at max tokens and reports timings") {
  auto m = LoadOrFail(Tiny("tiny-gemma3-q8_0.gguf"));
  auto s = Session::Create(m, SessionOptions{.threads = 1, .max_context = 128});
  REQUIRE(s.ok());
  auto prompt = TinyPrompt();
  prompt.resize(10);
  std::vector<TokenId> seen;
  auto r = GenerateGreedy(**s, prompt, GenerateOptions{.max_tokens = 6}, [&](TokenId t) {
    seen.push_back(t);
    return true;
  });
  REQUIRE(r.ok());
  CHECK(r->prompt_tokens == 10);
  CHECK(r->tokens == seen);
  if (r->stop == StopReason::kMaxTokens) CHECK(r->tokens.size() == 6);
  // Greedy is deterministic and equals argmax over a fresh teacher-forced pass.
  auto s2 = Session::Create(m, SessionOptions{.threads = 2, .max_context = 128});
  REQUIRE(s2.ok());
  std::vector<TokenId> seq = prompt;
  seq.insert(seq.end(), r->tokens.begin(), r->tokens.end());
  auto all = (*s2)->Eval(seq, true);
  REQUIRE(all.ok());
  const int64_t V = m->info().n_vocab;
  for (size_t i = 0; i < r->tokens.size(); ++i)
    CHECK(ArgMax(std::span<const float>(all->data() + (prompt.size() - 1 + i) * V, V)) == r->tokens[i]);
}

TEST_CASE("session: the model's graph prints as .uaii.json and parses back") {
  auto m = LoadOrFail(Tiny("tiny-llama-q4_k.gguf"));
  auto json = m->GraphJson();
  REQUIRE(json.ok());
  CHECK(json->find("tiny-llama-q4_k.gguf") != std::string::npos);  // file#tensor references
  CHECK(json->find("\"attention\"") != std::string::npos);
  CHECK(json->find("Q4_K") != std::string::npos);
}

TEST_CASE("Session: a context past the model's training maximum is an error, not a clamp", "[session]") {
  auto m = LoadOrFail(Tiny("tiny-llama-f32.gguf"));
  const int64_t model_max = m->info().n_ctx_train;
  REQUIRE(model_max == 256);
  auto over = Session::Create(m, SessionOptions{.threads = 1, .max_context = model_max + 1});
  REQUIRE_FALSE(over.ok());
  CHECK(over.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(over.status().message()) == "context_length 257 exceeds the model maximum 256");
  // ... with a KV window too (positions past the trained context stay refused).
  auto windowed = Session::Create(m, SessionOptions{.threads = 1, .max_context = 1024, .kv_window = 64});
  REQUIRE_FALSE(windowed.ok());
  CHECK_THAT(std::string(windowed.status().message()), Catch::Contains("exceeds the model maximum 256"));
  // The default is the model's maximum when that is smaller than kDefaultMaxContext.
  auto dflt = Session::Create(m, SessionOptions{.threads = 1});
  REQUIRE(dflt.ok());
  CHECK((*dflt)->max_context() == model_max);
  auto exact = Session::Create(m, SessionOptions{.threads = 1, .max_context = model_max});
  REQUIRE(exact.ok());
  CHECK((*exact)->max_context() == model_max);
}
