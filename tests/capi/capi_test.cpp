// The C ABI's behaviour: statuses and messages, the buffer rule, ownership, streaming
// and cancellation, options validation, thread-local errors. Tiny random llama.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "uaii.h"

namespace {

std::string TinyFile(const std::string& name) {
  const char* dir = std::getenv("UAII_FIXTURE_DIR");
  return std::string(dir ? dir : UAII_FIXTURE_DIR) + "/tiny/" + name;
}
std::string Tiny() { return TinyFile("tiny-llama-f32.gguf"); }

struct ModelHandle {
  uaii_model* m = nullptr;
  explicit ModelHandle(const std::string& path = Tiny()) { REQUIRE(uaii_model_open(path.c_str(), nullptr, &m) == UAII_OK); }
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
  CHECK(uaii_capi_version() == 500);
  CHECK(std::string(uaii_capi_version_string()) == "0.5.0");
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

TEST_CASE("capi: seeded sampling reproduces — two threads, two sessions, one model", "[capi]") {
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

TEST_CASE("capi: device stats on the CPU are zero and name the CPU — a smaller struct gets only its fields", "[capi]") {
  ModelHandle model;
  uaii_session* s = NewSession(model.m);
  uaii_device_stats ds;
  std::memset(&ds, 0xAB, sizeof ds);
  ds.struct_size = 0;  // the library's size
  REQUIRE(uaii_session_device_stats(s, &ds) == UAII_OK);
  CHECK(ds.struct_size == sizeof(uaii_device_stats));
  CHECK(std::string(ds.device) == "cpu");
  CHECK(ds.budget_bytes == 0);
  CHECK(ds.resident_bytes == 0);
  CHECK(ds.host_bytes == 0);
  CHECK(ds.staging_bytes == 0);
  CHECK(ds.requantized_weights == 0);
  // A caller that knows the struct only up to budget_bytes: the rest is left as it was.
  uaii_device_stats old;
  std::memset(&old, 0xAB, sizeof old);
  old.struct_size = offsetof(uaii_device_stats, resident_bytes);
  const uint64_t untouched = old.resident_bytes;
  REQUIRE(uaii_session_device_stats(s, &old) == UAII_OK);
  CHECK(old.struct_size == offsetof(uaii_device_stats, resident_bytes));
  CHECK(old.device == ds.device);  // the session's string, the same every call
  CHECK(old.budget_bytes == 0);
  CHECK(old.resident_bytes == untouched);
  // A budget for a device the session does not use changes nothing.
  uaii_session_options o;
  uaii_session_options_init(&o);
  o.threads = 1;
  o.max_context = 64;
  o.device_memory_bytes = 4096;
  uaii_session* budgeted = nullptr;
  REQUIRE(uaii_session_create(model.m, &o, &budgeted) == UAII_OK);
  ds.struct_size = sizeof ds;
  REQUIRE(uaii_session_device_stats(budgeted, &ds) == UAII_OK);
  CHECK(std::string(ds.device) == "cpu");
  CHECK(ds.budget_bytes == 0);
  uaii_session_destroy(budgeted);
  CHECK(uaii_session_device_stats(nullptr, &ds) == UAII_ERR_INVALID_ARGUMENT);
  CHECK(uaii_session_device_stats(s, nullptr) == UAII_ERR_INVALID_ARGUMENT);
  uaii_session_destroy(s);
}

// On whatever Vulkan device the machine has (CI: lavapipe); skipped without one.
TEST_CASE("capi: device_memory_bytes is the device's budget: weights past it in host memory, the same logits",
          "[capi]") {
  ModelHandle model(TinyFile("tiny-llama-q4_0.gguf"));
  const int32_t prompt[] = {1, 260, 261, 262, 263};
  const size_t n = sizeof prompt / sizeof prompt[0];
  const size_t n_vocab = uaii_model_n_vocab(model.m);
  // A session on "vulkan" with `options`, its placement and every row's logits.
  auto run = [&](const uaii_session_options& options, uaii_device_stats* ds, std::vector<float>* logits) {
    uaii_session* s = nullptr;
    const uaii_status st = uaii_session_create(model.m, &options, &s);
    if (st != UAII_OK) return st;
    ds->struct_size = sizeof *ds;
    REQUIRE(uaii_session_device_stats(s, ds) == UAII_OK);
    logits->assign(n * n_vocab, 0.0f);
    size_t len = 0;
    REQUIRE(uaii_session_eval(s, prompt, n, UAII_EVAL_ALL_LOGITS, logits->data(), logits->size(), &len) == UAII_OK);
    CHECK(len == logits->size());
    // The device name outlives the calls that report it, not the session.
    CHECK(std::string(ds->device).rfind("vulkan", 0) == 0);
    uaii_session_destroy(s);
    return st;
  };
  uaii_session_options o;
  uaii_session_options_init(&o);
  o.threads = 1;
  o.max_context = 64;
  o.device = "vulkan";
  uaii_device_stats whole{}, small{}, older{};
  std::vector<float> whole_logits, small_logits, older_logits;
  const uaii_status st = [&] {
    uaii_session* probe = nullptr;
    const uaii_status s = uaii_session_create(model.m, &o, &probe);
    uaii_session_destroy(probe);
    return s;
  }();
  if (st == UAII_ERR_UNSUPPORTED) {
    WARN("SKIP: no Vulkan device (" << uaii_last_error() << ")");
    return;
  }
  REQUIRE(run(o, &whole, &whole_logits) == UAII_OK);
  // The default budget (90% of the device's largest heap) holds the tiny model whole.
  CHECK(whole.budget_bytes > 0);
  CHECK(whole.resident_bytes > 0);
  CHECK(whole.host_bytes == 0);

  // 400 kB of the model's 1.2 MB: the rest in host memory, streamed through a staging buffer.
  o.device_memory_bytes = 400000;
  REQUIRE(run(o, &small, &small_logits) == UAII_OK);
  CHECK(small.budget_bytes == 400000);
  CHECK(small.host_bytes > 0);
  CHECK(small.staging_bytes > 0);
  CHECK(small.resident_bytes + small.staging_bytes <= small.budget_bytes);
  CHECK(small.resident_bytes + small.host_bytes == whole.resident_bytes);
  CHECK(small_logits == whole_logits);  // where the weights live changes no bit

  // A caller compiled before device_memory_bytes: the field past its struct_size is not read.
  o.struct_size = offsetof(uaii_session_options, device_memory_bytes);
  REQUIRE(run(o, &older, &older_logits) == UAII_OK);
  CHECK(older.budget_bytes == whole.budget_bytes);
  CHECK(older.host_bytes == 0);
}
