// Rollback: a verification batch whose proposal i is wrong keeps rows 0..i and drops
// the rest from the KV cache exactly. For every rejection position 0..k (k: nothing
// rejected) the reply equals plain decoding's and so does the KV state: the logits of
// tokens evaluated afterwards are bit for bit those of a generator that never
// speculated. The same holds for the rejection-sampling rule's (different) reply: the
// cache then equals a plain evaluation of the tokens the reply chose.
#include "speculative_helpers.h"

#include <cstring>

using namespace spec_test;

namespace {

// The logits after evaluating `tokens` on top of what the generator's cache holds.
std::vector<float> Next(Generator& g, const std::vector<TokenId>& tokens) {
  std::vector<float> logits;
  REQUIRE(g.Eval(tokens, &logits, /*all_logits=*/true).ok());
  return logits;
}

bool BitEqual(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("speculative rollback: every rejection position leaves the KV cache as plain decoding", "[generation]") {
  constexpr int k = 6;
  for (const char* file : {"tiny/tiny-llama-f32.gguf", "tiny/tiny-gemma3-q8_0.gguf", "families/qwen2-q8_0.gguf",
                           "moe/mixtral-q4_0.gguf"}) {
    INFO(file);
    auto model = Load(file);
    auto plain = Plain(model);
    auto want = plain->Run(Request(1, 0.0f, 20));
    REQUIRE(want.ok());
    REQUIRE(want->tokens.size() > static_cast<size_t>(2 * k));  // batches after the first one too
    const std::vector<TokenId> want_history = plain->history();
    const std::vector<TokenId> after = {5, 77, 301};
    const std::vector<float> want_next = Next(*plain, after);
    for (int reject = 0; reject <= k; ++reject) {
      INFO(file << ": the first verification's proposal " << reject << " is wrong (" << k << ": none)");
      SpeculativeOptions s;
      // The model drafts for itself (greedy: always right) except the first step's
      // proposal `reject`.
      auto drafter = SelfCorrupting(model, [reject](int step, int i) { return step == 0 && i == reject; });
      s.drafter = drafter;
      s.draft_max = k;
      s.p_min = 0.0f;
      s.adaptive = false;
      auto spec = WithSpec(model, s);
      auto got = spec->Run(Request(1, 0.0f, 20));
      REQUIRE(got.ok());
      CheckSame(*want, *got);
      REQUIRE_FALSE(drafter->proposed.empty());
      CHECK(drafter->proposed[0] == k);
      CHECK(drafter->accepted[0] == reject);  // rows after the wrong one were dropped...
      CHECK(spec->history() == want_history);
      // ... exactly: what follows sees the same cache, bit for bit.
      CHECK(BitEqual(Next(*spec, after), want_next));
    }
  }
}

TEST_CASE("speculative rollback: the rejection-sampling rule leaves the cache of the tokens it chose", "[generation]") {
  auto model = Tiny("tiny-llama-f32.gguf");
  auto spec = WithSpec(model, DraftModel(Tiny("tiny-llama-q4_0.gguf"), 5, AcceptanceRule::kRejectionSampling));
  for (uint32_t seed : {3u, 11u}) {
    spec->Reset();
    auto got = spec->Run(Request(seed, 1.0f, 30));
    REQUIRE(got.ok());
    CHECK(got->draft_tokens > 0);
    CHECK(got->draft_accepted < got->draft_tokens);  // some rejections, some rolled-back rows
    // A generator that evaluates the same tokens without speculating.
    auto plain = Plain(model);
    std::vector<float> ignored;
    REQUIRE(plain->Eval(spec->history(), &ignored).ok());
    const std::vector<TokenId> after = {9, 40};
    CHECK(BitEqual(Next(*spec, after), Next(*plain, after)));
  }
}
