// The C ABI's behaviour: statuses and messages, the buffer rule, ownership, streaming
// and cancellation, options validation, thread-local errors. Tiny random llama.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "uaii.h"

namespace {

std::string Tiny() {
  const char* dir = std::getenv("UAII_FIXTURE_DIR");
  return std::string(dir ? dir : UAII_FIXTURE_DIR) + "/tiny/tiny-llama-f32.gguf";
}

struct ModelHandle {
  uaii_model* m = nullptr;
  ModelHandle() { REQUIRE(uaii_model_open(Tiny().c_str(), nullptr, &m) == UAII_OK); }
  ~ModelHandle() { uaii_model_destroy(m); }
};

uaii_session* NewSession(uaii_model* m) {
  uaii_session_options o;
  uaii_session_options_init(&o);
  o.threads = 1;
  o.max_context = 256;
  uaii_session* s = nullptr;
  REQUIRE(uaii_session_create(m, &o, &s) == UAII_OK);
  return s;
}

}  // namespace

TEST_CASE("capi: version and status strings", "[capi]") {
  CHECK(uaii_capi_version() == 400);
  CHECK(std::string(uaii_capi_version_string()) == "0.4.0");
  CHECK(std::string(uaii_status_string(UAII_ERR_NOT_FOUND)) == "not found");
  // An int outside the enum (what a C caller may pass): tests/capi/header_check.c, in C,
  // where that is defined.
}

TEST_CASE("capi: open errors name the cause", "[capi]") {
  uaii_model* m = nullptr;
  CHECK(uaii_model_open("/nonexistent/model.gguf", nullptr, &m) == UAII_ERR_NOT_FOUND);
  CHECK(m == nullptr);
  CHECK_THAT(std::string(uaii_last_error()), Catch::Contains("/nonexistent/model.gguf"));
  const char* dir = std::getenv("UAII_FIXTURE_DIR");
  std::string bad = std::string(dir ? dir : UAII_FIXTURE_DIR) + "/gguf/corrupt/bad_magic.gguf";
  CHECK(uaii_model_open(bad.c_str(), nullptr, &m) == UAII_ERR_INVALID_MODEL);
  CHECK_THAT(std::string(uaii_last_error()), Catch::Contains("bad magic"));
  CHECK(uaii_model_open(Tiny().c_str(), nullptr, nullptr) == UAII_ERR_INVALID_ARGUMENT);
  uaii_model_destroy(nullptr);  // allowed
  uaii_session_destroy(nullptr);
  uaii_tokenizer_destroy(nullptr);
  uaii_string_free(nullptr);
}

TEST_CASE("capi: tokenize / detokenize and the buffer rule", "[capi]") {
  ModelHandle model;
  uaii_tokenizer* tok = nullptr;
  REQUIRE(uaii_model_tokenizer(model.m, &tok) == UAII_OK);
  CHECK(uaii_tokenizer_vocab_size(tok) == 320);
  const char* text = "tok5tok6";
  size_t n = 0;
  CHECK(uaii_tokenize(tok, text, std::strlen(text), UAII_TOKENIZE_ADD_SPECIAL, nullptr, 0, &n) ==
        UAII_ERR_BUFFER_TOO_SMALL);
  REQUIRE(n >= 2);
  std::vector<int32_t> ids(n);
  size_t got = 0;
  REQUIRE(uaii_tokenize(tok, text, std::strlen(text), UAII_TOKENIZE_ADD_SPECIAL, ids.data(), ids.size(), &got) ==
          UAII_OK);
  CHECK(got == n);
  CHECK(ids[0] == 1);  // BOS
  size_t len = 0;
  CHECK(uaii_detokenize(tok, ids.data() + 1, n - 1, 0, nullptr, 0, &len) == UAII_ERR_BUFFER_TOO_SMALL);
  std::string out(len + 1, '\0');
  REQUIRE(uaii_detokenize(tok, ids.data() + 1, n - 1, 0, out.data(), out.size(), &len) == UAII_OK);
  out.resize(len);
  // The toy vocabulary has no "▁" pieces: the space prefix comes back as byte tokens.
  CHECK_THAT(out, Catch::EndsWith(text));
  int32_t bad_id = 999999;
  CHECK(uaii_detokenize(tok, &bad_id, 1, 0, out.data(), out.size(), &len) == UAII_ERR_INVALID_ARGUMENT);
  CHECK_THAT(std::string(uaii_last_error()), Catch::Contains("999999"));
  uaii_model_destroy(model.m);  // the tokenizer keeps the model alive
  model.m = nullptr;
  CHECK(uaii_tokenize(tok, text, std::strlen(text), 0, ids.data(), ids.size(), &got) == UAII_OK);
  uaii_tokenizer_destroy(tok);
}

namespace {
struct Stream {
  std::string text;
  int events = 0;
  int stop_after = -1;
  bool done = false;
  int64_t completion = -1;
};
int OnEvent(const uaii_event* ev, void* user_data) {
  auto* s = static_cast<Stream*>(user_data);
  if (ev->kind == UAII_EVENT_DONE) {
    s->done = true;
    s->completion = ev->result->completion_tokens;
    return 0;
  }
  s->text.append(ev->text, ev->text_len);
  ++s->events;
  return s->stop_after >= 0 && s->events >= s->stop_after;
}
}  // namespace

TEST_CASE("capi: generate streams, returns owned text, and can be cancelled", "[capi]") {
  ModelHandle model;
  uaii_session* s = NewSession(model.m);
  uaii_generate_options go;
  uaii_generate_options_init(&go);
  go.max_tokens = 8;
  Stream stream;
  uaii_generate_result res;
  res.struct_size = sizeof(res);
  char* text = nullptr;
  REQUIRE(uaii_session_generate(s, "tok5tok6", &go, OnEvent, &stream, &res, &text) == UAII_OK);
  CHECK(stream.done);
  CHECK(res.completion_tokens == 8);
  CHECK(stream.completion == 8);
  CHECK(res.stop_reason == UAII_STOP_MAX_TOKENS);
  CHECK(res.peak_rss_bytes > 0);
  CHECK(std::string(text) == stream.text);
  uaii_string_free(text);

  // The same prompt again reuses the cache and gives the same reply.
  Stream again;
  REQUIRE(uaii_session_generate(s, "tok5tok6", &go, OnEvent, &again, &res, nullptr) == UAII_OK);
  CHECK(res.cached_tokens > 0);
  CHECK(again.text == stream.text);

  Stream cancel;
  cancel.stop_after = 2;
  REQUIRE(uaii_session_generate(s, "tok9", &go, OnEvent, &cancel, &res, nullptr) == UAII_OK);
  CHECK(res.stop_reason == UAII_STOP_CANCELLED);
  CHECK(res.completion_tokens == 2);
  uaii_session_destroy(s);
}

TEST_CASE("capi: bad options are rejected with named errors", "[capi]") {
  ModelHandle model;
  uaii_session_options so;
  uaii_session_options_init(&so);
  uaii_session* s = nullptr;
  so.device = "tpu";
  CHECK(uaii_session_create(model.m, &so, &s) == UAII_ERR_UNSUPPORTED);
  CHECK_THAT(std::string(uaii_last_error()), Catch::Contains("tpu"));
  uaii_session_options_init(&so);
  so.struct_size = 2;
  CHECK(uaii_session_create(model.m, &so, &s) == UAII_ERR_INVALID_ARGUMENT);
  uaii_session_options_init(&so);
  so.preset = 77;
  CHECK(uaii_session_create(model.m, &so, &s) == UAII_ERR_INVALID_ARGUMENT);
  CHECK(s == nullptr);

  s = NewSession(model.m);
  uaii_generate_options go;
  uaii_generate_options_init(&go);
  go.temperature = 0.7f;
  go.top_p = 3.0f;
  CHECK(uaii_session_generate(s, "tok1", &go, nullptr, nullptr, nullptr, nullptr) == UAII_ERR_INVALID_ARGUMENT);
  CHECK_THAT(std::string(uaii_last_error()), Catch::Contains("top_p"));
  uaii_generate_options_init(&go);
  go.n_stop = 1;
  CHECK(uaii_session_generate(s, "tok1", &go, nullptr, nullptr, nullptr, nullptr) == UAII_ERR_INVALID_ARGUMENT);
  // Chat needs a template: the tiny model has none.
  CHECK(uaii_session_chat(s, R"([{"role":"user","content":"hi"}])", nullptr, nullptr, nullptr, nullptr, nullptr,
                          nullptr) == UAII_ERR_NOT_FOUND);
  CHECK_THAT(std::string(uaii_last_error()), Catch::Contains("no chat template"));
  uaii_session_destroy(s);
}

TEST_CASE("capi: seeded sampling reproduces; two threads, two sessions, one model", "[capi]") {
  ModelHandle model;
  auto run = [&](uint64_t seed, std::string* out) {
    uaii_session* s = NewSession(model.m);
    uaii_generate_options go;
    uaii_generate_options_init(&go);
    go.max_tokens = 10;
    go.temperature = 1.0f;
    go.seed = seed;
    char* text = nullptr;
    uaii_status st = uaii_session_generate(s, "tok3tok4", &go, nullptr, nullptr, nullptr, &text);
    if (st == UAII_OK) *out = text;
    uaii_string_free(text);
    uaii_session_destroy(s);
    return st;
  };
  std::string a, b, c;
  std::thread t1([&] { CHECK(run(11, &a) == UAII_OK); });
  std::thread t2([&] { CHECK(run(11, &b) == UAII_OK); });
  t1.join();
  t2.join();
  REQUIRE(run(12, &c) == UAII_OK);
  CHECK(a == b);
  CHECK(!a.empty());
  CHECK(a != c);
}

TEST_CASE("capi: the last error is per thread", "[capi]") {
  uaii_model* m = nullptr;
  CHECK(uaii_model_open("/nonexistent/a.gguf", nullptr, &m) != UAII_OK);
  std::string other;
  std::thread([&] { other = uaii_last_error(); }).join();
  CHECK(other.empty());
  CHECK_THAT(std::string(uaii_last_error()), Catch::Contains("/nonexistent/a.gguf"));
}

TEST_CASE("capi: inspect JSON", "[capi]") {
  ModelHandle model;
  char* json = nullptr;
  REQUIRE(uaii_model_inspect_json(model.m, &json) == UAII_OK);
  CHECK_THAT(std::string(json), Catch::Contains("\"architecture\": \"llama\""));
  uaii_string_free(json);
}
