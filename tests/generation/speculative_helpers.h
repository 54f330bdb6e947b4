// Shared by the speculative-decoding suites: the tiny fixtures, generators with and
// without a drafter, and drafters that fail on purpose (to reach every rollback path).
#pragma once
#include <catch2/catch.hpp>

#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "uaii/drafter.h"
#include "uaii/generation.h"

namespace spec_test {

using namespace uaii;

inline std::string FixturePath(const std::string& rel) {
  const char* dir = std::getenv("UAII_FIXTURE_DIR");
  return std::string(dir ? dir : UAII_FIXTURE_DIR) + "/" + rel;
}

inline std::shared_ptr<const Model> Load(const std::string& rel) {
  auto m = Model::Load(FixturePath(rel));
  INFO(rel << ": " << (m.ok() ? "" : std::string(m.status().message())));
  REQUIRE(m.ok());
  return *m;
}

inline std::shared_ptr<const Model> Tiny(const std::string& file) { return Load("tiny/" + file); }

inline SessionOptions Options() {
  SessionOptions o;
  o.threads = 1;
  o.max_context = 256;
  return o;
}

inline std::unique_ptr<Generator> Plain(const std::shared_ptr<const Model>& m) {
  auto g = Generator::Create(m, Options());
  REQUIRE(g.ok());
  return *std::move(g);
}

inline std::unique_ptr<Generator> WithSpec(const std::shared_ptr<const Model>& m, SpeculativeOptions spec) {
  spec.draft_session = Options();
  auto g = Generator::Create(m, Options(), spec);
  INFO((g.ok() ? "" : std::string(g.status().message())));
  REQUIRE(g.ok());
  return *std::move(g);
}

// A draft model's options with every proposal the drafter makes (p_min 0), a fixed
// length and the given rule.
inline SpeculativeOptions DraftModel(std::shared_ptr<const Model> draft, int draft_max,
                                     AcceptanceRule rule = AcceptanceRule::kAuto) {
  SpeculativeOptions s;
  s.draft = std::move(draft);
  s.draft_max = draft_max;
  s.p_min = 0.0f;
  s.adaptive = false;
  s.rule = rule;
  return s;
}

inline GenerationRequest Request(uint32_t seed, float temperature, int64_t max_tokens = 40) {
  GenerationRequest r;
  r.prompt = {1, 300, 301, 302, 303};
  r.max_tokens = max_tokens;
  r.sampling = temperature > 0 ? sampling::SamplingParams{} : sampling::SamplingParams::Greedy();
  r.sampling.temperature = temperature;
  r.sampling.seed = seed;
  return r;
}

// Wraps a drafter and replaces some proposals by another token (the next id): the
// target then rejects them, whatever it would have said.
class CorruptingDrafter final : public Drafter {
 public:
  // corrupt(step, i): whether the i-th proposal of the step-th Propose call is replaced.
  CorruptingDrafter(std::unique_ptr<Drafter> inner, int64_t n_vocab, std::function<bool(int, int)> corrupt)
      : inner_(std::move(inner)), n_vocab_(n_vocab), corrupt_(std::move(corrupt)) {}
  std::string_view kind() const override { return "corrupting"; }
  absl::StatusOr<std::vector<DraftToken>> Propose(const DraftContext& ctx) override {
    auto d = inner_->Propose(ctx);
    if (!d.ok()) return d;
    for (size_t i = 0; i < d->size(); ++i) {
      if (!corrupt_(step_, static_cast<int>(i))) continue;
      DraftToken& t = (*d)[i];
      t.token = static_cast<TokenId>((t.token + 1) % n_vocab_);
      t.q = {{t.token, 1.0f}};
    }
    proposed.push_back(static_cast<int>(d->size()));
    ++step_;
    return d;
  }
  void Accept(int n) override {
    accepted.push_back(n);
    inner_->Accept(n);
  }
  void Rollback(int64_t n) override { inner_->Rollback(n); }
  std::vector<int> proposed, accepted;  // per step

 private:
  std::unique_ptr<Drafter> inner_;
  int64_t n_vocab_;
  std::function<bool(int, int)> corrupt_;
  int step_ = 0;
};

// The model drafting for itself (every greedy proposal right), wrapped to corrupt.
inline std::shared_ptr<CorruptingDrafter> SelfCorrupting(const std::shared_ptr<const Model>& m,
                                                         std::function<bool(int, int)> corrupt) {
  auto inner = MakeModelDrafter(*m, Options().max_context, m, Options());
  REQUIRE(inner.ok());
  return std::make_shared<CorruptingDrafter>(*std::move(inner), m->info().n_vocab, std::move(corrupt));
}

inline void CheckSame(const GenerationResult& a, const GenerationResult& b) {
  CHECK(a.tokens == b.tokens);
  CHECK(a.text == b.text);
  CHECK(a.stop == b.stop);
}

}  // namespace spec_test
