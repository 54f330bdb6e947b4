// Program::RunBatch (backend.h): several sequences, each with its own KV cache, in one
// forward pass give each sequence the bits its own Run gives — prefill chunks of
// different lengths, decode steps, and the two mixed — on dense, K-quant, sliding-
// window + soft-cap (Gemma 2/3), LongRoPE and MoE fixtures. This is what lets
// `uaii serve` batch its slots' steps without changing a token (runtime/step_batcher.h).
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "backends/registry.h"
#include "runtime/kv_cache.h"
#include "runtime/model_impl.h"
#include "runtime/step_batcher.h"
#include "uaii/model.h"

namespace uaii {
namespace {

std::shared_ptr<const Model> Load(const std::string& rel) {
  auto m = Model::Load(std::string(UAII_FIXTURE_DIR) + "/" + rel);
  INFO((m.ok() ? "" : std::string(m.status().message())));
  REQUIRE(m.ok());
  return *m;
}

std::unique_ptr<runtime::KvCache> NewCache(const backends::Program& p, int64_t n_ctx) {
  return std::make_unique<runtime::KvCache>(p.kv_layers(), n_ctx);
}

// A sequence's next tokens: `n` ids from a pattern of its own.
std::vector<int32_t> Tokens(int seq, int64_t start, int64_t n, int64_t vocab) {
  std::vector<int32_t> t;
  for (int64_t i = 0; i < n; ++i) t.push_back(static_cast<int32_t>((seq * 37 + (start + i) * 11 + 3) % vocab));
  return t;
}

std::vector<int32_t> Positions(int64_t start, int64_t n) {
  std::vector<int32_t> p;
  for (int64_t i = 0; i < n; ++i) p.push_back(static_cast<int32_t>(start + i));
  return p;
}

std::vector<int64_t> AllRows(int64_t n) {
  std::vector<int64_t> r;
  for (int64_t i = 0; i < n; ++i) r.push_back(i);
  return r;
}

// Runs `lengths[i]` more tokens of every sequence i, alone (its own Run on `alone[i]`)
// and together (one RunBatch on `together[i]`), and checks the logits bit for bit.
void StepAndCompare(const backends::Program& p, const std::vector<int64_t>& lengths, std::vector<int64_t>& past,
                    std::vector<std::unique_ptr<runtime::KvCache>>& alone,
                    std::vector<std::unique_ptr<runtime::KvCache>>& together, int64_t vocab) {
  const size_t n = lengths.size();
  std::vector<std::vector<int32_t>> tokens(n), positions(n);
  std::vector<std::vector<int64_t>> rows(n);
  std::vector<std::vector<float>> want(n), got(n);
  backends::RunContext ctx;
  auto ws = p.NewWorkspace();
  ctx.workspace = ws.get();
  std::vector<backends::SequenceRun> seqs;
  for (size_t i = 0; i < n; ++i) {
    tokens[i] = Tokens(static_cast<int>(i), past[i], lengths[i], vocab);
    positions[i] = Positions(past[i], lengths[i]);
    // Every row of a prefill chunk, the last of the odd sequences' (what a session asks).
    rows[i] = i % 2 ? std::vector<int64_t>{lengths[i] - 1} : AllRows(lengths[i]);
    REQUIRE(p.Run(tokens[i].data(), positions[i].data(), lengths[i], rows[i], *alone[i], ctx, &want[i]).ok());
    seqs.push_back({tokens[i].data(), positions[i].data(), lengths[i], &rows[i], together[i].get(), &got[i]});
  }
  auto st = p.RunBatch(seqs, ctx);
  INFO(std::string(st.message()));
  REQUIRE(st.ok());
  for (size_t i = 0; i < n; ++i) {
    INFO("sequence " << i << " at position " << past[i] << " with " << lengths[i] << " tokens");
    REQUIRE(got[i].size() == want[i].size());
    CHECK(got[i] == want[i]);
    past[i] += lengths[i];
  }
}

}  // namespace

TEST_CASE("RunBatch: each sequence's logits equal its own Run's, bit for bit", "[runtime][batch]") {
  for (const char* rel : {"tiny/tiny-llama-f32.gguf", "tiny/tiny-llama-q4_k.gguf", "families/gemma2-f16.gguf",
                          "families/gemma3-swa3-q8_0.gguf", "families/phi3-longrope-q8_0.gguf",
                          "moe/qwen3moe-q4_k.gguf", "moe/granitemoe-shexp-q6_k.gguf"}) {
    DYNAMIC_SECTION(rel) {
      auto model = Load(rel);
      const backends::Program& p = *ModelInternals::Of(*model).program;
      const int64_t vocab = model->info().n_vocab;
      constexpr int kSeqs = 4;
      std::vector<std::unique_ptr<runtime::KvCache>> alone, together;
      for (int i = 0; i < kSeqs; ++i) {
        alone.push_back(NewCache(p, 128));
        together.push_back(NewCache(p, 128));
      }
      std::vector<int64_t> past(kSeqs, 0);
      StepAndCompare(p, {5, 9, 3, 17}, past, alone, together, vocab);  // prefills of unequal lengths
      for (int step = 0; step < 6; ++step) StepAndCompare(p, {1, 1, 1, 1}, past, alone, together, vocab);  // decode
      StepAndCompare(p, {1, 12, 1, 1}, past, alone, together, vocab);  // one prefills while the others decode
      // Past a sliding window of 8 or 16 (Gemma): the caches' windows hold.
      for (int step = 0; step < 3; ++step) StepAndCompare(p, {1, 1, 20, 1}, past, alone, together, vocab);
    }
  }
}

TEST_CASE("RunBatch: a batch that cannot run says why", "[runtime][batch]") {
  auto model = Load("tiny/tiny-llama-f32.gguf");
  const backends::Program& p = *ModelInternals::Of(*model).program;
  auto a = NewCache(p, 16), b = NewCache(p, 16);
  const std::vector<int32_t> tok = {1, 2}, pos = {0, 1}, far = {15, 16};
  const std::vector<int64_t> rows = {1}, bad_rows = {2};
  std::vector<float> o1, o2;
  backends::RunContext ctx;
  auto run = [&](std::vector<backends::SequenceRun> seqs) { return std::string(p.RunBatch(seqs, ctx).message()); };
  CHECK(run({{tok.data(), pos.data(), 2, &rows, a.get(), &o1}, {tok.data(), pos.data(), 2, &rows, a.get(), &o2}})
            .find("sequences 0 and 1 share a KV cache") != std::string::npos);
  CHECK(run({{tok.data(), pos.data(), 2, &rows, a.get(), &o1}, {tok.data(), pos.data(), 2, &bad_rows, b.get(), &o2}})
            .find("output row 2 outside the batch of 2") != std::string::npos);
  CHECK(run({{tok.data(), pos.data(), 2, &rows, a.get(), &o1}, {tok.data(), far.data(), 2, &rows, b.get(), &o2}})
            .find("position 16 outside the context of 16") != std::string::npos);
  CHECK(run({{tok.data(), pos.data(), 0, &rows, a.get(), &o1}}).find("incomplete") != std::string::npos);
  CHECK(run({}).find("no sequences") != std::string::npos);
}

TEST_CASE("StepBatcher: a failing step fails alone, the others' pass still runs", "[runtime][batch]") {
  // Two sessions' steps submitted from two threads at once; the second's position is
  // outside its cache. Whether they share a pass (which then fails, and each step is
  // rerun alone) or not, only the bad step fails.
  auto model = Load("tiny/tiny-llama-f32.gguf");
  const backends::Program& p = *ModelInternals::Of(*model).program;
  runtime::StepBatcher batcher(nullptr);
  auto a = NewCache(p, 16), b = NewCache(p, 16), ref = NewCache(p, 16);
  const std::vector<int32_t> tok = {1, 2}, pos = {0, 1}, far = {15, 16};
  const std::vector<int64_t> rows = {1};
  std::vector<float> oa, ob, want;
  backends::RunContext ctx;
  REQUIRE(p.Run(tok.data(), pos.data(), 2, rows, *ref, ctx, &want).ok());
  absl::Status sa, sb;
  REQUIRE(batcher.Join(&p).ok());
  REQUIRE(batcher.Join(&p).ok());
  std::thread t([&] { sb = batcher.Run({&p, {tok.data(), far.data(), 2, &rows, b.get(), &ob}, 0, nullptr, &sb}); });
  sa = batcher.Run({&p, {tok.data(), pos.data(), 2, &rows, a.get(), &oa}, 0, nullptr, &sa});
  t.join();
  batcher.Leave(&sa, &p);
  batcher.Leave(&sb, &p);
  CHECK(sa.ok());
  CHECK(oa == want);
  CHECK(std::string(sb.message()).find("position 16 outside the context of 16") != std::string::npos);
  CHECK(batcher.stats().steps == 2);
}

TEST_CASE("StepBatcher: sessions join and leave while others' passes run", "[runtime][batch]") {
  // A server's slots come and go while passes run: each thread here joins, steps and
  // leaves over and over, so a Join often waits on a pass while the program's last
  // other session leaves (the workspace it waits on must outlive that Leave).
  auto model = Load("tiny/tiny-llama-f32.gguf");
  const backends::Program& p = *ModelInternals::Of(*model).program;
  runtime::StepBatcher batcher(nullptr);
  const std::vector<int32_t> tok = {1, 2}, pos = {0, 1};
  const std::vector<int64_t> rows = {1};
  std::vector<float> want;
  auto ref = NewCache(p, 16);
  backends::RunContext ctx;
  REQUIRE(p.Run(tok.data(), pos.data(), 2, rows, *ref, ctx, &want).ok());
  constexpr int kThreads = 4, kCycles = 40;
  std::vector<int> wrong(kThreads, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      auto cache = NewCache(p, 16);
      std::vector<float> out;
      for (int c = 0; c < kCycles; ++c) {
        if (!batcher.Join(&p).ok()) { ++wrong[i]; continue; }
        const absl::Status st = batcher.Run({&p, {tok.data(), pos.data(), 2, &rows, cache.get(), &out}, 0, nullptr, &out});
        if (!st.ok() || out != want) ++wrong[i];
        batcher.Leave(&out, &p);
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) CHECK(wrong[i] == 0);
  CHECK(batcher.stats().steps == kThreads * kCycles);
}

}  // namespace uaii
