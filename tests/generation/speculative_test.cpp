// Speculative decoding (SpeculativeOptions) under the exact-match rule: with any drafter
// of the same vocabulary the reply is the one plain decoding gives, token for token —
// greedy on every family fixture, sampled with a seed, under a grammar, with stop
// strings and max_tokens cutting in the middle of a batch — and a follow-up request
// still reuses the KV cache. Drafts: the model itself (every greedy proposal kept), its
// Q4_0 quantization (which agrees on almost none: the tiny model's logits are nearly
// flat, so quantization moves the argmax), and the model itself with proposals
// corrupted at pseudo-random places.
#include "speculative_helpers.h"

#include <cstdio>

#include "uaii/model_locator.h"

using namespace spec_test;

TEST_CASE("speculative: the reply equals plain decoding for every draft, greedy and sampled", "[generation]") {
  auto model = Tiny("tiny-llama-f32.gguf");
  auto plain = Plain(model);
  for (const char* draft_file : {"tiny-llama-f32.gguf", "tiny-llama-q4_0.gguf"}) {
    for (int n_draft : {1, 3, 8, 16}) {
      auto spec = WithSpec(model, DraftModel(Tiny(draft_file), n_draft, AcceptanceRule::kExactMatch));
      for (auto [seed, temp] : {std::pair{1u, 0.0f}, {7u, 0.8f}, {9u, 1.3f}}) {
        INFO(draft_file << " draft_max " << n_draft << " seed " << seed << " temperature " << temp);
        plain->Reset();
        spec->Reset();
        auto a = plain->Run(Request(seed, temp));
        auto b = spec->Run(Request(seed, temp));
        REQUIRE(a.ok());
        REQUIRE(b.ok());
        CheckSame(*a, *b);
        CHECK(b->draft_tokens > 0);
        CHECK(b->draft_accepted <= b->draft_tokens);
        if (std::string(draft_file) == "tiny-llama-f32.gguf" && temp == 0.0f) {
          CHECK(b->draft_accepted == b->draft_tokens);  // the model itself: every greedy proposal kept
          CHECK(b->decode_steps < a->decode_steps);      // fewer forward passes
          CHECK(b->draft_acceptance_rate() == 1.0);
        }
      }
    }
  }
}

TEST_CASE("speculative: greedy output is bit for bit plain decoding's on every family", "[generation]") {
  // Each family's fixture drafts for itself with every third proposal corrupted (so
  // verifications keep 0, 1 or 2 proposals and roll the rest back), and, where the
  // vocabulary is the tiny llama's, the tiny llama's Q4_0 drafts for it (another family).
  const auto cross = Tiny("tiny-llama-q4_0.gguf");
  int cross_pairs = 0;
  for (const char* file : {"tiny/tiny-llama-q8_0.gguf", "tiny/tiny-gemma3-q4_k.gguf", "families/qwen2-q8_0.gguf",
                           "families/qwen3-q4_k.gguf", "families/gemma-q4_1.gguf", "families/gemma2-f16.gguf",
                           "families/phi3-q5_0.gguf", "families/gpt2-f32.gguf", "families/olmo2-q5_k.gguf",
                           "families/gemma3-swa3-q8_0.gguf", "moe/mixtral-q4_0.gguf", "moe/qwen3moe-q4_k.gguf"}) {
    INFO(file);
    auto model = Load(file);
    auto plain = Plain(model);
    auto want = plain->Run(Request(1, 0.0f, 48));
    REQUIRE(want.ok());
    SpeculativeOptions s;
    s.drafter = SelfCorrupting(model, [](int step, int i) { return (step + i) % 3 == 2; });
    s.draft_max = 5;
    s.p_min = 0.0f;
    s.adaptive = false;
    auto got = WithSpec(model, s)->Run(Request(1, 0.0f, 48));
    REQUIRE(got.ok());
    CheckSame(*want, *got);
    CHECK(got->draft_accepted > 0);
    CHECK(got->draft_accepted < got->draft_tokens);
    CHECK(got->decode_steps < want->decode_steps);
    SpeculativeOptions c = DraftModel(cross, 4);
    c.draft_session = Options();
    if (auto g = Generator::Create(model, Options(), c); g.ok()) {
      auto other = (*g)->Run(Request(1, 0.0f, 48));
      REQUIRE(other.ok());
      CheckSame(*want, *other);
      CHECK(other->draft_tokens > 0);
      ++cross_pairs;
    } else {
      CHECK_THAT(std::string(g.status().message()), Catch::Contains("same vocabulary"));
    }
  }
  CHECK(cross_pairs >= 10);  // the tiny llama drafts for every family but phi3 (its vocabulary has other specials)
}

TEST_CASE("speculative: stop strings, max_tokens and grammars cut batches the same way", "[generation]") {
  auto model = Tiny("tiny-llama-f32.gguf");
  auto plain = Plain(model);
  // kAuto: exact match under the grammar, the rejection rule elsewhere; kExactMatch
  // everywhere. Both stop where plain decoding does; exact match gives its tokens too.
  for (AcceptanceRule rule : {AcceptanceRule::kExactMatch, AcceptanceRule::kAuto}) {
    auto spec = WithSpec(model, DraftModel(Tiny("tiny-llama-q4_0.gguf"), 5, rule));
    auto full = plain->Run(Request(3, 0.9f, 30));
    REQUIRE(full.ok());
    REQUIRE(full->text.size() > 12);
    GenerationRequest stop = Request(3, 0.9f, 30);
    stop.stop = {full->text.substr(8, 3)};
    for (GenerationRequest req : {stop, Request(3, 0.9f, 7)}) {
      plain->Reset();
      spec->Reset();
      auto a = plain->Run(req);
      auto b = spec->Run(req);
      REQUIRE(a.ok());
      REQUIRE(b.ok());
      if (rule == AcceptanceRule::kExactMatch) CheckSame(*a, *b);
      if (req.stop.empty()) CHECK(b->tokens.size() == 7);
      else CHECK(b->text.find(req.stop[0]) == std::string::npos);
    }
    GenerationRequest g = Request(5, 1.0f, 60);
    g.grammar = "root ::= \"{\" [a-z]{1,6} \"=\" [0-9]{1,3} (\", \" [a-z]{1,6} \"=\" [0-9]{1,3}){0,3} \"}\"\n";
    plain->Reset();
    spec->Reset();
    auto a = plain->Run(g);
    auto b = spec->Run(g);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CheckSame(*a, *b);  // a grammar always takes the exact-match rule
  }
}

TEST_CASE("speculative: a follow-up turn reuses the cache and equals a cold run", "[generation]") {
  auto model = Tiny("tiny-llama-f32.gguf");
  auto spec = WithSpec(model, DraftModel(Tiny("tiny-llama-q4_0.gguf"), 4));
  auto first = spec->Run(Request(1, 0.0f, 12));
  REQUIRE(first.ok());
  GenerationRequest next = Request(1, 0.0f, 12);
  next.prompt.insert(next.prompt.end(), first->tokens.begin(), first->tokens.end());
  next.prompt.push_back(310);
  auto warm = spec->Run(next);
  REQUIRE(warm.ok());
  CHECK(warm->cached_tokens > 0);
  auto cold = Plain(model)->Run(next);
  REQUIRE(cold.ok());
  CheckSame(*warm, *cold);
}

TEST_CASE("speculative: the default model drafting for itself keeps every greedy proposal", "[generation]") {
  auto path = ResolveModelPath("");
  if (!path.ok()) {
    std::printf("SKIP the default-model pair: default model not installed\n");
    return;
  }
  auto m = Model::Load(*path);
  REQUIRE(m.ok());
  SessionOptions o;
  o.threads = 2;
  o.max_context = 128;
  auto prompt = (*m)->tokenizer().Encode("The capital of France is", EncodeOptions{.parse_special = false, .add_special = true});
  REQUIRE(prompt.ok());
  GenerationRequest req;
  req.prompt = *prompt;
  req.max_tokens = 24;
  req.sampling = sampling::SamplingParams::Greedy();
  auto plain = Generator::Create(*m, o);
  REQUIRE(plain.ok());
  auto want = (*plain)->Run(req);
  REQUIRE(want.ok());
  SpeculativeOptions s;
  s.draft = *m;
  s.draft_session = o;
  s.p_min = 0.0f;
  auto spec = Generator::Create(*m, o, s);
  REQUIRE(spec.ok());
  auto got = (*spec)->Run(req);
  REQUIRE(got.ok());
  CheckSame(*want, *got);
  CHECK(got->draft_tokens > 0);
  CHECK(got->draft_accepted == got->draft_tokens);
  CHECK(got->decode_steps <= 3);  // 23 tokens after the first: 16 + 7 in two batches
}
