// The speculative-decoding flags of `uaii generate`, named as llama.cpp's:
//   --draft PATH|auto   the drafter: a model with the same vocabulary, or the model's
//                       in-trunk MTP head (`auto`)        (--draft-model PATH: alias)
//   --draft-max N       proposals per verification, 1..16, default 16 (--n-draft: alias)
//   --draft-min N       shorter drafts are not verified, default 0
//   --draft-p-min P     stop proposing below this top probability, default 0.75
//   --draft-rule R      auto | exact | rejection (docs/speculative.md)
#pragma once
#include <initializer_list>

#include "absl/status/statusor.h"
#include "args.h"
#include "uaii/generation.h"

namespace uaii::cli {

inline constexpr std::initializer_list<const char*> kDraftFlags = {"--draft",      "--draft-model", "--draft-max",
                                                                   "--n-draft",    "--draft-min",   "--draft-p-min",
                                                                   "--draft-rule"};

// The options the flags ask for (no drafter when neither --draft nor --draft-model is
// given; a knob without a drafter is an error). Loads the draft model, whose session
// takes `draft_session`, or, for a gemma4-assistant file, the assistant for `target`.
absl::StatusOr<SpeculativeOptions> SpeculativeFromArgs(const Args& args, const SessionOptions& draft_session,
                                                       std::shared_ptr<const Model> target);

}  // namespace uaii::cli
