// The knobs (draft_max, draft_min, p_min, adaptive, the drafter kinds) and their errors.
#include "speculative_helpers.h"

#include <algorithm>
#include <cstdio>

#include "uaii/model_locator.h"

using namespace spec_test;

namespace {

std::string CreateError(const std::shared_ptr<const Model>& model, const SpeculativeOptions& s) {
  auto g = Generator::Create(model, Options(), s);
  REQUIRE_FALSE(g.ok());
  return std::string(g.status().message());
}

}  // namespace

TEST_CASE("speculative options: bad values are refused with the field and its range", "[generation]") {
  auto model = Tiny("tiny-llama-f32.gguf");
  SpeculativeOptions s;
  s.draft = model;
  s.draft_max = kMaxDraftTokens + 1;
  CHECK_THAT(CreateError(model, s), Catch::Contains("draft_max 17 is outside 1..16") && Catch::Contains("17 rows"));
  s.draft_max = 0;
  CHECK_THAT(CreateError(model, s), Catch::Contains("draft_max 0 is outside 1..16"));
  s.draft_max = 4;
  s.draft_min = 5;
  CHECK_THAT(CreateError(model, s), Catch::Contains("draft_min 5 is outside 0..draft_max (4)"));
  s.draft_min = 0;
  s.p_min = 1.5f;
  CHECK_THAT(CreateError(model, s), Catch::Contains("p_min 1.5 is outside [0, 1]"));
  s.p_min = 0.5f;
  s.draft_auto = true;
  CHECK_THAT(CreateError(model, s), Catch::Contains("one drafter"));
}

TEST_CASE("speculative options: --draft auto names the architecture without an in-trunk head", "[generation]") {
  for (const char* file : {"tiny/tiny-llama-f32.gguf", "tiny/tiny-gemma3-q8_0.gguf", "families/qwen3-q4_k.gguf"}) {
    auto model = Load(file);
    SpeculativeOptions s;
    s.draft_auto = true;
    auto g = Generator::Create(model, Options(), s);
    REQUIRE_FALSE(g.ok());
    CHECK(g.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(g.status().message()),
               Catch::Contains("architecture '" + model->info().architecture + "'") &&
                   Catch::Contains("no in-trunk multi-token-prediction head"));
  }
}

TEST_CASE("speculative options: a draft with another vocabulary is refused", "[generation]") {
  auto model = Tiny("tiny-llama-f32.gguf");
  auto path = ResolveModelPath("");
  if (!path.ok()) {
    std::printf("SKIP the vocabulary check: default model not installed\n");
    return;
  }
  auto gemma = Model::Load(*path);
  REQUIRE(gemma.ok());
  SpeculativeOptions s;
  s.draft = *gemma;  // Gemma 3's 262,144 tokens cannot draft for the tiny llama
  CHECK_THAT(CreateError(model, s), Catch::Contains("same vocabulary"));
}

TEST_CASE("speculative options: p_min cuts proposals, draft_min drops short drafts", "[generation]") {
  auto model = Tiny("tiny-llama-f32.gguf");
  auto plain = Plain(model)->Run(Request(1, 0.0f, 24));
  REQUIRE(plain.ok());
  // The tiny model's logits are nearly flat: its top probability is far below 0.75
  // (llama.cpp's default), so nothing is proposed, and far above 0.
  SpeculativeOptions s = DraftModel(model, 4);
  s.p_min = 0.75f;
  auto none = WithSpec(model, s)->Run(Request(1, 0.0f, 24));
  REQUIRE(none.ok());
  CHECK(none->draft_tokens == 0);
  CheckSame(*plain, *none);
  // Proposals cut to 2 by a drafter that stops after 2; draft_min 3 refuses them.
  struct Two final : Drafter {
    std::unique_ptr<Drafter> inner;
    std::string_view kind() const override { return "two"; }
    absl::StatusOr<std::vector<DraftToken>> Propose(const DraftContext& ctx) override {
      DraftContext c = ctx;
      c.max_len = std::min(c.max_len, 2);
      return inner->Propose(c);
    }
    void Accept(int n) override { inner->Accept(n); }
    void Rollback(int64_t n) override { inner->Rollback(n); }
  };
  for (int draft_min : {2, 3}) {
    auto two = std::make_shared<Two>();
    auto inner = MakeModelDrafter(*model, 256, model, Options());
    REQUIRE(inner.ok());
    two->inner = *std::move(inner);
    SpeculativeOptions t;
    t.drafter = two;
    t.draft_max = 4;
    t.draft_min = draft_min;
    t.p_min = 0.0f;
    t.adaptive = false;
    auto r = WithSpec(model, t)->Run(Request(1, 0.0f, 24));
    REQUIRE(r.ok());
    CheckSame(*plain, *r);
    if (draft_min == 2) CHECK(r->draft_tokens > 0);
    else CHECK(r->draft_tokens == 0);
  }
}

TEST_CASE("speculative options: a failing drafter is soon asked for nothing, a good one for the most", "[generation]") {
  auto model = Tiny("tiny-llama-f32.gguf");
  auto plain = Plain(model)->Run(Request(1, 0.0f, 200));
  REQUIRE(plain.ok());
  for (bool adaptive : {false, true}) {
    SpeculativeOptions s;
    s.drafter = SelfCorrupting(model, [](int, int) { return true; });  // every proposal wrong
    s.draft_max = 16;
    s.p_min = 0.0f;
    s.adaptive = adaptive;
    auto r = WithSpec(model, s)->Run(Request(1, 0.0f, 200));
    REQUIRE(r.ok());
    CheckSame(*plain, *r);
    CHECK(r->draft_accepted == 0);
    INFO("adaptive " << adaptive << ": " << r->draft_tokens << " proposals");
    if (adaptive) {
      // 4 + 2 + 1, then one probe after each cool-down (4, 8, 16, 32, 64, ...).
      CHECK(r->draft_tokens <= 16);
    } else {
      CHECK(r->draft_tokens >= 16 * 150);
    }
  }
  // A drafter that is always right is at the full length from its third batch: 4, 8, 16, 16...
  SpeculativeOptions good = DraftModel(model, 16);
  good.adaptive = true;
  auto r = WithSpec(model, good)->Run(Request(1, 0.0f, 200));
  REQUIRE(r.ok());
  CheckSame(*plain, *r);
  CHECK(r->draft_accepted == r->draft_tokens);
  CHECK(r->decode_steps <= 14);  // 199 tokens after the first: 5 + 9 + 17 per batch after
  // One that fails for a while and then agrees again grows back.
  SpeculativeOptions mixed;
  auto drafter = SelfCorrupting(model, [](int step, int) { return step < 3; });
  mixed.drafter = drafter;
  mixed.draft_max = 16;
  mixed.p_min = 0.0f;
  auto m = WithSpec(model, mixed)->Run(Request(1, 0.0f, 200));
  REQUIRE(m.ok());
  CheckSame(*plain, *m);
  REQUIRE(drafter->proposed.size() > 8);
  CHECK(*std::max_element(drafter->proposed.begin() + 3, drafter->proposed.end()) == 16);
}
