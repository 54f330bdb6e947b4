// Gemma 4 (lib/models/gemma4.cpp) against llama.cpp: the tiny fixtures of
// tests/fixtures/make_gemma4_models.py (sliding and full layers with their own head
// sizes, shared-KV layers, per-layer embeddings, proportional RoPE, V = K on one layer;
// and a dense row without shared K/V or per-layer embeddings) against the goldens
// tests/oracles/llamacpp_gemma4.py wrote (tests/golden/llamacpp/gemma4-*.json):
//   whole vs llama.cpp:  max |dlogit| <= QuantTypeRelTolerance(type) * max |logit| + golden rounding
//   chunked vs whole:    bit-identical (prefill is row-exact), chunks crossing the window of 8
// Then what the file's metadata can get wrong, and the per-layer embeddings streaming
// under a budget.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "../runtime/budgeted_run.h"
#include "../runtime/golden.h"
#include "runtime/assistant_runner.h"
#include "uaii/drafter.h"
#include "uaii/generation.h"
#include "uaii/plan.h"
#include "uaii/session.h"

using namespace uaii;
using namespace uaii::testing;

namespace {

std::string Fixture(const std::string& name) {
  const std::string path = std::string(UAII_FIXTURE_DIR) + "/gemma4/" + name + ".gguf";
  if (!std::filesystem::exists(path)) FAIL("missing " << path << " (run tests/fixtures/make_gemma4_models.py)");
  return path;
}

std::vector<TokenId> Prompt() {
  std::ifstream f(std::string(UAII_FIXTURE_DIR) + "/gemma4/prompt.txt");
  std::vector<TokenId> p;
  for (TokenId t; f >> t;) p.push_back(t);
  return p;
}

// Prompt logits then two decode steps, every row, under `budget` (0: none).
std::vector<float> Run(const std::shared_ptr<const Model>& m, uint64_t budget, StorageStats* stats) {
  return PromptThenDecodes(m, budget, Prompt(), stats);
}

// The dry runs (no budget, 128 positions, no window) of two fixtures.
std::pair<DryRun, DryRun> DryRuns(const std::string& a, const std::string& b) {
  SessionOptions o;
  o.max_context = 128;
  o.kv_window = 0;
  auto pa = PlanDryRun(*Load(Fixture(a)), o);
  auto pb = PlanDryRun(*Load(Fixture(b)), o);
  REQUIRE(pa.ok());
  REQUIRE(pb.ok());
  return {*std::move(pa), *std::move(pb)};
}

// A golden of the assistant oracle (tests/oracles/llamacpp_gemma4_assistant.py).
simdjson::dom::element AssistantGolden(simdjson::dom::parser& parser, const char* type) {
  auto doc = parser.load(GoldenDir() + "/assistant-gemma4-" + type + ".json");
  REQUIRE(doc.error() == simdjson::SUCCESS);
  return doc.value();
}

std::shared_ptr<const Model> GoldenFixture(simdjson::dom::element doc, const char* key) {
  return Load(std::string(UAII_FIXTURE_DIR) + "/" + std::string(std::string_view(doc[key])));
}

}  // namespace

TEST_CASE("gemma4: tiny random models match llama.cpp, chunked prefill equals whole") {
  const int n = CheckTableGoldens("gemma4-", "make_gemma4_models.py",
                                  [](const std::string& type, double max_abs) {
                                    return QuantTypeRelTolerance(type) * max_abs;
                                  },
                                  {5, 9, 13, 27, 6, 1, 1, 1, 1});
  // f32, q8_0, q4_0, dense-q8_0, moe-q8_0, shared-kv-q8_0, moe-fused-{f32,q8_0,q4_0}.
  CHECK(n >= 9);
}

// A shared-KV layer that keeps its own attn_k / attn_v / attn_k_norm (converted from
// Hugging Face) loads like one without them, reads its source layer's cache and
// ignores them (llama.cpp: TENSOR_NOT_REQUIRED, unused); the golden above checks the
// logits. Here: the same KV cache as the file without them, and a wrong shape on one
// of them is still refused, as llama.cpp's create_tensor refuses it.
TEST_CASE("gemma4: shared-KV layers may carry their own K/V tensors — they are not read") {
  const auto [with, without] = DryRuns("shared-kv-q8_0", "q8_0");
  CHECK(with.plan.kv_bytes == without.plan.kv_bytes);
  // Not loaded: the plan holds as many weight bytes as for the file without them (the
  // two files' other tensors have the same shapes and types), though the file is bigger.
  CHECK(with.plan.pinned_bytes > 0);
  CHECK(with.plan.pinned_bytes == without.plan.pinned_bytes);
  CHECK(std::filesystem::file_size(Fixture("shared-kv-q8_0")) > std::filesystem::file_size(Fixture("q8_0")));

  auto bad = Model::Load(Fixture("shared-kv-bad-shape"));
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(std::string(bad.status().message()),
             Catch::Contains("tensor blk.4.attn_k.weight has shape") && Catch::Contains("expected [64,256]"));
}

TEST_CASE("gemma4: the per-layer embedding table streams by row under a budget, same logits") {
  const std::string path = Fixture("q8_0");
  auto m = Load(path);
  StorageStats resident_stats, streamed_stats;
  const auto resident = Run(m, 0, &resident_stats);
  const uint64_t budget = std::filesystem::file_size(path) * 9 / 10;
  const auto streamed = Run(m, budget, &streamed_stats);
  CHECK(streamed_stats.streamed_bytes > 0);
  REQUIRE(streamed.size() == resident.size());
  CHECK(streamed == resident);

  // The plan pins the token embeddings first but never the per-layer table.
  SessionOptions o;
  o.max_context = 128;
  o.ram_budget_bytes = budget;
  o.kv_window = 0;
  auto plan = PlanDryRun(*m, o);
  REQUIRE(plan.ok());
  INFO(plan->json);
  CHECK(plan->plan.streaming);
  CHECK(plan->json.find("\"per_layer_token_embd.weight\"") == std::string::npos);
  CHECK(plan->json.find("\"token_embd.weight\"") != std::string::npos);
}

TEST_CASE("gemma4: the shared-KV layers read their source's cache (a cache of four layers)") {
  // Six layers, the last two shared: the session's KV cache holds four layers, so
  // the dense row (six layers of their own) needs more cache per position.
  const auto [shared, dense] = DryRuns("q8_0", "dense-q8_0");
  // Per position, K+V in f16: sliding layers 2 heads x 32, full 1 x 64 (128 values
  // each way per layer): four layers hold 4 x 2 x 128 x 2 bytes, six hold 6 x ...
  CHECK(shared.plan.kv_bytes * 6 == dense.plan.kv_bytes * 4);
}

TEST_CASE("gemma4: the mixture-of-experts layers stream their experts under a budget, same logits") {
  // Separate gate / up banks, and fused gate|up banks sliced per expert (#e=N) through
  // the expert LRU: the streamed logits are the resident ones bit for bit.
  for (const char* name : {"moe-q8_0", "moe-fused-f32", "moe-fused-q8_0", "moe-fused-q4_0"}) {
    INFO(name);
    const std::string path = Fixture(name);
    auto m = Load(path);
    StorageStats resident_stats, streamed_stats;
    const auto resident = Run(m, 0, &resident_stats);
    // 70% of the file (85% of the small Q4_0 file, whose fixed activations and KV take more of it).
    const uint64_t percent = std::string(name).ends_with("q4_0") ? 85 : 70;
    const auto streamed = Run(m, std::filesystem::file_size(path) * percent / 100, &streamed_stats);
    CHECK(streamed_stats.streamed_bytes > 0);
    CHECK(streamed_stats.expert_misses > 0);
    REQUIRE(streamed.size() == resident.size());
    CHECK(streamed == resident);
  }
}

TEST_CASE("gemma4-assistant: loading the drafter as the main model is a named error") {
  const std::string path = std::string(UAII_FIXTURE_DIR) + "/gemma4-assistant/f32.gguf";
  if (!std::filesystem::exists(path)) FAIL("missing " << path << " (run tests/fixtures/make_gemma4_assistant_models.py)");
  auto m = Model::Load(path);
  REQUIRE_FALSE(m.ok());
  CHECK(m.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(m.status().message()),
             Catch::Contains("gemma4-assistant file is a drafter for a gemma4 model") &&
                 Catch::Contains("cannot load as the main model") && Catch::Contains(path));
}

// The hidden state a drafter continues from (Session::EvalWithHidden): the target's
// post-final-norm rows against llama.cpp's (embeddings_nextn), which the assistant
// oracle records for every prompt position (tests/oracles/llamacpp_gemma4_assistant.py).
TEST_CASE("gemma4: the hidden-state rows equal llama.cpp's, for every prompt position") {
  int checked = 0;
  for (const char* type : {"f32", "q8_0", "q4_0"}) {
    simdjson::dom::parser parser;
    const auto doc = AssistantGolden(parser, type);
    const auto prompt = Ints(doc["prompt_tokens"]);
    const int64_t width = int64_t(doc["n_embd_out"]);
    const double scale = double(doc["target_h_scale"]);
    const auto want = I16FromZlibB64(std::string_view(doc["target_h_i16_zlib_b64"]), prompt.size() * width, scale);
    auto m = GoldenFixture(doc, "target_file");
    auto s = NewSession(m, 256);
    std::vector<float> logits, hidden;
    REQUIRE(s->EvalWithHidden(prompt, &logits, &hidden, /*all_logits=*/true).ok());
    REQUIRE(hidden.size() == want.size());
    CHECK(logits.size() == prompt.size() * static_cast<size_t>(m->info().n_vocab));
    double max_diff = 0, max_abs = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      max_abs = std::max(max_abs, double(std::fabs(want[i])));
      max_diff = std::max(max_diff, double(std::fabs(hidden[i] - want[i])));
    }
    const double limit = QuantTypeRelTolerance(type) * max_abs + 0.5 / scale;
    std::printf("gemma4 hidden %-5s max |dh| = %.6f (max |h| %.3f, tolerance %.4f)\n", type, max_diff, max_abs, limit);
    CHECK(max_diff <= limit);
    // Only the last row when not all rows are asked for, as the logits.
    s->Truncate(0);
    REQUIRE(s->EvalWithHidden(prompt, &logits, &hidden).ok());
    REQUIRE(hidden.size() == static_cast<size_t>(width));
    ++checked;
  }
  CHECK(checked == 3);
  // A graph without the output: a named error, not an empty vector.
  auto dense = Load(std::string(UAII_FIXTURE_DIR) + "/tiny/tiny-llama-q8_0.gguf");
  std::vector<float> logits, hidden;
  const auto st = NewSession(dense, 64)->EvalWithHidden(std::vector<TokenId>{1, 2, 3}, &logits, &hidden);
  CHECK(st.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(st.message()), Catch::Contains("no hidden-state output"));
}

// The assistant's draft steps against llama.cpp's (tests/oracles/llamacpp_gemma4_assistant.py):
// the target prefills the prompt, then each step runs one row at pos0 over the target's
// cache with the golden's input token and h (the target's last hidden row, then the
// previous step's h_nextn), and its logits and next h are compared.
TEST_CASE("gemma4-assistant: draft steps over the target's cache match llama.cpp") {
  int checked = 0;
  for (const char* type : {"f32", "q8_0", "q4_0"}) {
    simdjson::dom::parser parser;
    const auto doc = AssistantGolden(parser, type);
    const auto prompt = Ints(doc["prompt_tokens"]);
    const int64_t width = int64_t(doc["n_embd_out"]), n_vocab = int64_t(doc["n_vocab"]);
    const int32_t pos0 = static_cast<int32_t>(int64_t(doc["pos0"]));
    auto target = GoldenFixture(doc, "target_file");
    auto runner = runtime::AssistantRunner::Load(
        std::string(UAII_FIXTURE_DIR) + "/" + std::string(std::string_view(doc["model_file"])), target);
    INFO(runner.status().ToString());
    REQUIRE(runner.ok());
    auto s = NewSession(target, 256);
    REQUIRE(s->Eval(prompt).ok());
    std::vector<float> h = F32FromBase64(std::string_view(doc["target_h_last_f32_b64"]));
    REQUIRE(static_cast<int64_t>(h.size()) == width);
    for (auto step : doc["steps"].get_array()) {
      const TokenId token = static_cast<TokenId>(int64_t(step["token"]));
      const double scale = double(step["logits_scale"]);
      const auto want = I16FromZlibB64(std::string_view(step["logits_i16_zlib_b64"]), n_vocab, scale);
      const auto want_h = F32FromBase64(std::string_view(step["h_nextn_f32_b64"]));
      std::vector<float> logits, next;
      const TokenId tokens[1] = {token};
      const int32_t positions[1] = {pos0};
      REQUIRE((*runner)->Run(*s, tokens, positions, h, &logits, &next).ok());
      REQUIRE(logits.size() == want.size());
      REQUIRE(next.size() == want_h.size());
      double dl = 0, ml = 0, dh = 0, mh = 0;
      for (size_t i = 0; i < want.size(); ++i) {
        dl = std::max(dl, double(std::fabs(logits[i] - want[i])));
        ml = std::max(ml, double(std::fabs(want[i])));
      }
      for (size_t i = 0; i < want_h.size(); ++i) {
        dh = std::max(dh, double(std::fabs(next[i] - want_h[i])));
        mh = std::max(mh, double(std::fabs(want_h[i])));
      }
      const double tol = QuantTypeRelTolerance(type);
      std::printf("gemma4-assistant %-5s step %lld: max |dlogit| %.5f (of %.3f), max |dh| %.5f (of %.3f)\n", type,
                  static_cast<long long>(int64_t(step["step"])), dl, ml, dh, mh);
      CHECK(dl <= tol * ml + 0.5 / scale);
      CHECK(dh <= tol * mh);
      if (double(step["top2_gap"]) > 2 * tol * ml) CHECK(ArgMax(logits) == static_cast<TokenId>(int64_t(step["argmax"])));
      h = want_h;  // the next step continues from llama.cpp's h, as the golden's inputs say
    }
    // The assistant stores nothing: the target's cache is as the prompt left it.
    CHECK(s->n_past() == static_cast<int64_t>(prompt.size()));
    ++checked;
  }
  CHECK(checked == 3);
}

// The E2B/E4B assistants' centroid-masked head (IR masked_head) against transformers'
// Gemma4AssistantMaskedEmbedder (tests/oracles/transformers_gemma4_masked_head.py): the
// f32-centroids fixture is f32 with real-shaped tables and top_k 3 of 8 clusters. Each
// step's logits — the chosen clusters' tokens scored, every other token at the row's
// lowest such score minus 1 — equal the golden's within f32's tolerance, and the masked
// tokens are exactly the golden's.
TEST_CASE("gemma4-assistant: the centroid-masked head matches transformers") {
  simdjson::dom::parser parser;
  auto doc = parser.load(std::string(UAII_SOURCE_DIR) + "/tests/golden/transformers/assistant-gemma4-f32-centroids.json");
  REQUIRE(doc.error() == simdjson::SUCCESS);
  const auto prompt = Ints(doc["prompt_tokens"]);
  const int64_t n_vocab = int64_t(doc["n_vocab"]);
  const int32_t pos0 = static_cast<int32_t>(int64_t(doc["pos0"]));
  auto target = GoldenFixture(doc.value(), "target_file");
  const std::string path = std::string(UAII_FIXTURE_DIR) + "/" + std::string(std::string_view(doc["model_file"]));
  auto runner = runtime::AssistantRunner::Load(path, target);
  INFO(runner.status().ToString());
  REQUIRE(runner.ok());
  auto s = NewSession(target, 256);
  REQUIRE(s->Eval(prompt).ok());
  int steps = 0;
  for (auto step : doc["steps"].get_array()) {
    const TokenId tokens[1] = {static_cast<TokenId>(int64_t(step["token"]))};
    const int32_t positions[1] = {pos0};
    const auto h = F32FromBase64(std::string_view(step["h_in_f32_b64"]));
    const auto want = F32FromBase64(std::string_view(step["logits_f32_b64"]));
    std::vector<float> logits, next;
    REQUIRE((*runner)->Run(*s, tokens, positions, h, &logits, &next).ok());
    REQUIRE(static_cast<int64_t>(logits.size()) == n_vocab);
    REQUIRE(want.size() == logits.size());
    // The masked tokens (the fill value: the row's minimum) are the same set.
    const float want_fill = *std::min_element(want.begin(), want.end());
    const float got_fill = *std::min_element(logits.begin(), logits.end());
    double dl = 0, ml = 0;
    int masked = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      CHECK((want[i] == want_fill) == (logits[i] == got_fill));
      masked += want[i] == want_fill;
      dl = std::max(dl, double(std::fabs(logits[i] - want[i])));
      ml = std::max(ml, double(std::fabs(want[i])));
    }
    CHECK(masked == n_vocab - int64_t(doc["top_k"]) * (n_vocab / int64_t(doc["n_centroids"])));
    std::printf("gemma4-assistant f32-centroids step %lld: max |dlogit| %.5f (of %.3f), %d tokens masked\n",
                static_cast<long long>(int64_t(step["step"])), dl, ml, masked);
    CHECK(dl <= QuantTypeRelTolerance("f32") * ml);
    CHECK(ArgMax(logits) == static_cast<TokenId>(int64_t(step["argmax"])));
    ++steps;
  }
  CHECK(steps == 4);
}

TEST_CASE("gemma4-assistant: a drafter that does not fit its target is refused, naming both") {
  const std::string dir = std::string(UAII_FIXTURE_DIR);
  auto target = Load(dir + "/gemma4/f32.gguf");
  auto bad = runtime::AssistantRunner::Load(dir + "/gemma4-assistant/bad-width.gguf", target);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(std::string(bad.status().message()),
             Catch::Contains("bad-width.gguf") && Catch::Contains("gemma4/f32.gguf") &&
                 Catch::Contains("embedding_length_out 192 is not the target's hidden width 256"));
  // A tensor the assistant's graph does not read (llama.cpp: "wrong number of tensors").
  auto extra = runtime::AssistantRunner::Load(dir + "/gemma4-assistant/bad-extra.gguf", target);
  REQUIRE_FALSE(extra.ok());
  CHECK_THAT(std::string(extra.status().message()),
             Catch::Contains("tensor blk.0.attn_k.weight is not read by uaii's gemma4-assistant graph"));
  // Not a gemma4 target.
  auto llama = Load(dir + "/tiny/tiny-llama-q8_0.gguf");
  auto wrong = runtime::AssistantRunner::Load(dir + "/gemma4-assistant/f32.gguf", llama);
  REQUIRE_FALSE(wrong.ok());
  CHECK_THAT(std::string(wrong.status().message()),
             Catch::Contains("does not pair with the llama model") && Catch::Contains("must be a gemma4 model"));
}

// Speculative decoding with the assistant (uaii/drafter.h kind b, through the Generator):
// greedy output equals plain greedy output token for token, the assistant proposed,
// and a sampled request under the rejection rule runs through the same path.
TEST_CASE("gemma4-assistant: drafting for its target keeps greedy output bit for bit") {
  const std::string dir = std::string(UAII_FIXTURE_DIR);
  for (const char* type : {"f32", "q8_0", "q4_0"}) {
    INFO(type);
    auto target = Load(dir + "/gemma4/" + type + ".gguf");
    SessionOptions so;
    so.threads = 2;
    so.max_context = 256;
    GenerationRequest req;
    req.prompt = {5, 17, 44, 91, 120, 200, 33, 7};
    req.max_tokens = 24;
    auto plain = Generator::Create(target, so);
    REQUIRE(plain.ok());
    auto want = (*plain)->Run(req);
    REQUIRE(want.ok());
    SpeculativeOptions spec;
    auto drafter = MakeAssistantDrafter(target, dir + "/gemma4-assistant/" + type + ".gguf");
    INFO(drafter.status().ToString());
    REQUIRE(drafter.ok());
    spec.drafter = *std::move(drafter);
    spec.p_min = 0;  // a random assistant is never sure: propose anyway
    auto gen = Generator::Create(target, so, spec);
    REQUIRE(gen.ok());
    auto got = (*gen)->Run(req);
    REQUIRE(got.ok());
    CHECK(got->tokens == want->tokens);
    CHECK(got->draft_tokens > 0);
    // A second turn reuses the cache and drafts again from the kept rows' hidden states.
    GenerationRequest again = req;
    again.prompt.insert(again.prompt.end(), got->tokens.begin(), got->tokens.end());
    again.prompt.push_back(9);
    auto want2 = (*plain)->Run(again);
    auto got2 = (*gen)->Run(again);
    REQUIRE(want2.ok());
    REQUIRE(got2.ok());
    CHECK(got2->tokens == want2->tokens);
    CHECK(got2->cached_tokens > 0);
    // Sampled: the rejection rule's path (the target's distribution; not token-equal).
    GenerationRequest sampled = req;
    sampled.sampling = sampling::SamplingParams{};
    sampled.sampling.temperature = 0.8f;
    sampled.sampling.seed = 7;
    auto s = (*gen)->Run(sampled);
    REQUIRE(s.ok());
    CHECK(s->tokens.size() == 24);
  }
}
