// Eight threads over one shared Model, each with Sessions of its own, generating,
// chatting and tokenizing at once, with cancellation mid-stream. Every result must
// equal the one the same work gives alone on one thread: a data race that corrupts a
// shared structure (the model's weights, the tokenizer, the kernels' thread-local
// scratch, the expert cache) shows as a different token. scripts/tsan.sh runs this
// suite under ThreadSanitizer, which also reports races that happen not to change a
// result (docs/reliability.md).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "uaii/chat.h"
#include "uaii/generation.h"
#include "run_together.h"

using namespace uaii;

namespace {

constexpr int kThreads = 8;
constexpr int kRounds = 3;

std::string Fixture(const std::string& rel) {
  const char* dir = std::getenv("UAII_FIXTURE_DIR");
  return std::string(dir ? dir : UAII_FIXTURE_DIR) + "/" + rel;
}

std::shared_ptr<const Model> Load(const std::string& rel) {
  auto m = Model::Load(Fixture(rel));
  INFO((m.ok() ? "" : std::string(m.status().message())));
  REQUIRE(m.ok());
  return *m;
}

// How each worker's sessions run: half of them with a two-thread pool of their own;
// `budget` > 0 streams the weights (and, for MoE, runs the expert LRU and read-ahead);
// with `shared`, every session takes turns on that one set of threads instead.
struct Setup {
  uint64_t budget = 0;
  bool chat = true;
  std::shared_ptr<ComputeThreads> shared = nullptr;
};

SessionOptions Options(int worker, const Setup& setup) {
  SessionOptions o;
  o.threads = 1 + worker % 2;
  o.max_context = 256;
  o.ram_budget_bytes = setup.budget;
  o.moe_prefetch = setup.budget > 0;
  o.compute_threads = setup.shared;
  return o;
}

// What one worker does, and what it got. Deterministic given `worker`.
struct Work {
  std::vector<TokenId> greedy, sampled, after_cancel;
  std::string chat_text, decoded;
  std::vector<TokenId> encoded;
  StopReason cancelled_stop = StopReason::kMaxTokens;
  size_t cancelled_tokens = 0;
};

std::string Text(int worker) {
  std::string s = "tok" + std::to_string(5 + worker);
  for (int i = 0; i < 4 + worker; ++i) s += " tok" + std::to_string((worker * 11 + i * 7) % 40);
  return s;
}

// Runs one worker's whole program and returns what it saw; REQUIREs are not
// thread-safe in Catch2, so failures are reported through `error` instead.
Work RunWorker(const std::shared_ptr<const Model>& model, int worker, const Setup& setup, std::string* error) {
  Work w;
  auto fail = [&](const absl::Status& s, const char* what) {
    if (error->empty()) *error = std::string(what) + ": " + std::string(s.message());
  };
  const Tokenizer& tok = model->tokenizer();
  auto ids = tok.Encode(Text(worker));
  if (!ids.ok()) return fail(ids.status(), "encode"), w;
  w.encoded = *ids;
  w.decoded = tok.Decode(*ids);

  auto gen = Generator::Create(model, Options(worker, setup));
  if (!gen.ok()) return fail(gen.status(), "generator"), w;
  GenerationRequest greedy;
  greedy.prompt = w.encoded;
  greedy.max_tokens = 12;
  auto g = (*gen)->Run(greedy);
  if (!g.ok()) return fail(g.status(), "greedy"), w;
  w.greedy = g->tokens;

  GenerationRequest sampled = greedy;
  sampled.sampling = sampling::SamplingParams();  // temperature 0.8, top-k/p, min-p
  sampled.sampling.seed = 1000 + worker;
  (*gen)->Reset();
  auto s = (*gen)->Run(sampled);
  if (!s.ok()) return fail(s.status(), "sampled"), w;
  w.sampled = s->tokens;

  // Cancel after three tokens, then continue the same conversation: the cache must
  // hold exactly what the cancelled run evaluated.
  (*gen)->Reset();
  int seen = 0;
  auto c = (*gen)->Run(greedy, [&](TokenId, std::string_view) { return ++seen < 3; });
  if (!c.ok()) return fail(c.status(), "cancelled"), w;
  w.cancelled_stop = c->stop;
  w.cancelled_tokens = c->tokens.size();
  auto after = (*gen)->Run(greedy);
  if (!after.ok()) return fail(after.status(), "after cancel"), w;
  w.after_cancel = after->tokens;

  if (!setup.chat) return w;
  ChatEngineOptions co;
  co.session = Options(worker, setup);
  auto engine = ChatEngine::Create(model, co);
  if (!engine.ok()) return fail(engine.status(), "chat engine"), w;
  ChatTurnRequest turn;
  turn.messages_json = R"([{"role":"user","content":")" + Text(worker) + R"("}])";
  turn.max_tokens = 8;
  auto r = (*engine)->Run(turn);
  if (!r.ok()) return fail(r.status(), "chat"), w;
  w.chat_text = r->generation.text;
  return w;
}

void CheckSame(const Work& a, const Work& b) {
  CHECK(a.encoded == b.encoded);
  CHECK(a.decoded == b.decoded);
  CHECK(a.greedy == b.greedy);
  CHECK(a.sampled == b.sampled);
  CHECK(a.cancelled_stop == b.cancelled_stop);
  CHECK(a.cancelled_tokens == b.cancelled_tokens);
  CHECK(a.after_cancel == b.after_cancel);
  CHECK(a.chat_text == b.chat_text);
}

void RunConcurrently(const std::shared_ptr<const Model>& model, const Setup& setup = {}) {
  std::vector<Work> alone(kThreads);
  for (int i = 0; i < kThreads; ++i) {
    std::string error;
    alone[i] = RunWorker(model, i, setup, &error);
    INFO("worker " << i << " alone: " << error);
    REQUIRE(error.empty());
    CHECK(alone[i].cancelled_stop == StopReason::kCancelled);
    CHECK(alone[i].cancelled_tokens == 3);
    CHECK(alone[i].after_cancel == alone[i].greedy);
  }
  for (int round = 0; round < kRounds; ++round) {
    std::vector<Work> together(kThreads);
    std::vector<std::string> errors(kThreads);
    uaii::test::RunTogether(kThreads, [&](int i) { together[i] = RunWorker(model, i, setup, &errors[i]); });
    for (int i = 0; i < kThreads; ++i) {
      INFO("round " << round << ", worker " << i << ": " << errors[i]);
      REQUIRE(errors[i].empty());
      CheckSame(together[i], alone[i]);
    }
  }
}

}  // namespace

TEST_CASE("concurrency: 8 sessions over one dense model generate, chat and tokenize at once", "[concurrency]") {
  RunConcurrently(Load("sdk/tiny-llama-chat.gguf"));
}

TEST_CASE("concurrency: 8 sessions over one quantized model", "[concurrency]") {
  // Q4_K: the kernels' packed paths and their thread-local activation buffers.
  RunConcurrently(Load("tiny/tiny-llama-q4_k.gguf"), {.chat = false});
}

TEST_CASE("concurrency: 8 budgeted sessions stream one model's weights at once", "[concurrency]") {
  // Below the 2 MiB file: each session's staging streams layers from the shared file.
  RunConcurrently(Load("tiny/tiny-llama-q4_0.gguf"), {.budget = 1900 * 1024, .chat = false});
}

TEST_CASE("concurrency: 8 MoE sessions with expert LRUs and read-ahead", "[concurrency]") {
  RunConcurrently(Load("moe/qwen3moe-q4_k.gguf"), {.budget = 1900 * 1024, .chat = false});
}

TEST_CASE("concurrency: 8 sessions take turns on one shared set of compute threads", "[concurrency]") {
  // What `uaii serve`'s slots do (ComputeThreads): results equal each session's alone.
  auto shared = ComputeThreads::Create(2);
  CHECK(shared->size() == 2);
  RunConcurrently(Load("sdk/tiny-llama-chat.gguf"), {.chat = true, .shared = shared});
}

TEST_CASE("concurrency: 8 sessions batch their steps into shared forward passes", "[concurrency]") {
  // `uaii serve`'s default (StepBatching::kAcrossSessions): the steps pending at once run
  // as one pass, and every result still equals the session's alone.
  auto batched = ComputeThreads::Create(2, StepBatching::kAcrossSessions);
  RunConcurrently(Load("sdk/tiny-llama-chat.gguf"), {.chat = true, .shared = batched});
  const auto st = batched->batch_stats();
  INFO("passes " << st.passes << ", steps " << st.steps << ", largest " << st.max_batch);
  CHECK(st.max_batch > 1);
  CHECK(st.steps > st.passes);
  // MoE: the routed experts of a pass's rows, per row as alone.
  auto moe = ComputeThreads::Create(2, StepBatching::kAcrossSessions);
  RunConcurrently(Load("moe/qwen3moe-q4_k.gguf"), {.chat = false, .shared = moe});
  CHECK(moe->batch_stats().max_batch > 1);
  // A budget the model fits in pins every weight (the CLI's laptop preset on a small
  // model): batched, each pass reading its first session's pinned copy.
  auto pinned = ComputeThreads::Create(2, StepBatching::kAcrossSessions);
  RunConcurrently(Load("tiny/tiny-llama-q4_0.gguf"), {.budget = 64 << 20, .chat = false, .shared = pinned});
  CHECK(pinned->batch_stats().max_batch > 1);
  // Below the model the weights stream per session: those sessions never batch.
  auto budgeted = ComputeThreads::Create(2, StepBatching::kAcrossSessions);
  RunConcurrently(Load("tiny/tiny-llama-q4_0.gguf"), {.budget = 1900 * 1024, .chat = false, .shared = budgeted});
  CHECK(budgeted->batch_stats().passes == 0);
}
