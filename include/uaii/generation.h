// uaii::Generator: one conversation's generation loop over a Session — prefix reuse,
// sampling, stop strings, end-of-generation tokens and streamed UTF-8 text. The CLI
// (`generate`, `chat`) and the C ABI all generate through it.
//
// Prefix reuse: the Generator remembers which tokens its Session's KV cache holds.
// A new request whose prompt starts with those tokens evaluates only the rest (at
// least one token, whose logits start the reply); `cached_tokens` counts the reuse.
// Because prefill is row-exact, the reply equals a cold run's.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "uaii/drafter.h"
#include "uaii/sampling.h"
#include "uaii/session.h"
#include "uaii/stop_reason.h"
#include "uaii/token_sampler.h"

namespace uaii {
namespace sampling {
class GrammarVocabulary;
}

struct GenerationRequest {
  std::vector<TokenId> prompt;            // the whole conversation so far, tokenized
  int64_t max_tokens = 256;
  sampling::SamplingParams sampling = sampling::SamplingParams::Greedy();
  std::vector<std::string> stop;          // stop strings; never emitted
  bool penalize_prompt = false;           // feed prompt tokens to the penalty window
  // A GBNF grammar (uaii/grammar.h) the reply must follow; empty: unconstrained. The
  // reply ends with end-of-generation only where the grammar is complete.
  std::string grammar;
};

// Speculative decoding (docs/speculative.md): a drafter (uaii/drafter.h) proposes up to
// draft_max tokens; the model evaluates them with the pending token in one batch (at
// most kMaxDraftTokens + 1 rows) and an acceptance rule keeps a prefix of them; the
// rejected rows are rolled back exactly. The llama.cpp knobs: --draft, --draft-max,
// --draft-min, --draft-p-min.
enum class AcceptanceRule {
  // Exact match for greedy requests and under a grammar, rejection sampling otherwise.
  kAuto,
  // The request's sampler picks every token from the verified rows, as it would one
  // token at a time; proposals are kept while they equal its picks. The reply is token
  // for token the one decoding without speculation gives, for a seed too. Proposals are
  // greedy.
  kExactMatch,
  // Leviathan et al. / Chen et al.: proposals are drawn from the drafter's q (the
  // request's chain on its logits); x is kept with probability min(1, p(x) / q(x)), a
  // rejection draws from norm(max(0, p - q)). The reply has the target's distribution
  // (not the same tokens for a seed) and keeps more proposals than exact match when
  // sampling. Under a grammar the rule is exact match regardless.
  kRejectionSampling,
};

struct SpeculativeOptions {
  // The drafter: at most one of the three (none: no speculation).
  std::shared_ptr<const Model> draft;  // (a) a separate model with the same vocabulary
  bool draft_auto = false;             // (c) the model's in-trunk MTP head (none yet: InvalidArgument naming the architecture)
  std::shared_ptr<Drafter> drafter;    // any Drafter (the gemma4 assistant, a test's); stateful: one Generator's alone
  int draft_max = kMaxDraftTokens;     // proposals per verification, 1..kMaxDraftTokens
  int draft_min = 0;                   // fewer proposals than this are not verified (0..draft_max)
  float p_min = 0.75f;                 // stop proposing when the drafter's top probability is below (0..1; llama.cpp's 0.75)
  bool adaptive = true;                // shrink the draft length while proposals fail, grow it back (docs/speculative.md)
  AcceptanceRule rule = AcceptanceRule::kAuto;
  SessionOptions draft_session;        // the draft model's session (threads, memory); max_context is the model's
};

struct GenerationResult {
  std::vector<TokenId> tokens;  // generated ids, the end-of-generation token excluded
  std::string text;             // the visible reply (cut before a stop string)
  StopReason stop = StopReason::kMaxTokens;
  int64_t prompt_tokens = 0;
  int64_t cached_tokens = 0;    // prompt tokens reused from the KV cache
  int64_t prefilled_tokens = 0; // prompt tokens evaluated by this request
  double prefill_seconds = 0;
  double decode_seconds = 0;
  int64_t decode_steps = 0;     // forward passes after the prompt's (one per generated token after the first,
                                // fewer with speculation)
  int64_t decoded_tokens = 0;   // generated tokens evaluated after the prompt (decode_tokens_per_s counts these)
  int64_t draft_tokens = 0;     // speculation: tokens the drafter proposed (and the model verified)
  int64_t draft_accepted = 0;   // of those, the ones the acceptance rule kept
  double draft_seconds = 0;     // of decode_seconds, in the drafter (what a drafter that fails costs, at the least)
  double decode_io_wait_seconds = 0;  // of decode_seconds, waiting for streamed weights (storage)

  double prefill_tokens_per_s() const;
  double decode_tokens_per_s() const;
  // draft_accepted / draft_tokens (0 without proposals).
  double draft_acceptance_rate() const;
};

// Sees each generated token with the text it releases (possibly empty: held back for
// a stop string or an incomplete UTF-8 character). Return false to cancel.
using TokenCallback = std::function<bool(TokenId id, std::string_view text)>;

class Generator {
 public:
  static absl::StatusOr<std::unique_ptr<Generator>> Create(std::shared_ptr<const Model> model,
                                                           const SessionOptions& options);
  // With a drafter for speculative decoding. InvalidArgument when the draft model's
  // vocabulary is not the model's (every token's piece must be equal), draft_max is
  // outside 1..kMaxDraftTokens (the message names the limit), draft_min outside
  // 0..draft_max, p_min outside [0, 1], more than one drafter is given, or draft_auto
  // finds no in-trunk head (naming the architecture). Unimplemented for a drafter that
  // needs the target's hidden states (Session does not expose them yet).
  static absl::StatusOr<std::unique_ptr<Generator>> Create(std::shared_ptr<const Model> model,
                                                           const SessionOptions& options,
                                                           const SpeculativeOptions& speculative);

  ~Generator();

  absl::StatusOr<GenerationResult> Run(const GenerationRequest& request,
                                       const TokenCallback& on_token = nullptr);
  // Forgets the conversation (empties the KV cache).
  void Reset();

  // Token-level control (the C ABI's uaii_session_eval / _truncate / _step), keeping
  // the prefix-reuse bookkeeping in step with the KV cache, so Run after them still
  // reuses exactly what the cache holds.
  //
  // Appends `tokens` at positions n_past().. and writes their logits into *logits
  // (every row with all_logits, [tokens.size(), n_vocab]; else the last row). The last
  // row is also kept for Step. On error the position is unchanged.
  absl::Status Eval(std::span<const TokenId> tokens, std::vector<float>* logits, bool all_logits = false);
  // Forgets positions >= n (n <= n_past()). Step then needs an Eval first.
  void Truncate(int64_t n);
  // One generation step an application drives: samples the next token from the last
  // Eval's (or Step's) logits with `sampler`, records it there, and unless it ends
  // generation or the context is full, evaluates it so the next Step can follow.
  // FailedPrecondition when there are no logits to sample from (nothing evaluated since
  // creation, Reset, Truncate or Run).
  struct StepResult {
    TokenId token = kNoToken;
    bool end_of_generation = false;  // the model's end-of-generation token; not evaluated
    bool context_full = false;       // not evaluated: the context has no room
  };
  absl::StatusOr<StepResult> Step(TokenSampler& sampler);

  const Model& model() const { return session_->model(); }
  Session& session() { return *session_; }
  // The tokens the KV cache holds, in order.
  const std::vector<TokenId>& history() const { return history_; }

 private:
  struct Speculation;  // the drafter and its state (speculation.h)
  explicit Generator(std::unique_ptr<Session> s);
  std::unique_ptr<Session> session_;
  std::unique_ptr<Speculation> spec_;  // null: no speculation
  std::vector<TokenId> history_;
  std::vector<float> last_logits_;  // the last evaluated row, for Step (empty: none)
  // The vocabulary as grammars see it, built on the first constrained request.
  std::shared_ptr<const sampling::GrammarVocabulary> grammar_vocab_;
};

}  // namespace uaii
