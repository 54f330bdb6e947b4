// The C ABI's thread-safety promise (capi/uaii.h: a model and its tokenizer may be
// shared by any number of threads, a session belongs to one thread at a time, the
// last error is per thread), exercised: eight threads over one uaii_model, each with
// a session of its own, generating, chatting and tokenizing at once, cancelling a
// stream midway, and failing calls whose messages must stay their own. Results must
// equal what each thread's work gives alone. Only capi/uaii.h is used.
// scripts/tsan.sh runs this under ThreadSanitizer.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "run_together.h"
#include "uaii.h"

namespace {

constexpr int kThreads = 8;
constexpr int kRounds = 3;

std::string ChatFixture() {
  const char* dir = std::getenv("UAII_FIXTURE_DIR");
  return std::string(dir ? dir : UAII_FIXTURE_DIR) + "/sdk/tiny-llama-chat.gguf";
}

std::string Text(int worker) {
  std::string s = "tok" + std::to_string(5 + worker);
  for (int i = 0; i < 4 + worker; ++i) s += " tok" + std::to_string((worker * 13 + i * 5) % 40);
  return s;
}

struct Stream {
  std::string text;
  int events = 0;
  int cancel_after = 0;  // 0: never
};

int OnEvent(const uaii_event* e, void* user) {
  auto* s = static_cast<Stream*>(user);
  if (e->kind == UAII_EVENT_TEXT) s->text.append(e->text, e->text_len);
  ++s->events;
  return s->cancel_after > 0 && s->events >= s->cancel_after ? 1 : 0;
}

struct Work {
  std::vector<int32_t> ids;
  std::string detok, greedy, sampled, streamed, chat, error_message;
  uint32_t cancelled_stop = 0, greedy_stop = 0;
};

// One thread's program; failures go to *error (Catch2's macros are not thread-safe).
Work RunWorker(uaii_model* model, uaii_tokenizer* tok, int worker, std::string* error) {
  Work w;
  auto fail = [&](const char* what) {
    if (error->empty()) *error = std::string(what) + ": " + uaii_last_error();
  };
  std::string text = Text(worker);
  size_t n = 0;
  std::vector<int32_t> ids(1024);
  if (uaii_tokenize(tok, text.c_str(), text.size(), UAII_TOKENIZE_ADD_SPECIAL, ids.data(), ids.size(), &n) != UAII_OK) {
    fail("tokenize");
    return w;
  }
  ids.resize(n);
  w.ids = ids;
  std::vector<char> buf(4096);
  size_t len = 0;
  if (uaii_detokenize(tok, ids.data(), ids.size(), 0, buf.data(), buf.size(), &len) != UAII_OK) {
    fail("detokenize");
    return w;
  }
  w.detok.assign(buf.data(), len);

  uaii_session_options so;
  uaii_session_options_init(&so);
  so.threads = 1 + worker % 2;
  so.max_context = 256;
  uaii_session* s = nullptr;
  if (uaii_session_create(model, &so, &s) != UAII_OK) {
    fail("session");
    return w;
  }
  uaii_generate_options go;
  uaii_generate_options_init(&go);
  go.max_tokens = 10;
  uaii_generate_result r;
  r.struct_size = sizeof r;
  // Replies are read from the stream: the tiny vocabulary can produce a NUL byte,
  // which the NUL-terminated out_text cannot carry.
  Stream greedy;
  if (uaii_session_generate(s, text.c_str(), &go, OnEvent, &greedy, &r, nullptr) != UAII_OK) fail("greedy");
  w.greedy = greedy.text;
  w.greedy_stop = r.stop_reason;

  go.temperature = 0.8f;
  go.seed = 7 + worker;
  uaii_session_reset(s);
  Stream sampled;
  if (uaii_session_generate(s, text.c_str(), &go, OnEvent, &sampled, &r, nullptr) != UAII_OK) fail("sampled");
  w.sampled = sampled.text;

  // Streamed, cancelled at the third event.
  go.temperature = 0;
  uaii_session_reset(s);
  Stream st;
  st.cancel_after = 3;
  if (uaii_session_generate(s, text.c_str(), &go, OnEvent, &st, &r, nullptr) != UAII_OK) fail("cancelled");
  w.streamed = st.text;
  w.cancelled_stop = r.stop_reason;

  // A call that fails on this thread: its message is this thread's, whatever the
  // others are doing.
  std::string bad = "/nonexistent/worker" + std::to_string(worker) + ".gguf";
  uaii_model* none = nullptr;
  if (uaii_model_open(bad.c_str(), nullptr, &none) == UAII_OK) fail("open of a missing file succeeded");
  w.error_message = uaii_last_error();

  uaii_session_reset(s);
  std::string messages = R"([{"role":"user","content":")" + text + R"("}])";
  go.max_tokens = 8;
  Stream chat;
  if (uaii_session_chat(s, messages.c_str(), nullptr, &go, OnEvent, &chat, &r, nullptr) != UAII_OK) fail("chat");
  w.chat = chat.text;
  uaii_session_destroy(s);
  return w;
}

}  // namespace

TEST_CASE("capi concurrency: 8 threads share a model and tokenizer, each with its own session", "[concurrency][capi]") {
  uaii_model* model = nullptr;
  REQUIRE(uaii_model_open(ChatFixture().c_str(), nullptr, &model) == UAII_OK);
  uaii_tokenizer* tok = nullptr;
  REQUIRE(uaii_model_tokenizer(model, &tok) == UAII_OK);

  std::vector<Work> alone(kThreads);
  for (int i = 0; i < kThreads; ++i) {
    std::string error;
    alone[i] = RunWorker(model, tok, i, &error);
    INFO("worker " << i << " alone: " << error);
    REQUIRE(error.empty());
    CHECK(alone[i].cancelled_stop == UAII_STOP_CANCELLED);
    INFO("greedy [" << alone[i].greedy << "] streamed [" << alone[i].streamed << "]");
    CHECK(alone[i].greedy.rfind(alone[i].streamed, 0) == 0);  // the cancelled stream is a prefix
    CHECK_THAT(alone[i].error_message, Catch::Contains("worker" + std::to_string(i) + ".gguf"));
  }
  for (int round = 0; round < kRounds; ++round) {
    std::vector<Work> together(kThreads);
    std::vector<std::string> errors(kThreads);
    uaii::test::RunTogether(kThreads, [&](int i) { together[i] = RunWorker(model, tok, i, &errors[i]); });
    for (int i = 0; i < kThreads; ++i) {
      INFO("round " << round << ", worker " << i << ": " << errors[i]);
      REQUIRE(errors[i].empty());
      const Work& a = together[i];
      const Work& b = alone[i];
      CHECK(a.ids == b.ids);
      CHECK(a.detok == b.detok);
      CHECK(a.greedy == b.greedy);
      CHECK(a.greedy_stop == b.greedy_stop);
      CHECK(a.sampled == b.sampled);
      CHECK(a.streamed == b.streamed);
      CHECK(a.cancelled_stop == b.cancelled_stop);
      CHECK(a.error_message == b.error_message);
      CHECK(a.chat == b.chat);
    }
  }
  uaii_tokenizer_destroy(tok);
  uaii_model_destroy(model);
}
