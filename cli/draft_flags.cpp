#include "draft_flags.h"

#include "uaii/str_cat.h"

namespace uaii::cli {

absl::StatusOr<SpeculativeOptions> SpeculativeFromArgs(const Args& a, const SessionOptions& draft_session,
                                                       std::shared_ptr<const Model> target) {
  SpeculativeOptions o;
  if (a.has("--draft") && a.has("--draft-model"))
    return absl::InvalidArgumentError("--draft and --draft-model are the same flag: give one");
  if (a.has("--draft-max") && a.has("--n-draft"))
    return absl::InvalidArgumentError("--draft-max and --n-draft are the same flag: give one");
  const std::string draft = a.has("--draft") ? a.get("--draft") : a.get("--draft-model");
  if (draft.empty()) {
    for (const char* f : kDraftFlags)
      if (a.has(f)) return absl::InvalidArgumentError(StrCat(f, " needs a drafter: --draft PATH or --draft auto"));
    return o;
  }
  auto int_flag = [&](const char* flag, int* out) -> absl::Status {
    if (a.has(flag) && !ParseNumber(a.get(flag), out))
      return absl::InvalidArgumentError(StrCat(flag, " takes an integer, got \"", a.get(flag), "\""));
    return absl::OkStatus();
  };
  if (auto st = int_flag(a.has("--n-draft") ? "--n-draft" : "--draft-max", &o.draft_max); !st.ok()) return st;
  if (auto st = int_flag("--draft-min", &o.draft_min); !st.ok()) return st;
  if (a.has("--draft-p-min") && !ParseNumber(a.get("--draft-p-min"), &o.p_min))
    return absl::InvalidArgumentError(StrCat("--draft-p-min takes a number, got \"", a.get("--draft-p-min"), "\""));
  const std::string rule = a.get("--draft-rule", "auto");
  if (rule == "auto") o.rule = AcceptanceRule::kAuto;
  else if (rule == "exact") o.rule = AcceptanceRule::kExactMatch;
  else if (rule == "rejection") o.rule = AcceptanceRule::kRejectionSampling;
  else return absl::InvalidArgumentError(StrCat("--draft-rule takes auto, exact or rejection, got \"", rule, "\""));
  if (draft == "auto") {
    o.draft_auto = true;
  } else if (IsAssistantDrafterFile(draft)) {
    auto d = MakeAssistantDrafter(std::move(target), draft);
    if (!d.ok()) return d.status();
    o.drafter = *std::move(d);
  } else {
    auto m = Model::Load(draft);
    if (!m.ok()) return m.status();
    o.draft = *std::move(m);
    o.draft_session = draft_session;
  }
  return o;
}

}  // namespace uaii::cli
