// The C ABI's token-level calls (0.4): eval and its logits, positions and truncation,
// sampler objects, and a generation driven one step at a time, which must give what
// uaii_session_generate gives with the same options. Only capi/uaii.h is used.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "uaii.h"

namespace {

std::string Fixture(const char* rel) {
  const char* dir = std::getenv("UAII_FIXTURE_DIR");
  return std::string(dir ? dir : UAII_FIXTURE_DIR) + "/" + rel;
}

struct Handles {
  uaii_model* model = nullptr;
  uaii_tokenizer* tok = nullptr;
  // rel nullptr: the default model (uaii_model_open(NULL): $UAII_MODEL, else the cache's).
  explicit Handles(const char* rel = "tiny/tiny-llama-f32.gguf") {
    INFO((rel ? rel : "the default model"));
    REQUIRE(uaii_model_open(rel ? Fixture(rel).c_str() : nullptr, nullptr, &model) == UAII_OK);
    REQUIRE(uaii_model_tokenizer(model, &tok) == UAII_OK);
  }
  ~Handles() {
    uaii_tokenizer_destroy(tok);
    uaii_model_destroy(model);
  }
  uaii_session* Session() const {
    uaii_session_options o;
    uaii_session_options_init(&o);
    o.threads = 1;
    o.max_context = 256;
    uaii_session* s = nullptr;
    REQUIRE(uaii_session_create(model, &o, &s) == UAII_OK);
    return s;
  }
  std::vector<int32_t> Encode(const std::string& text) const {
    std::vector<int32_t> ids(1024);
    size_t n = 0;
    REQUIRE(uaii_tokenize(tok, text.data(), text.size(), UAII_TOKENIZE_ADD_SPECIAL, ids.data(), ids.size(), &n) ==
            UAII_OK);
    ids.resize(n);
    return ids;
  }
  std::string Decode(const std::vector<int32_t>& ids) const {
    std::vector<char> buf(8192);
    size_t n = 0;
    REQUIRE(uaii_detokenize(tok, ids.data(), ids.size(), 0, buf.data(), buf.size(), &n) == UAII_OK);
    return std::string(buf.data(), n);
  }
};

const char* kPrompt = "tok5 tok6 tok7 tok8 tok9 tok10 tok11";

std::vector<float> Eval(uaii_session* s, const std::vector<int32_t>& ids, size_t n_vocab, bool all = false) {
  std::vector<float> logits((all ? ids.size() : 1) * n_vocab);
  size_t len = 0;
  REQUIRE(uaii_session_eval(s, ids.data(), ids.size(), all ? UAII_EVAL_ALL_LOGITS : 0, logits.data(), logits.size(),
                            &len) == UAII_OK);
  CHECK(len == logits.size());
  return logits;
}

// Drives a generation with uaii_session_step: what uaii_session_generate does inside.
std::vector<int32_t> DriveSteps(uaii_session* s, uaii_sampler* sampler, const std::vector<int32_t>& prompt,
                                size_t n_vocab, int max_tokens) {
  Eval(s, prompt, n_vocab);
  std::vector<int32_t> out;
  while (static_cast<int>(out.size()) < max_tokens) {
    int32_t t = -1;
    uint32_t flags = 0;
    REQUIRE(uaii_session_step(s, sampler, &t, &flags) == UAII_OK);
    if (flags & UAII_STEP_END_OF_GENERATION) break;
    out.push_back(t);
    if (flags & UAII_STEP_CONTEXT_FULL) break;
  }
  return out;
}

}  // namespace

TEST_CASE("capi tokens: eval returns the last row or every row, chunking changes nothing", "[capi][tokens]") {
  Handles h;
  const size_t V = uaii_model_n_vocab(h.model);
  REQUIRE(V > 0);
  CHECK(uaii_model_n_vocab(nullptr) == 0);
  const auto ids = h.Encode(kPrompt);
  REQUIRE(ids.size() > 4);

  uaii_session* a = h.Session();
  const auto all = Eval(a, ids, V, /*all=*/true);
  CHECK(uaii_session_n_past(a) == static_cast<int64_t>(ids.size()));
  CHECK(uaii_session_max_context(a) == 256);

  uaii_session* b = h.Session();
  const std::vector<int32_t> head(ids.begin(), ids.begin() + 3), tail(ids.begin() + 3, ids.end());
  const auto head_last = Eval(b, head, V);
  const auto last = Eval(b, tail, V);
  // Rows are exact: the chunked session's rows equal the whole prompt's.
  CHECK(std::memcmp(head_last.data(), all.data() + 2 * V, V * sizeof(float)) == 0);
  CHECK(std::memcmp(last.data(), all.data() + (ids.size() - 1) * V, V * sizeof(float)) == 0);

  // Truncate and evaluate again: the same row.
  REQUIRE(uaii_session_truncate(b, 3) == UAII_OK);
  CHECK(uaii_session_n_past(b) == 3);
  const auto again = Eval(b, tail, V);
  CHECK(std::memcmp(again.data(), last.data(), V * sizeof(float)) == 0);

  // NULL logits: evaluated, nothing copied; out_len still says how many.
  REQUIRE(uaii_session_truncate(b, 0) == UAII_OK);
  size_t len = 0;
  REQUIRE(uaii_session_eval(b, ids.data(), ids.size(), 0, nullptr, 0, &len) == UAII_OK);
  CHECK(len == V);
  CHECK(uaii_session_n_past(b) == static_cast<int64_t>(ids.size()));
  uaii_session_destroy(a);
  uaii_session_destroy(b);
}

TEST_CASE("capi tokens: errors leave the session where it was", "[capi][tokens]") {
  Handles h;
  const size_t V = uaii_model_n_vocab(h.model);
  uaii_session* s = h.Session();
  const auto ids = h.Encode(kPrompt);
  uaii_sampler* greedy = nullptr;
  REQUIRE(uaii_sampler_create(nullptr, &greedy) == UAII_OK);
  int32_t t = 0;
  // Nothing evaluated yet: no row to step from.
  CHECK(uaii_session_step(s, greedy, &t, nullptr) == UAII_ERR_INVALID_STATE);
  CHECK(std::string(uaii_last_error()).find("evaluate tokens first") != std::string::npos);

  std::vector<float> small(V - 1);
  size_t len = 0;
  CHECK(uaii_session_eval(s, ids.data(), ids.size(), 0, small.data(), small.size(), &len) ==
        UAII_ERR_BUFFER_TOO_SMALL);
  CHECK(len == V);
  CHECK(uaii_session_n_past(s) == 0);  // refused before evaluating

  const int32_t bad[] = {1, static_cast<int32_t>(V)};
  CHECK(uaii_session_eval(s, bad, 2, 0, nullptr, 0, nullptr) == UAII_ERR_INVALID_ARGUMENT);
  CHECK(std::string(uaii_last_error()).find("outside the vocabulary") != std::string::npos);
  const int32_t negative[] = {-3};
  CHECK(uaii_session_eval(s, negative, 1, 0, nullptr, 0, nullptr) == UAII_ERR_INVALID_ARGUMENT);
  CHECK(uaii_session_n_past(s) == 0);
  CHECK(uaii_session_eval(s, ids.data(), 0, 0, nullptr, 0, nullptr) == UAII_ERR_INVALID_ARGUMENT);
  CHECK(uaii_session_eval(s, ids.data(), ids.size(), 0x80, nullptr, 0, nullptr) == UAII_ERR_INVALID_ARGUMENT);

  std::vector<int32_t> too_many(300, 5);
  CHECK(uaii_session_eval(s, too_many.data(), too_many.size(), 0, nullptr, 0, nullptr) == UAII_ERR_INVALID_STATE);
  CHECK(uaii_session_n_past(s) == 0);

  Eval(s, ids, V);
  CHECK(uaii_session_truncate(s, -1) == UAII_ERR_INVALID_ARGUMENT);
  CHECK(uaii_session_truncate(s, uaii_session_n_past(s) + 1) == UAII_ERR_INVALID_ARGUMENT);
  // After a truncation there is no row to step from until the next eval.
  REQUIRE(uaii_session_truncate(s, 2) == UAII_OK);
  CHECK(uaii_session_step(s, greedy, &t, nullptr) == UAII_ERR_INVALID_STATE);

  CHECK(uaii_session_n_past(nullptr) == -1);
  CHECK(uaii_session_max_context(nullptr) == -1);
  CHECK(uaii_session_truncate(nullptr, 0) == UAII_ERR_INVALID_ARGUMENT);
  uaii_sampler_destroy(greedy);
  uaii_sampler_destroy(nullptr);
  uaii_session_destroy(s);
}

TEST_CASE("capi tokens: samplers on any logits", "[capi][tokens]") {
  uaii_sampler* greedy = nullptr;
  REQUIRE(uaii_sampler_create(nullptr, &greedy) == UAII_OK);
  const float logits[] = {0.5f, 3.0f, -1.0f, 3.0f, 2.0f};
  int32_t t = -1;
  REQUIRE(uaii_sampler_sample(greedy, logits, 5, &t) == UAII_OK);
  CHECK(t == 1);  // the argmax, lowest id on ties
  const float nan_logits[] = {0.0f, NAN};
  CHECK(uaii_sampler_sample(greedy, nan_logits, 2, &t) == UAII_ERR_INVALID_ARGUMENT);
  CHECK(uaii_sampler_sample(greedy, logits, 0, &t) == UAII_ERR_INVALID_ARGUMENT);
  CHECK(uaii_sampler_accept(greedy, -1) == UAII_ERR_INVALID_ARGUMENT);

  // A repetition penalty sees accepted tokens: after accepting 1, 3 wins.
  uaii_generate_options o;
  uaii_generate_options_init(&o);
  o.repeat_penalty = 2.0f;
  uaii_sampler* penalized = nullptr;
  REQUIRE(uaii_sampler_create(&o, &penalized) == UAII_OK);
  REQUIRE(uaii_sampler_accept(penalized, 1) == UAII_OK);
  REQUIRE(uaii_sampler_sample(penalized, logits, 5, &t) == UAII_OK);
  CHECK(t == 3);
  REQUIRE(uaii_sampler_reset(penalized) == UAII_OK);
  REQUIRE(uaii_sampler_sample(penalized, logits, 5, &t) == UAII_OK);
  CHECK(t == 1);

  // Seeded: the same seed draws the same sequence; invalid parameters are refused by name.
  o = uaii_generate_options{};
  uaii_generate_options_init(&o);
  o.temperature = 1.0f;
  o.seed = 1234;
  std::vector<int32_t> draws[2];
  for (auto& d : draws) {
    uaii_sampler* s = nullptr;
    REQUIRE(uaii_sampler_create(&o, &s) == UAII_OK);
    for (int i = 0; i < 20; ++i) {
      REQUIRE(uaii_sampler_sample(s, logits, 5, &t) == UAII_OK);
      d.push_back(t);
    }
    uaii_sampler_destroy(s);
  }
  CHECK(draws[0] == draws[1]);
  o.top_p = 1.5f;
  uaii_sampler* bad = nullptr;
  CHECK(uaii_sampler_create(&o, &bad) == UAII_ERR_INVALID_ARGUMENT);
  CHECK(std::string(uaii_last_error()).find("top_p") != std::string::npos);
  CHECK(bad == nullptr);
  uaii_sampler_destroy(greedy);
  uaii_sampler_destroy(penalized);
}

TEST_CASE("capi tokens: stepping gives uaii_session_generate's tokens, greedy and sampled", "[capi][tokens]") {
  // The default model (Gemma 3): real text, so the step loop's detokenized ids and the
  // generate call's streamed text compare as strings (a random model's byte tokens
  // decode to invalid UTF-8, which the stream and a plain detokenize render apart).
  Handles h(nullptr);
  const size_t V = uaii_model_n_vocab(h.model);
  const char* text_prompt = "The capital of France is";
  const auto prompt = h.Encode(text_prompt);
  for (float temperature : {0.0f, 0.9f}) {
    INFO("temperature " << temperature);
    uaii_generate_options o;
    uaii_generate_options_init(&o);
    o.max_tokens = 16;
    o.temperature = temperature;
    o.seed = 99;
    uaii_session* g = h.Session();
    uaii_generate_result r;
    r.struct_size = sizeof r;
    struct Collect {
      std::string text;
    } c;
    auto on_event = [](const uaii_event* e, void* u) {
      if (e->kind == UAII_EVENT_TEXT) static_cast<Collect*>(u)->text.append(e->text, e->text_len);
      return 0;
    };
    REQUIRE(uaii_session_generate(g, text_prompt, &o, on_event, &c, &r, nullptr) == UAII_OK);

    uaii_session* s = h.Session();
    uaii_sampler* sampler = nullptr;
    REQUIRE(uaii_sampler_create(&o, &sampler) == UAII_OK);
    const auto tokens = DriveSteps(s, sampler, prompt, V, o.max_tokens);
    CHECK(static_cast<int64_t>(tokens.size()) == r.completion_tokens);
    CHECK(h.Decode(tokens) == c.text);

    // The session's cache holds the prompt and what was evaluated: generating the same
    // prompt again reuses it.
    REQUIRE(uaii_session_generate(s, text_prompt, &o, nullptr, nullptr, &r, nullptr) == UAII_OK);
    CHECK(r.cached_tokens == static_cast<int64_t>(prompt.size()) - 1);
    // A generate call leaves no row to step from.
    int32_t t = 0;
    CHECK(uaii_session_step(s, sampler, &t, nullptr) == UAII_ERR_INVALID_STATE);
    uaii_sampler_destroy(sampler);
    uaii_session_destroy(s);
    uaii_session_destroy(g);
  }
}

TEST_CASE("capi tokens: a step at the end of the context says so", "[capi][tokens]") {
  Handles h;
  const size_t V = uaii_model_n_vocab(h.model);
  uaii_session_options so;
  uaii_session_options_init(&so);
  so.threads = 1;
  so.max_context = 8;
  uaii_session* s = nullptr;
  REQUIRE(uaii_session_create(h.model, &so, &s) == UAII_OK);
  std::vector<int32_t> ids(8, 7);
  ids[0] = 1;
  Eval(s, ids, V);
  uaii_sampler* greedy = nullptr;
  REQUIRE(uaii_sampler_create(nullptr, &greedy) == UAII_OK);
  int32_t t = -1;
  uint32_t flags = 0;
  REQUIRE(uaii_session_step(s, greedy, &t, &flags) == UAII_OK);
  CHECK(t >= 0);
  CHECK((flags & (UAII_STEP_CONTEXT_FULL | UAII_STEP_END_OF_GENERATION)) != 0);
  CHECK(uaii_session_n_past(s) == 8);
  uaii_sampler_destroy(greedy);
  uaii_session_destroy(s);
}

// ---- Structured output (0.4): grammar / json_schema in the options, constrained samplers.

TEST_CASE("capi grammar: a plain sampler refuses a grammar — a constrained one follows it") {
  Handles h;
  uaii_generate_options o;
  uaii_generate_options_init(&o);
  o.grammar = "root ::= \"ab\" [0-9]{2}\n";
  uaii_sampler* plain = nullptr;
  CHECK(uaii_sampler_create(&o, &plain) == UAII_ERR_INVALID_ARGUMENT);
  CHECK_THAT(uaii_last_error(), Catch::Contains("uaii_sampler_create_constrained"));
  o.temperature = 1.0f;  // sampled, not greedy: the grammar alone keeps the draws in line
  o.seed = 3;
  uaii_sampler* s = nullptr;
  REQUIRE(uaii_sampler_create_constrained(h.tok, &o, &s) == UAII_OK);
  const size_t n_vocab = uaii_model_n_vocab(h.model);
  std::vector<float> flat(n_vocab, 0.0f);
  std::vector<int32_t> ids;
  for (int i = 0; i < 8 && !uaii_sampler_grammar_complete(s); ++i) {
    int32_t t = -1;
    REQUIRE(uaii_sampler_sample(s, flat.data(), flat.size(), &t) == UAII_OK);
    REQUIRE(uaii_sampler_accept(s, t) == UAII_OK);
    ids.push_back(t);
  }
  const std::string text = h.Decode(ids);
  CHECK(text.size() == 4);
  CHECK(text.rfind("ab", 0) == 0);
  CHECK(std::isdigit(static_cast<unsigned char>(text[2])));
  CHECK(std::isdigit(static_cast<unsigned char>(text[3])));
  CHECK(uaii_sampler_grammar_complete(s) == 1);
  // A token the grammar does not allow is refused by accept.
  REQUIRE(uaii_sampler_reset(s) == UAII_OK);
  CHECK(uaii_sampler_grammar_complete(s) == 0);
  CHECK(uaii_sampler_accept(s, h.Encode("z").back()) == UAII_ERR_INVALID_ARGUMENT);
  CHECK_THAT(uaii_last_error(), Catch::Contains("not allowed"));
  uaii_sampler_destroy(s);
  CHECK(uaii_sampler_grammar_complete(nullptr) == 0);
}

TEST_CASE("capi grammar: generate with a JSON Schema returns a document it allows") {
  Handles h;
  uaii_session* s = h.Session();
  uaii_generate_options o;
  uaii_generate_options_init(&o);
  o.max_tokens = 200;
  o.temperature = 0.8f;
  o.json_schema = R"({"type": "object", "properties": {"ok": {"type": "boolean"}, "n": {"enum": [1, 2, 3]}},
                      "required": ["ok", "n"], "additionalProperties": false})";
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    o.seed = seed;
    uaii_generate_result r;
    r.struct_size = sizeof r;
    char* text = nullptr;
    REQUIRE(uaii_session_generate(s, kPrompt, &o, nullptr, nullptr, &r, &text) == UAII_OK);
    INFO(text);
    CHECK(r.stop_reason == UAII_STOP_END_OF_GENERATION);
    const std::string t(text);
    CHECK(t.find("\"ok\"") != std::string::npos);
    CHECK(t.find("\"n\"") != std::string::npos);
    CHECK(t.find('{') != std::string::npos);
    CHECK(t.back() == '}');
    uaii_string_free(text);
  }
  uaii_session_destroy(s);
}

TEST_CASE("capi grammar: bad grammars and schemas are INVALID_ARGUMENT naming the cause") {
  Handles h;
  uaii_session* s = h.Session();
  uaii_generate_options o;
  uaii_generate_options_init(&o);
  char* text = nullptr;
  o.grammar = "root ::= missing\n";
  CHECK(uaii_session_generate(s, kPrompt, &o, nullptr, nullptr, nullptr, &text) == UAII_ERR_INVALID_ARGUMENT);
  CHECK_THAT(uaii_last_error(), Catch::Contains("undefined rule 'missing'"));
  o.json_schema = "{}";
  CHECK(uaii_session_generate(s, kPrompt, &o, nullptr, nullptr, nullptr, &text) == UAII_ERR_INVALID_ARGUMENT);
  CHECK_THAT(uaii_last_error(), Catch::Contains("exclude each other"));
  o.grammar = nullptr;
  o.json_schema = "{not json";
  uaii_sampler* sampler = nullptr;
  CHECK(uaii_sampler_create_constrained(h.tok, &o, &sampler) == UAII_ERR_INVALID_ARGUMENT);
  CHECK(sampler == nullptr);
  char* gbnf = nullptr;
  CHECK(uaii_json_schema_to_grammar("{not json", &gbnf) == UAII_ERR_INVALID_ARGUMENT);
  REQUIRE(uaii_json_schema_to_grammar(R"({"type": "integer"})", &gbnf) == UAII_OK);
  CHECK_THAT(gbnf, Catch::Contains("root ::="));
  uaii_string_free(gbnf);
  CHECK(uaii_json_schema_to_grammar(nullptr, &gbnf) == UAII_ERR_INVALID_ARGUMENT);
  uaii_session_destroy(s);
}
