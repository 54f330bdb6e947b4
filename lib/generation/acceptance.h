// The rejection-sampling rule of speculative sampling (Leviathan et al. 2023, Chen et
// al. 2023) for one proposal: keep draft token x with probability min(1, p(x) / q(x));
// otherwise draw the token from norm(max(0, p - q)). Whatever q is, the token that comes
// out is distributed exactly as p — the target's sampler distribution at this position.
#pragma once
#include <span>
#include <vector>

#include "sampling/candidates.h"
#include "uaii/drafter.h"

namespace uaii {

struct AcceptOutcome {
  bool accepted = false;
  TokenId token = 0;  // the draft token when accepted, else the residual's draw
};

// p: the target's probabilities (sampling::ChainProbabilities), q: the proposal's.
// u_accept, u_resample: uniforms in [0, 1). `scratch` is a reusable buffer.
AcceptOutcome AcceptOrResample(std::span<const sampling::TokenData> p, const DraftToken& proposal, double u_accept,
                               double u_resample, std::vector<sampling::TokenData>& scratch);

}  // namespace uaii
