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

// Speculative decoding (docs/speculative.md): a smaller draft model with the same
// vocabulary proposes up to n_draft tokens greedily; the model evaluates them in one
// batch, and the request's sampler picks each next token from those rows exactly as it
// would one token at a time, keeping proposals while they agree. Rows are exact
// (prefill is row-exact), so the reply is the same token for token as without a draft,
// for greedy and sampled requests and under a grammar; only the forward passes differ.
struct SpeculativeOptions {
  std::shared_ptr<const Model> draft;  // null: no speculation
  int n_draft = 4;                     // proposals per step, 1..64
  SessionOptions draft_session;        // the draft's session (threads, memory); max_context is the model's
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
  int64_t draft_tokens = 0;     // speculation: tokens the draft proposed
  int64_t draft_accepted = 0;   // of those, the ones the model's sampler picked too
  double decode_io_wait_seconds = 0;  // of decode_seconds, waiting for streamed weights (storage)

  double prefill_tokens_per_s() const;
  double decode_tokens_per_s() const;
};

// Sees each generated token with the text it releases (possibly empty: held back for
// a stop string or an incomplete UTF-8 character). Return false to cancel.
using TokenCallback = std::function<bool(TokenId id, std::string_view text)>;

class Generator {
 public:
  static absl::StatusOr<std::unique_ptr<Generator>> Create(std::shared_ptr<const Model> model,
                                                           const SessionOptions& options);
  // With a draft model for speculative decoding. InvalidArgument when the draft's
  // vocabulary is not the model's (every token's piece must be equal) or n_draft is
  // outside 1..64.
  static absl::StatusOr<std::unique_ptr<Generator>> Create(std::shared_ptr<const Model> model,
                                                           const SessionOptions& options,
                                                           const SpeculativeOptions& speculative);

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
  explicit Generator(std::unique_ptr<Session> s) : session_(std::move(s)) {}
  // Speculation: up to `n` greedy proposals of the draft after `prefix` (its own KV cache
  // brought in step with `prefix` first).
  absl::StatusOr<std::vector<TokenId>> Propose(std::span<const TokenId> prefix, int n);
  std::unique_ptr<Session> session_;
  std::unique_ptr<Session> draft_;       // null: no speculation
  std::vector<TokenId> draft_history_;   // what the draft's KV cache holds
  int n_draft_ = 0;
  std::vector<TokenId> history_;
  std::vector<float> last_logits_;  // the last evaluated row, for Step (empty: none)
  // The vocabulary as grammars see it, built on the first constrained request.
  std::shared_ptr<const sampling::GrammarVocabulary> grammar_vocab_;
};

}  // namespace uaii
