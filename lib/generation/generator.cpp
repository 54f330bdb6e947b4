#include "uaii/generation.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "generation/acceptance.h"
#include "generation/grammar_vocabulary.h"
#include "generation/speculation.h"
#include "sampling/sampler.h"
#include "sampling/stop_matcher.h"
#include "util/str_cat.h"

namespace uaii {

std::string_view StopReasonName(StopReason s) {
  switch (s) {
    case StopReason::kEndOfGeneration: return "eos";
    case StopReason::kMaxTokens: return "max_tokens";
    case StopReason::kStopString: return "stop";
    case StopReason::kCancelled: return "cancelled";
    case StopReason::kContextFull: return "context_full";
  }
  return "unknown";
}

double GenerationResult::prefill_tokens_per_s() const {
  return prefill_seconds > 0 ? static_cast<double>(prefilled_tokens) / prefill_seconds : 0.0;
}

double GenerationResult::decode_tokens_per_s() const {
  return decode_seconds > 0 ? static_cast<double>(decoded_tokens) / decode_seconds : 0.0;
}

absl::StatusOr<std::unique_ptr<Generator>> Generator::Create(std::shared_ptr<const Model> model,
                                                             const SessionOptions& options) {
  auto session = Session::Create(std::move(model), options);
  if (!session.ok()) return session.status();
  return std::unique_ptr<Generator>(new Generator(*std::move(session)));
}

absl::StatusOr<std::unique_ptr<Generator>> Generator::Create(std::shared_ptr<const Model> model,
                                                             const SessionOptions& options,
                                                             const SpeculativeOptions& speculative) {
  // The target and a draft model never compute at once: one set of threads serves both
  // (none of a second pool's workers left asleep to wake, or holding a core, when the
  // other model runs), unless the caller chose threads for them.
  SessionOptions target_options = options;
  SpeculativeOptions spec_options = speculative;
  if (speculative.draft && !options.compute_threads && !speculative.draft_session.compute_threads &&
      speculative.draft_session.threads == options.threads) {
    target_options.compute_threads = ComputeThreads::Create(options.threads);
    spec_options.draft_session.compute_threads = target_options.compute_threads;
  }
  auto gen = Create(std::move(model), target_options);
  if (!gen.ok()) return gen.status();
  auto spec = Speculation::Make(*(*gen)->session_, spec_options);
  if (!spec.ok()) return spec.status();
  (*gen)->spec_ = *std::move(spec);
  return gen;
}

Generator::Generator(std::unique_ptr<Session> s) : session_(std::move(s)) {}
Generator::~Generator() = default;

double GenerationResult::draft_acceptance_rate() const {
  return draft_tokens > 0 ? static_cast<double>(draft_accepted) / static_cast<double>(draft_tokens) : 0.0;
}

void Generator::Reset() {
  if (spec_) spec_->drafter->Rollback(0);
  session_->Truncate(0);
  history_.clear();
  last_logits_.clear();
}

absl::Status Generator::Eval(std::span<const TokenId> tokens, std::vector<float>* logits, bool all_logits) {
  if (logits == nullptr) return absl::InvalidArgumentError("Generator::Eval: null logits vector");
  const size_t n_vocab = static_cast<size_t>(session_->model().info().n_vocab);
  for (TokenId t : tokens)
    if (t < 0 || static_cast<size_t>(t) >= n_vocab)
      return absl::InvalidArgumentError(StrCat("token id ", t, " is outside the vocabulary (", n_vocab, " tokens)"));
  if (absl::Status st = session_->EvalInto(tokens, logits, all_logits); !st.ok()) return st;
  history_.insert(history_.end(), tokens.begin(), tokens.end());
  last_logits_.assign(logits->end() - static_cast<std::ptrdiff_t>(n_vocab), logits->end());
  return absl::OkStatus();
}

void Generator::Truncate(int64_t n) {
  if (n >= session_->n_past()) return;
  session_->Truncate(n);
  history_.resize(static_cast<size_t>(std::max<int64_t>(n, 0)));
  if (spec_) spec_->drafter->Rollback(static_cast<int64_t>(history_.size()));
  last_logits_.clear();
}

absl::StatusOr<Generator::StepResult> Generator::Step(TokenSampler& sampler) {
  if (last_logits_.empty())
    return absl::FailedPreconditionError("no logits to sample from: evaluate tokens first (Eval)");
  StepResult r;
  auto next = sampler.SampleAndAccept(last_logits_);
  if (!next.ok()) return next.status();
  r.token = *next;
  if (session_->model().IsEndOfGeneration(r.token)) {
    r.end_of_generation = true;
    return r;
  }
  if (session_->n_past() >= session_->max_context()) {
    r.context_full = true;
    return r;
  }
  if (absl::Status st = session_->DecodeInto(r.token, &last_logits_); !st.ok()) {
    last_logits_.clear();  // unspecified after a failed DecodeInto
    return st;
  }
  history_.push_back(r.token);
  return r;
}

absl::StatusOr<GenerationResult> Generator::Run(const GenerationRequest& req, const TokenCallback& on_token) {
  using Clock = std::chrono::steady_clock;
  if (req.prompt.empty()) return absl::InvalidArgumentError("the prompt has no tokens");
  if (req.max_tokens < 0) return absl::InvalidArgumentError(StrCat("max_tokens ", req.max_tokens, " is negative"));
  auto sampler = sampling::Sampler::Create(req.sampling);
  if (!sampler.ok()) return sampler.status();
  auto stops = sampling::StopMatcher::Create(req.stop);
  if (!stops.ok()) return stops.status();
  std::unique_ptr<sampling::GrammarConstraint> grammar;
  if (!req.grammar.empty()) {
    if (!grammar_vocab_) grammar_vocab_ = MakeGrammarVocabulary(session_->model().tokenizer());
    auto g = MakeGrammarConstraint(req.grammar, grammar_vocab_);
    if (!g.ok()) return g.status();
    grammar = *std::move(g);
  }
  const int64_t n_prompt = static_cast<int64_t>(req.prompt.size());
  if (n_prompt > session_->max_context())
    return absl::OutOfRangeError(StrCat("the prompt has ", n_prompt, " tokens; the context holds ",
                                        session_->max_context()));

  GenerationResult r;
  r.prompt_tokens = n_prompt;
  last_logits_.clear();  // Run's last row may belong to a token it never evaluated
  // Reuse the longest common prefix, keeping at least one token to evaluate.
  int64_t keep = 0;
  const int64_t limit = std::min<int64_t>(static_cast<int64_t>(history_.size()), n_prompt - 1);
  while (keep < limit && history_[keep] == req.prompt[keep]) ++keep;
  session_->Truncate(keep);
  history_.resize(keep);
  if (spec_) {
    spec_->drafter->Rollback(keep);
    spec_->Start(req);
  }
  r.cached_tokens = keep;
  r.prefilled_tokens = n_prompt - keep;
  if (req.penalize_prompt)
    for (TokenId t : req.prompt) sampler->Accept(t);

  auto t0 = Clock::now();
  // One logits vector for the whole generation (Session::DecodeInto trades its
  // storage with the engine's each step: no allocation or copy per token).
  std::vector<float> logits;
  // A drafter that continues from the target's hidden states (the gemma4 assistant)
  // gets the rows of every evaluation that stayed in the cache (DraftContext).
  const bool want_hidden = spec_ && spec_->drafter->needs_target_hidden();
  std::vector<float> hidden;
  auto eval = [&](std::span<const TokenId> tokens, std::vector<float>* out, bool all_rows) {
    return want_hidden ? session_->EvalWithHidden(tokens, out, &hidden, all_rows)
                       : session_->EvalInto(tokens, out, all_rows);
  };
  if (absl::Status st = eval(std::span<const TokenId>(req.prompt).subspan(keep), &logits, false); !st.ok()) {
    history_.resize(session_->n_past());
    return st;
  }
  history_.assign(req.prompt.begin(), req.prompt.end());
  auto t1 = Clock::now();
  r.prefill_seconds = std::chrono::duration<double>(t1 - t0).count();
  // The decode steps' own I/O wait (the prefill's excluded): what the storage cost
  // model predicts per token (generation/run_observation.h).
  const double wait_at_prefill = session_->storage_stats().io_wait_seconds;

  const Model& model = session_->model();
  StreamDecoder decoder(model.tokenizer());
  r.stop = StopReason::kMaxTokens;
  // One sampled token: the sampler (under the grammar) picks it from `row`.
  auto sample = [&](std::span<const float> row) -> absl::StatusOr<TokenId> {
    auto next = sampler->Sample(row, grammar.get());
    if (!next.ok()) return next.status();
    if (grammar) {
      if (absl::Status st = grammar->Accept(*next); !st.ok()) return st;
    }
    sampler->Accept(*next);
    return next;
  };
  // Takes a sampled token into the reply; false when generation stops there. `n_eval`:
  // the positions evaluated before it (where it would go).
  auto take = [&](TokenId t, int64_t n_eval) {
    if (model.IsEndOfGeneration(t)) {
      r.stop = StopReason::kEndOfGeneration;
      return false;
    }
    r.tokens.push_back(t);
    sampling::StopResult released = stops->Feed(decoder.Push(t));
    r.text += released.text;
    const bool go_on = !on_token || on_token(t, released.text);
    if (released.stopped) { r.stop = StopReason::kStopString; return false; }
    if (!go_on) { r.stop = StopReason::kCancelled; return false; }
    if (static_cast<int64_t>(r.tokens.size()) >= req.max_tokens) return false;
    if (n_eval >= session_->max_context()) { r.stop = StopReason::kContextFull; return false; }
    return true;
  };
  std::optional<TokenId> pending;          // taken, not yet evaluated
  while (static_cast<int64_t>(r.tokens.size()) < req.max_tokens) {
    if (!pending) {
      auto t = sample(logits);
      if (!t.ok()) return t.status();
      if (!take(*t, session_->n_past())) break;
      pending = *t;
    }
    const TokenId t = *pending;
    pending.reset();
    const int64_t n0 = session_->n_past();
    // Proposals the batch can hold: the adaptive length, what max_tokens leaves, the room
    // in the context after t.
    const int asked = spec_ ? static_cast<int>(std::min<int64_t>(
                                  {spec_->length.Next(), req.max_tokens - static_cast<int64_t>(r.tokens.size()),
                                   session_->max_context() - n0 - 1}))
                            : 0;
    std::vector<DraftToken> proposals;
    if (asked > 0) {
      history_.push_back(t);  // the drafter continues the history with t
      DraftContext ctx;
      ctx.history = history_;
      ctx.max_len = asked;
      ctx.picker = &*spec_->picker;
      ctx.target = session_.get();
      ctx.target_hidden = hidden;
      const auto d0 = Clock::now();
      auto d = spec_->drafter->Propose(ctx);
      r.draft_seconds += std::chrono::duration<double>(Clock::now() - d0).count();
      history_.pop_back();
      if (!d.ok()) return d.status();
      proposals = *std::move(d);
      if (static_cast<int>(proposals.size()) > asked) proposals.resize(static_cast<size_t>(asked));
      // llama.cpp's --draft-min: a draft this short is not worth a verification batch.
      if (static_cast<int>(proposals.size()) < std::max(spec_->draft_min, 1)) {
        spec_->length.Observe(asked, 0, 0);
        spec_->drafter->Accept(0);
        proposals.clear();
      }
    }
    if (proposals.empty()) {
      if (absl::Status st = eval({&t, 1}, &logits, false); !st.ok()) return st;
      history_.push_back(t);
      ++r.decode_steps;
      ++r.decoded_tokens;
      continue;
    }
    // Verification: t and the proposals in one batch; row i is the model's logits after
    // batch[0..i], bit for bit what a one-token decode would give (prefill is row-exact).
    Speculation& sp = *spec_;
    sp.batch.assign(1, t);
    for (const DraftToken& d : proposals) sp.batch.push_back(d.token);
    if (absl::Status st = sp.rollback->BeforeBatch(*session_); !st.ok()) return st;
    if (absl::Status st = eval(sp.batch, &sp.rows, /*all_rows=*/true); !st.ok()) return st;
    ++r.decode_steps;
    r.draft_tokens += static_cast<int64_t>(proposals.size());
    const size_t n_vocab = sp.rows.size() / sp.batch.size();
    int accepted = 0;
    size_t kept = 1;  // batch tokens that stay in the KV cache
    bool stopped = false;
    for (size_t i = 0; i < proposals.size(); ++i) {
      const std::span<const float> row = std::span<const float>(sp.rows).subspan(i * n_vocab, n_vocab);
      TokenId next;
      bool agrees;
      if (sp.rejection_sampling) {
        // The target's distribution here (its penalty window includes the tokens kept so
        // far), against the proposal's q: the kept or resampled token has distribution p.
        if (absl::Status st = sampler->Probabilities(row, sp.p); !st.ok()) return st;
        const double u_accept = sampler->NextUniform();
        const double u_resample = sampler->NextUniform();
        const AcceptOutcome o = AcceptOrResample(sp.p.data, proposals[i], u_accept, u_resample, sp.scratch);
        sampler->Accept(o.token);
        next = o.token;
        agrees = o.accepted;
      } else {
        auto s = sample(row);
        if (!s.ok()) return s.status();
        next = *s;
        agrees = next == proposals[i].token;
      }
      if (!take(next, n0 + static_cast<int64_t>(i) + 1)) {
        accepted += agrees;
        stopped = true;
        break;
      }
      if (!agrees) {
        pending = next;  // the proposals from here on are wrong: next is evaluated next
        break;
      }
      ++accepted;
      ++kept;
    }
    // Rows past the last kept proposal leave the cache (exactly: target_rollback.h).
    if (absl::Status st = sp.rollback->KeepPrefix(*session_, n0 + static_cast<int64_t>(kept)); !st.ok()) return st;
    history_.insert(history_.end(), sp.batch.begin(), sp.batch.begin() + static_cast<std::ptrdiff_t>(kept));
    if (want_hidden) hidden.resize(hidden.size() / sp.batch.size() * kept);  // the rows that stayed
    r.draft_accepted += accepted;
    r.decoded_tokens += static_cast<int64_t>(kept);
    sp.drafter->Accept(accepted);
    sp.length.Observe(asked, static_cast<int>(proposals.size()), accepted);
    if (stopped) break;
    // Every proposal kept: the last row's logits choose the next token (the bonus token).
    if (!pending) logits.assign(sp.rows.end() - static_cast<std::ptrdiff_t>(n_vocab), sp.rows.end());
  }
  if (r.stop != StopReason::kStopString) {
    // Release what waited for a stop string or the rest of a UTF-8 character.
    std::string tail = stops->Feed(decoder.Flush()).text;
    if (!stops->stopped()) tail += stops->Flush();
    else r.stop = StopReason::kStopString;
    r.text += tail;
    if (!tail.empty() && on_token) on_token(kNoToken, tail);
  }
  r.decode_seconds = std::chrono::duration<double>(Clock::now() - t1).count();
  r.decode_io_wait_seconds = std::max(0.0, session_->storage_stats().io_wait_seconds - wait_at_prefill);
  return r;
}

}  // namespace uaii
