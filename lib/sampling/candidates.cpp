#include "sampling/candidates.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "util/str_cat.h"

namespace uaii::sampling {

absl::Status FillCandidates(std::span<const float> logits, Candidates& out) {
  if (logits.empty()) return absl::InvalidArgumentError("sampling: the logits are empty (vocabulary of 0 tokens)");
  if (logits.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
    return absl::InvalidArgumentError(StrCat("sampling: ", logits.size(), " logits exceed the int32 token id range"));
  out.data.resize(logits.size());
  out.sorted = false;
  bool any_finite = false;
  for (size_t i = 0; i < logits.size(); ++i) {
    const float l = logits[i];
    if (std::isnan(l) || l == std::numeric_limits<float>::infinity())
      return absl::InvalidArgumentError(StrCat("sampling: logit of token ", i, " is ", l,
                                               " (NaN or +inf; the model produced invalid output)"));
    any_finite |= std::isfinite(l);
    out.data[i] = TokenData{static_cast<int32_t>(i), l, 0.0f};
  }
  if (!any_finite)
    return absl::InvalidArgumentError(
        StrCat("sampling: all ", logits.size(), " logits are -inf, no token can be sampled"));
  return absl::OkStatus();
}

void ApplyPenalties(Candidates& c, std::span<const TokenCount> counts, float repeat,
                    float frequency, float presence) {
  if (counts.empty()) return;
  auto penalize = [&](TokenData& t, int32_t count) {
    // llama.cpp: dividing a negative logit would make the token more likely,
    // so negative (and zero) logits are multiplied instead.
    if (t.logit <= 0.0f) {
      t.logit *= repeat;
    } else {
      t.logit /= repeat;
    }
    t.logit -= static_cast<float>(count) * frequency + static_cast<float>(count > 0) * presence;
  };
  for (const TokenCount& tc : counts) {
    // Penalties come first in the chain, so the array is usually the whole
    // vocabulary in id order and the token sits at index id; otherwise search.
    if (tc.id >= 0 && static_cast<size_t>(tc.id) < c.data.size() && c.data[tc.id].id == tc.id) {
      penalize(c.data[tc.id], tc.count);
      continue;
    }
    for (TokenData& t : c.data) {
      if (t.id == tc.id) {
        penalize(t, tc.count);
        break;
      }
    }
  }
  c.sorted = false;
}

namespace {

void SortAll(Candidates& c) {
  if (!c.sorted) std::sort(c.data.begin(), c.data.end(), Before);
  c.sorted = true;
}

float MaxLogit(const Candidates& c) {
  if (c.sorted) return c.data.front().logit;
  float m = -std::numeric_limits<float>::infinity();
  for (const TokenData& t : c.data) m = std::max(m, t.logit);
  return m;
}

}  // namespace

void TopK(Candidates& c, int32_t k) {
  if (k <= 0 || c.data.empty()) return;
  const size_t kk = std::min<size_t>(static_cast<size_t>(k), c.data.size());
  if (!c.sorted) std::partial_sort(c.data.begin(), c.data.begin() + kk, c.data.end(), Before);
  c.data.resize(kk);
  c.sorted = true;
}

void Softmax(Candidates& c) {
  if (c.data.empty()) return;
  const float max_l = MaxLogit(c);
  float sum = 0.0f;
  for (TokenData& t : c.data) {
    t.p = std::exp(t.logit - max_l);
    sum += t.p;
  }
  for (TokenData& t : c.data) t.p /= sum;
}

void TopP(Candidates& c, float p, size_t min_keep) {
  if (p >= 1.0f || c.data.empty()) return;
  Softmax(c);  // in the current order, as llama.cpp sums before sorting
  // A full sort is O(n log n); most of the mass usually sits in the first few
  // hundred entries, so try a partial sort of those first (the outcome is the
  // same: the order is total, and the prefix is all the loop reads).
  size_t sorted_prefix = c.sorted ? c.data.size() : std::min<size_t>(256, c.data.size());
  if (!c.sorted) std::partial_sort(c.data.begin(), c.data.begin() + sorted_prefix, c.data.end(), Before);
  float cum = 0.0f;
  size_t keep = c.data.size();
  for (size_t i = 0; i < c.data.size(); ++i) {
    if (i == sorted_prefix) {  // ran past the partially sorted prefix: sort the rest
      std::sort(c.data.begin() + i, c.data.end(), Before);
      sorted_prefix = c.data.size();
    }
    cum += c.data[i].p;
    if (cum >= p && i + 1 >= min_keep) {
      keep = i + 1;
      break;
    }
  }
  if (sorted_prefix < c.data.size() && keep > sorted_prefix) SortAll(c);
  c.data.resize(keep);
  c.sorted = true;
}

void MinP(Candidates& c, float p, size_t min_keep) {
  if (p <= 0.0f || c.data.empty()) return;
  const float min_logit = MaxLogit(c) + std::log(p);
  if (!c.sorted) {
    // Filter in place, keeping the order; fall back to the sorted path when that
    // leaves fewer than min_keep (llama.cpp does the same).
    size_t n = 0;
    for (const TokenData& t : c.data) n += t.logit >= min_logit;
    if (n > 0 && n >= min_keep) {
      std::erase_if(c.data, [&](const TokenData& t) { return !(t.logit >= min_logit); });
      return;
    }
    SortAll(c);
  }
  size_t i = 1;  // the first entry always qualifies
  while (i < c.data.size() && (c.data[i].logit >= min_logit || i < min_keep)) ++i;
  c.data.resize(i);
}

void Temperature(Candidates& c, float t) {
  if (c.data.empty()) return;
  if (t <= 0.0f) {
    const size_t keep = ArgMax(c);
    for (size_t i = 0; i < c.data.size(); ++i) {
      if (i != keep) c.data[i].logit = -std::numeric_limits<float>::infinity();
    }
    return;
  }
  for (TokenData& td : c.data) td.logit /= t;
}

size_t ArgMax(const Candidates& c) {
  size_t best = 0;
  for (size_t i = 1; i < c.data.size(); ++i) {
    if (Before(c.data[i], c.data[best])) best = i;
  }
  return best;
}

size_t DrawIndex(Candidates& c, double u) {
  const size_t n = c.data.size();
  if (n == 1) {
    c.data[0].p = 1.0f;
    return 0;
  }
  const float max_l = MaxLogit(c);
  // A tiny temperature can push logits to +inf; then the +inf entries share
  // the mass (exp(inf - inf) would be NaN).
  const bool inf_max = max_l == std::numeric_limits<float>::infinity();
  double sum = 0.0;
  for (TokenData& t : c.data) {
    t.p = inf_max ? (t.logit == max_l ? 1.0f : 0.0f) : std::exp(t.logit - max_l);
    sum += t.p;
  }
  const double target = sum * u;
  double run = 0.0;
  size_t chosen = n;
  size_t last_positive = 0;
  for (size_t i = 0; i < n; ++i) {
    run += c.data[i].p;
    if (c.data[i].p > 0.0f) {
      last_positive = i;
      if (chosen == n && run >= target) chosen = i;
    }
    c.data[i].p = static_cast<float>(c.data[i].p / sum);
  }
  return chosen == n ? last_positive : chosen;
}

}  // namespace uaii::sampling
