#include "generation/speculation.h"

#include <cmath>

#include "util/str_cat.h"

namespace uaii {

absl::StatusOr<std::unique_ptr<Generator::Speculation>> Generator::Speculation::Make(const Session& target,
                                                                                   const SpeculativeOptions& o) {
  const int kinds = (o.draft != nullptr) + o.draft_auto + (o.drafter != nullptr);
  if (kinds == 0) return std::unique_ptr<Speculation>();
  if (kinds > 1)
    return absl::InvalidArgumentError("speculative decoding takes one drafter: a draft model, draft_auto or a Drafter");
  if (o.draft_max < 1 || o.draft_max > kMaxDraftTokens)
    return absl::InvalidArgumentError(StrCat("draft_max ", o.draft_max, " is outside 1..", kMaxDraftTokens,
                                             ": a verification batch holds the pending token and at most ",
                                             kMaxDraftTokens, " drafts (", kMaxDraftTokens + 1, " rows)"));
  if (o.draft_min < 0 || o.draft_min > o.draft_max)
    return absl::InvalidArgumentError(StrCat("draft_min ", o.draft_min, " is outside 0..draft_max (", o.draft_max, ")"));
  if (!(o.p_min >= 0.0f && o.p_min <= 1.0f))
    return absl::InvalidArgumentError(StrCat("draft p_min ", o.p_min, " is outside [0, 1]"));
  auto s = std::make_unique<Speculation>();
  if (o.drafter) {
    s->drafter = o.drafter;
  } else {
    auto d = o.draft_auto ? MakeInTrunkDrafter(target.model())
                          : MakeModelDrafter(target.model(), target.max_context(), o.draft, o.draft_session);
    if (!d.ok()) return d.status();
    s->drafter = *std::move(d);
  }
  if (s->drafter->needs_target_hidden() && target.device() != "cpu")
    return absl::UnimplementedError(StrCat("the '", s->drafter->kind(), "' drafter reads the target's hidden states, ",
                                           "which only CPU sessions return (this one is on ", target.device(), ")"));
  s->rollback = MakeTargetRollback(target.model());
  s->draft_max = o.draft_max;
  s->draft_min = o.draft_min;
  s->adaptive = o.adaptive;
  s->p_min = o.p_min;
  s->rule = o.rule;
  return s;
}

void Generator::Speculation::Start(const GenerationRequest& req) {
  const bool greedy = req.sampling.greedy();
  // Under a grammar the target's draw is "sample, and resample masked when the grammar
  // refuses": no q-vs-p rule fits it, so the sampler picks every token (exact match).
  rejection_sampling = !greedy && req.grammar.empty() && rule != AcceptanceRule::kExactMatch;
  // The drafter's own stream: a seed reproduces the proposals, apart from the target's draws.
  picker.emplace(req.sampling, /*greedy=*/!rejection_sampling, p_min, req.sampling.seed ^ 0x9E3779B9u);
  length = DraftLength(draft_min, draft_max, adaptive);
}

}  // namespace uaii
