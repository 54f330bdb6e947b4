// Generator::Speculation: what a Generator with a drafter keeps between requests — the
// drafter, the target's rollback, the adaptive draft length and the knobs — and the
// per-request picker and buffers of the verification step (generator.cpp's loop).
#pragma once
#include <memory>
#include <optional>
#include <vector>

#include "generation/draft_length.h"
#include "generation/target_rollback.h"
#include "sampling/candidates.h"
#include "uaii/drafter.h"
#include "uaii/generation.h"

namespace uaii {

struct Generator::Speculation {
  // Validates `options` (the messages name the field and its range) and makes the
  // drafter it names; null when it names none.
  static absl::StatusOr<std::unique_ptr<Speculation>> Make(const Session& target, const SpeculativeOptions& options);

  std::shared_ptr<Drafter> drafter;
  std::unique_ptr<TargetRollback> rollback;
  DraftLength length{0, kMaxDraftTokens, true};
  int draft_max = kMaxDraftTokens;
  int draft_min = 0;
  bool adaptive = true;
  float p_min = 0.0f;
  AcceptanceRule rule = AcceptanceRule::kAuto;

  // Per request (Start): the rule that applies, the picker drafters use, the draft
  // length back at its start (so a seed reproduces a request whatever came before).
  bool rejection_sampling = false;
  std::optional<DraftPicker> picker;
  void Start(const GenerationRequest& request);

  // The verification step's buffers, reused across steps.
  std::vector<TokenId> batch;
  std::vector<float> rows;
  sampling::Candidates p;
  std::vector<sampling::TokenData> scratch;
};

}  // namespace uaii
