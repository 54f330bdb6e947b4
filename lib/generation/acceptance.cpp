#include "generation/acceptance.h"

#include <algorithm>
#include <unordered_map>

#include "sampling/distribution.h"

namespace uaii {

AcceptOutcome AcceptOrResample(std::span<const sampling::TokenData> p, const DraftToken& proposal, double u_accept,
                               double u_resample, std::vector<sampling::TokenData>& scratch) {
  const TokenId x = proposal.token;
  double px = 0.0, qx = 0.0;
  for (const sampling::TokenData& t : p)
    if (t.id == x) px = t.p;
  for (const TokenProb& t : proposal.q)
    if (t.id == x) qx = t.p;
  // u < p/q, written without the division (q(x) > 0 for a token drawn from q).
  if (qx > 0.0 && u_accept * qx < px) return {true, x};
  // The residual lives on p's support: outside it max(0, 0 - q) = 0.
  std::unordered_map<TokenId, float> q;
  q.reserve(proposal.q.size() * 2);
  for (const TokenProb& t : proposal.q) q[t.id] = t.p;
  scratch.assign(p.begin(), p.end());
  for (sampling::TokenData& t : scratch) {
    auto it = q.find(t.id);
    t.p = std::max(0.0f, t.p - (it == q.end() ? 0.0f : it->second));
  }
  size_t idx = sampling::PickIndex(scratch, u_resample);
  // p == q up to rounding leaves no residual mass (a rejection then has probability ~0);
  // p itself is the right distribution in that limit.
  if (idx >= scratch.size()) {
    idx = sampling::PickIndex(p, u_resample);
    return {false, idx < p.size() ? p[idx].id : x};
  }
  return {false, scratch[idx].id};
}

}  // namespace uaii
