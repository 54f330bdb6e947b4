#include "backends/cpu/masked_head.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "backends/cpu/linear.h"
#include "util/str_cat.h"

namespace uaii::backends::cpu {

absl::Status MaskedHeadRows(const RunContext& ctx, const float* x, const float* scores, const int32_t* ordering,
                            const runtime::BoundWeight& head, const MaskedHeadShape& shape, float* y) {
  const int64_t E = shape.n_embd, C = shape.n_centroids, V = shape.n_vocab, K = shape.top_k;
  const int64_t per_cluster = V / C, n_ids = K * per_cluster;
  // Reused by every step of a session's thread: a decode step allocates nothing.
  thread_local std::vector<int64_t> clusters;
  thread_local std::vector<int32_t> ids;
  thread_local std::vector<float> rows, logits;
  clusters.resize(static_cast<size_t>(C));
  ids.resize(static_cast<size_t>(n_ids));
  rows.resize(static_cast<size_t>(n_ids * E));
  logits.resize(static_cast<size_t>(n_ids));
  for (int64_t r = 0; r < shape.rows; ++r) {
    const float* s = scores + r * C;
    for (int64_t c = 0; c < C; ++c)
      if (std::isnan(s[c])) return absl::InvalidArgumentError(StrCat("centroid score ", c, " of row ", r, " is NaN"));
    std::iota(clusters.begin(), clusters.end(), int64_t{0});
    std::partial_sort(clusters.begin(), clusters.begin() + K, clusters.end(),
                      [s](int64_t a, int64_t b) { return s[a] > s[b] || (s[a] == s[b] && a < b); });
    for (int64_t k = 0; k < K; ++k)
      std::copy_n(ordering + clusters[k] * per_cluster, per_cluster, ids.begin() + k * per_cluster);
    // GetRows names an id outside the head: a hostile ordering fails here, not in memory.
    if (auto st = EmbedRows(ctx, head, ids.data(), n_ids, rows.data()); !st.ok()) return st;
    const float* xr = x + r * E;
    float* yr = y + r * V;
    float lowest = INFINITY;
    for (int64_t i = 0; i < n_ids; ++i) {
      const float* w = rows.data() + i * E;
      double dot = 0;
      for (int64_t e = 0; e < E; ++e) dot += static_cast<double>(xr[e]) * w[e];
      logits[i] = static_cast<float>(dot);
      lowest = std::min(lowest, logits[i]);
    }
    std::fill(yr, yr + V, lowest - 1.0f);
    for (int64_t i = 0; i < n_ids; ++i) yr[ids[i]] = logits[i];
  }
  return absl::OkStatus();
}

}  // namespace uaii::backends::cpu
