// uaii::Drafter: what proposes tokens for speculative decoding (docs/speculative.md).
// One mechanism serves every kind of drafter; the Generator drives it the same way:
//
//   (a) a separate draft model with the same vocabulary, any family (MakeModelDrafter);
//   (b) an assistant that has no KV cache of its own and attends to the target's (the
//       gemma4 assistant): it reads DraftContext::target and ::target_hidden;
//   (c) a multi-token-prediction head inside the target's own trunk (Qwen 3.5's MTP
//       block): MakeInTrunkDrafter, `--draft auto`.
//
// Each step the Generator has a pending token t (sampled, not yet evaluated). It calls
// Propose with the whole conversation up to and including t; the drafter returns up to
// max_len proposals d1..dk. The target evaluates t, d1..dk in ONE batch (at most
// kMaxDraftTokens + 1 rows), the acceptance rule keeps a prefix of the proposals, the
// rejected rows are rolled back, and Accept tells the drafter how many survived.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "uaii/model.h"
#include "uaii/sampling.h"
#include "uaii/session.h"

namespace uaii {

// Proposals per verification: a batch holds the pending token and at most this many
// drafts (17 rows). More is InvalidArgument naming the limit.
inline constexpr int kMaxDraftTokens = 16;

// One token's probability in a drafter's distribution.
struct TokenProb {
  TokenId id = 0;
  float p = 0.0f;
};

// One proposal and the distribution q it was drawn from: the ids with q > 0 (any
// order). The rejection-sampling rule needs q(d) and, on a rejection, q everywhere;
// greedy proposals (the exact-match rule) carry q = {d: 1}.
struct DraftToken {
  TokenId token = 0;
  std::vector<TokenProb> q;
};

// Turns a drafter's logits row into the next proposal, the same way for every kind, so
// a drafter never deals with sampling. The Generator makes one per request (seeded from
// the request's seed: a seed reproduces the proposals too).
class DraftPicker {
 public:
  // greedy: the argmax (the exact-match rule, and greedy requests). Otherwise a draw
  // from the request's chain (top-k, top-p, min-p, temperature; no penalties: q may be
  // any distribution, the rule corrects for it) on the picker's own PRNG.
  DraftPicker(const sampling::SamplingParams& params, bool greedy, float p_min, uint32_t seed);
  ~DraftPicker();
  DraftPicker(DraftPicker&&) noexcept;
  DraftPicker& operator=(DraftPicker&&) noexcept;
  // nullopt when the drafter's top probability is below p_min (stop proposing; greedy:
  // the softmax of the raw row, sampled: q's largest). Errors: bad logits (NaN, +inf,
  // all -inf, empty).
  absl::StatusOr<std::optional<DraftToken>> Pick(std::span<const float> logits);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// What the Generator hands a drafter for one step.
struct DraftContext {
  // The conversation: every token the target's KV cache holds, then the pending token
  // t (not evaluated yet). Proposals continue it.
  std::span<const TokenId> history;
  int max_len = 0;                 // at most this many proposals (1..kMaxDraftTokens)
  DraftPicker* picker = nullptr;   // picks each proposal from the drafter's logits
  // The target, for drafters that read it (kinds b and c): its KV cache holds
  // history[0 .. history.size() - 1) at positions 0.., exactly (rejected rows are gone).
  const Session* target = nullptr;
  // Only for a drafter whose needs_target_hidden() is true: the target's hidden states
  // after its final norm (the lm head's input), [rows, n_embd] row-major, for the rows
  // of the last verification batch (or the prompt's last row) that stayed in the cache;
  // the last row is the one whose logits chose the pending token.
  std::span<const float> target_hidden;
};

class Drafter {
 public:
  virtual ~Drafter() = default;
  // "model", "assistant", "mtp": for messages.
  virtual std::string_view kind() const = 0;
  // Up to ctx.max_len proposals continuing ctx.history, each picked with ctx.picker
  // (stop early when it returns nullopt). Fewer or none is fine (its own context is
  // full, low confidence). A drafter may keep state between calls; Accept and Rollback
  // say what of it is still the conversation.
  virtual absl::StatusOr<std::vector<DraftToken>> Propose(const DraftContext& ctx) = 0;
  // After a verification: the first n_accepted of the last proposals are in the
  // conversation now (then the target's pick); the rest are not.
  virtual void Accept(int n_accepted) = 0;
  // The conversation was cut to its first n tokens (Reset: 0, a new prompt, Truncate):
  // forget state past them.
  virtual void Rollback(int64_t n) = 0;
  // True when Propose reads DraftContext::target_hidden (kinds b and c).
  virtual bool needs_target_hidden() const { return false; }
};

// Kind (a): a separate model. InvalidArgument when its vocabulary is not the target's
// (every token's piece must be equal). Its session uses `options` (threads, memory);
// its context is the target's max_context, capped at its own training context (past
// it, no proposals).
absl::StatusOr<std::unique_ptr<Drafter>> MakeModelDrafter(const Model& target, int64_t target_max_context,
                                                          std::shared_ptr<const Model> draft,
                                                          const SessionOptions& options);

// Kind (b): the gemma4 assistant drafter in the GGUF `path`, for `target` (a gemma4
// model): it attends over the target session's KV cache and continues from its hidden
// states (CPU sessions). Errors name both files and what does not pair (architecture,
// vocabulary, hidden width, a cache layer's heads).
absl::StatusOr<std::unique_ptr<Drafter>> MakeAssistantDrafter(std::shared_ptr<const Model> target,
                                                              const std::string& path);
// Whether `path` is a drafter that loads only beside its target (a gemma4-assistant GGUF).
bool IsAssistantDrafterFile(const std::string& path);

// Kind (c), `--draft auto`: the target's own multi-token-prediction head.
// InvalidArgument naming the architecture when the file has none (every architecture
// uaii reads today).
absl::StatusOr<std::unique_ptr<Drafter>> MakeInTrunkDrafter(const Model& target);

}  // namespace uaii
