#include "sampling/params.h"

#include <cmath>
#include <string>

#include "util/str_cat.h"

namespace uaii::sampling {

SamplingParams SamplingParams::Greedy() {
  SamplingParams p;
  p.temperature = 0.0f;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  return p;
}

namespace {

absl::Status Bad(std::string msg) { return absl::InvalidArgumentError(StrCat("sampling: ", msg)); }

}  // namespace

absl::Status ValidateSamplingParams(const SamplingParams& p) {
  // Table of float fields that must be finite; ranges are checked below.
  struct Finite {
    const char* name;
    float value;
  };
  for (const Finite& f : {Finite{"temperature", p.temperature}, Finite{"top_p", p.top_p},
                          Finite{"min_p", p.min_p}, Finite{"repeat_penalty", p.repeat_penalty},
                          Finite{"presence_penalty", p.presence_penalty},
                          Finite{"frequency_penalty", p.frequency_penalty}}) {
    if (!std::isfinite(f.value)) return Bad(StrCat(f.name, " = ", f.value, " is not a finite number"));
  }
  if (p.top_k < 0) return Bad(StrCat("top_k = ", p.top_k, " is negative (use 0 to disable top-k)"));
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f))
    return Bad(StrCat("top_p = ", p.top_p, " is outside (0, 1] (use 1 to disable top-p)"));
  if (!(p.min_p >= 0.0f && p.min_p <= 1.0f))
    return Bad(StrCat("min_p = ", p.min_p, " is outside [0, 1] (use 0 to disable min-p)"));
  if (!(p.repeat_penalty > 0.0f))
    return Bad(StrCat("repeat_penalty = ", p.repeat_penalty, " must be > 0 (use 1 to disable it)"));
  if (p.penalty_last_n < -1)
    return Bad(StrCat("penalty_last_n = ", p.penalty_last_n,
                      " must be >= -1 (-1 = whole history, 0 = no penalties)"));
  if (p.min_keep < 0) return Bad(StrCat("min_keep = ", p.min_keep, " is negative"));
  return absl::OkStatus();
}

}  // namespace uaii::sampling
