// Speculative decoding through the C ABI: uaii_session_options' draft fields (draft_model,
// n_draft and the appended draft_max, draft_min, draft_p_min, draft_auto, draft_rule),
// their defaults for an older caller's smaller struct, their errors, and the result's
// counters (draft_tokens, draft_accepted_tokens, the appended draft_acceptance_rate).
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdlib>
#include <string>

#include "uaii.h"

namespace {

std::string TinyFile(const std::string& name) {
  const char* dir = std::getenv("UAII_FIXTURE_DIR");
  return std::string(dir ? dir : UAII_FIXTURE_DIR) + "/tiny/" + name;
}

struct Model {
  uaii_model* m = nullptr;
  explicit Model(const std::string& name) { REQUIRE(uaii_model_open(TinyFile(name).c_str(), nullptr, &m) == UAII_OK); }
  ~Model() { uaii_model_destroy(m); }
};

uaii_session_options Options() {
  uaii_session_options o;
  uaii_session_options_init(&o);
  o.threads = 1;
  o.max_context = 256;
  return o;
}

struct Reply {
  std::string text;
  uaii_generate_result result{};
};

Reply Generate(uaii_model* m, const uaii_session_options& o, float temperature = 0) {
  uaii_session* s = nullptr;
  INFO(uaii_last_error());
  REQUIRE(uaii_session_create(m, &o, &s) == UAII_OK);
  uaii_generate_options g;
  uaii_generate_options_init(&g);
  g.max_tokens = 24;
  g.temperature = temperature;
  g.seed = 5;
  Reply r;
  r.result.struct_size = sizeof r.result;
  char* text = nullptr;
  REQUIRE(uaii_session_generate(s, "tok5 tok6 tok7", &g, nullptr, nullptr, &r.result, &text) == UAII_OK);
  r.text = text;
  uaii_string_free(text);
  uaii_session_destroy(s);
  return r;
}

std::string CreateError(uaii_model* m, const uaii_session_options& o) {
  uaii_session* s = nullptr;
  const uaii_status st = uaii_session_create(m, &o, &s);
  uaii_session_destroy(s);
  CHECK(st == UAII_ERR_INVALID_ARGUMENT);
  return uaii_last_error();
}

}  // namespace

TEST_CASE("capi speculative: the defaults are llama.cpp's", "[capi]") {
  uaii_session_options o;
  uaii_session_options_init(&o);
  CHECK(o.draft_model == nullptr);
  CHECK(o.draft_max == 0);  // n_draft's, else UAII_MAX_DRAFT_TOKENS
  CHECK(o.draft_min == 0);
  CHECK(o.draft_p_min == 0.75f);
  CHECK(o.draft_auto == 0);
  CHECK(o.draft_rule == UAII_DRAFT_RULE_AUTO);
  CHECK(o.draft_path == nullptr);
  CHECK(UAII_MAX_DRAFT_TOKENS == 16);
}

TEST_CASE("capi speculative: the knobs reach the generator, the result counts the proposals", "[capi]") {
  Model model("tiny-llama-f32.gguf"), draft("tiny-llama-q4_0.gguf");
  const Reply plain = Generate(model.m, Options());
  CHECK(plain.result.draft_tokens == 0);
  CHECK(plain.result.draft_acceptance_rate == 0);
  uaii_session_options o = Options();
  o.draft_model = model.m;  // its own draft: every greedy proposal kept
  o.draft_max = 5;
  o.draft_p_min = 0;
  const Reply self = Generate(model.m, o);
  CHECK(self.text == plain.text);
  CHECK(self.result.draft_tokens > 0);
  CHECK(self.result.draft_accepted_tokens == self.result.draft_tokens);
  CHECK(self.result.draft_acceptance_rate == 1.0);
  // Sampled with the exact-match rule: the plain reply, token for token.
  o.draft_model = draft.m;
  o.draft_rule = UAII_DRAFT_RULE_EXACT;
  const Reply sampled_plain = Generate(model.m, Options(), 0.9f);
  const Reply exact = Generate(model.m, o, 0.9f);
  CHECK(exact.text == sampled_plain.text);
  REQUIRE(exact.result.draft_tokens > 0);
  CHECK(exact.result.draft_acceptance_rate ==
        Approx(double(exact.result.draft_accepted_tokens) / double(exact.result.draft_tokens)));
  // p_min 1: the drafter is never that sure, so nothing is proposed or verified.
  o.draft_p_min = 1;
  CHECK(Generate(model.m, o).result.draft_tokens == 0);
}

TEST_CASE("capi speculative: an older caller's struct keeps the knobs' defaults", "[capi]") {
  Model model("tiny-llama-f32.gguf");
  uaii_session_options o = Options();
  o.draft_model = model.m;
  o.n_draft = 3;
  o.draft_p_min = 0;  // past the older struct: not read, the default 0.75 applies
  o.draft_max = 99;   // likewise: an error if it were read
  o.struct_size = offsetof(uaii_session_options, draft_max);
  const Reply r = Generate(model.m, o);
  // The tiny model's nearly flat logits never reach a top probability of 0.75.
  CHECK(r.result.draft_tokens == 0);
  // With the new fields read, n_draft is draft_max's alias.
  o.struct_size = sizeof o;
  o.draft_max = 0;
  const Reply n = Generate(model.m, o);
  CHECK(n.result.draft_tokens > 0);
  // A result struct from before draft_acceptance_rate is written only that far.
  uaii_session* s = nullptr;
  REQUIRE(uaii_session_create(model.m, &o, &s) == UAII_OK);
  uaii_generate_result old{};
  old.struct_size = offsetof(uaii_generate_result, draft_acceptance_rate);
  old.draft_acceptance_rate = -1;
  REQUIRE(uaii_session_generate(s, "tok5 tok6", nullptr, nullptr, nullptr, &old, nullptr) == UAII_OK);
  CHECK(old.draft_tokens > 0);
  CHECK(old.draft_acceptance_rate == -1);
  uaii_session_destroy(s);
}

TEST_CASE("capi speculative: bad knobs are refused with the library's message", "[capi]") {
  Model model("tiny-llama-f32.gguf");
  uaii_session_options o = Options();
  o.draft_model = model.m;
  o.draft_max = 17;
  CHECK_THAT(CreateError(model.m, o), Catch::Contains("draft_max 17 is outside 1..16") && Catch::Contains("17 rows"));
  o.draft_max = -2;
  CHECK_THAT(CreateError(model.m, o), Catch::Contains("draft_max -2 is negative"));
  o.draft_max = 4;
  o.draft_min = 6;
  CHECK_THAT(CreateError(model.m, o), Catch::Contains("draft_min 6 is outside 0..draft_max (4)"));
  o.draft_min = 0;
  o.draft_p_min = -0.5f;
  CHECK_THAT(CreateError(model.m, o), Catch::Contains("p_min -0.5 is outside [0, 1]"));
  o.draft_p_min = 0.5f;
  o.draft_rule = 9;
  CHECK_THAT(CreateError(model.m, o), Catch::Contains("unknown draft_rule 9"));
  o.draft_rule = UAII_DRAFT_RULE_AUTO;
  o.draft_auto = 1;
  CHECK_THAT(CreateError(model.m, o), Catch::Contains("one drafter"));
  o.draft_model = nullptr;
  CHECK_THAT(CreateError(model.m, o), Catch::Contains("architecture 'llama' has no in-trunk multi-token-prediction head"));
}

// 0.5: draft_path. The gemma4 assistant is no model of its own (it reads its target's
// cache and hidden state), so a C caller names its file; greedy replies equal the plain
// session's. Any other file is loaded as a draft model. At most one drafter; an older
// caller's struct never reads the field.
TEST_CASE("capi speculative: draft_path opens the gemma4 assistant (or a draft model file)", "[capi]") {
  const char* dir_env = std::getenv("UAII_FIXTURE_DIR");
  const std::string dir = dir_env ? dir_env : UAII_FIXTURE_DIR;
  for (const char* kind : {"f32", "q8_0", "q4_0"}) {
    INFO(kind);
    uaii_model* target = nullptr;
    REQUIRE(uaii_model_open((dir + "/gemma4/" + kind + ".gguf").c_str(), nullptr, &target) == UAII_OK);
    const Reply plain = Generate(target, Options());
    const std::string assistant = dir + "/gemma4-assistant/" + kind + ".gguf";
    uaii_session_options o = Options();
    o.draft_path = assistant.c_str();
    o.draft_p_min = 0;  // a random assistant is never sure: propose anyway
    const Reply spec = Generate(target, o);
    CHECK(spec.text == plain.text);
    CHECK(spec.result.draft_tokens > 0);
    // An older caller's struct ends before draft_path: no drafter.
    o.struct_size = offsetof(uaii_session_options, draft_path);
    CHECK(Generate(target, o).result.draft_tokens == 0);
    uaii_model_destroy(target);
  }
  Model model("tiny-llama-f32.gguf");
  uaii_session_options o = Options();
  const std::string file = TinyFile("tiny-llama-q4_0.gguf");
  o.draft_path = file.c_str();
  o.draft_p_min = 0;
  o.draft_rule = UAII_DRAFT_RULE_EXACT;
  const Reply by_path = Generate(model.m, o);
  CHECK(by_path.text == Generate(model.m, Options()).text);
  CHECK(by_path.result.draft_tokens > 0);
  o.draft_model = model.m;
  CHECK_THAT(CreateError(model.m, o), Catch::Contains("at most one of draft_model, draft_path and draft_auto"));
  o.draft_model = nullptr;
  const std::string missing = dir + "/no-such-drafter.gguf";
  o.draft_path = missing.c_str();
  uaii_session* s = nullptr;
  CHECK(uaii_session_create(model.m, &o, &s) != UAII_OK);
  CHECK_THAT(std::string(uaii_last_error()), Catch::Contains("no-such-drafter.gguf"));
  // The assistant for a target that is not gemma4: refused naming both files.
  const std::string assistant = dir + "/gemma4-assistant/f32.gguf";
  o.draft_path = assistant.c_str();
  CHECK(uaii_session_create(model.m, &o, &s) != UAII_OK);
  CHECK_THAT(std::string(uaii_last_error()), Catch::Contains("gemma4-assistant") && Catch::Contains("tiny-llama-f32"));
}
