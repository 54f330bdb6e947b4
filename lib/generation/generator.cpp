#include "uaii/generation.h"

#include <algorithm>
#include <chrono>

#include "generation/grammar_vocabulary.h"
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
  return decode_seconds > 0 ? static_cast<double>(decode_steps) / decode_seconds : 0.0;
}

absl::StatusOr<std::unique_ptr<Generator>> Generator::Create(std::shared_ptr<const Model> model,
                                                             const SessionOptions& options) {
  auto session = Session::Create(std::move(model), options);
  if (!session.ok()) return session.status();
  return std::unique_ptr<Generator>(new Generator(*std::move(session)));
}

void Generator::Reset() {
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
  r.cached_tokens = keep;
  r.prefilled_tokens = n_prompt - keep;
  if (req.penalize_prompt)
    for (TokenId t : req.prompt) sampler->Accept(t);

  auto t0 = Clock::now();
  // One logits vector for the whole generation (Session::DecodeInto trades its
  // storage with the engine's each step: no allocation or copy per token).
  std::vector<float> logits;
  if (absl::Status st = session_->EvalInto(std::span<const TokenId>(req.prompt).subspan(keep), &logits); !st.ok()) {
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
  while (static_cast<int64_t>(r.tokens.size()) < req.max_tokens) {
    auto next = sampler->Sample(logits, grammar.get());
    if (!next.ok()) return next.status();
    if (grammar) {
      if (absl::Status st = grammar->Accept(*next); !st.ok()) return st;
    }
    sampler->Accept(*next);
    if (model.IsEndOfGeneration(*next)) {
      r.stop = StopReason::kEndOfGeneration;
      break;
    }
    r.tokens.push_back(*next);
    sampling::StopResult released = stops->Feed(decoder.Push(*next));
    r.text += released.text;
    bool go_on = !on_token || on_token(*next, released.text);
    if (released.stopped) { r.stop = StopReason::kStopString; break; }
    if (!go_on) { r.stop = StopReason::kCancelled; break; }
    if (static_cast<int64_t>(r.tokens.size()) >= req.max_tokens) break;
    if (session_->n_past() >= session_->max_context()) { r.stop = StopReason::kContextFull; break; }
    if (absl::Status st = session_->DecodeInto(*next, &logits); !st.ok()) return st;
    history_.push_back(*next);
    ++r.decode_steps;
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
