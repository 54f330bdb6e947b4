#include "runtime/kv_cache.h"

#include <algorithm>

namespace uaii::runtime {

KvCache::KvCache(const std::vector<KvLayerShape>& layers, int64_t n_ctx)
    : layers_(layers), n_ctx_(n_ctx), n_cells_((n_ctx + kCellAlign - 1) / kCellAlign * kCellAlign) {
  for (const auto& l : layers_) {
    k_.emplace_back(static_cast<size_t>(n_cells_ * l.n_head_kv * l.head_dim_k), 0);
    v_.emplace_back(static_cast<size_t>(n_cells_ * l.n_head_kv * l.head_dim_v), 0);
  }
}

void KvCache::Clear(int64_t from) {
  from = std::clamp<int64_t>(from, 0, n_cells_);
  for (size_t l = 0; l < layers_.size(); ++l) {
    const auto& s = layers_[l];
    std::fill(k_[l].begin() + from * s.n_head_kv * s.head_dim_k, k_[l].end(), 0);
    for (int64_t r = 0; r < s.n_head_kv * s.head_dim_v; ++r)
      std::fill(v_[l].begin() + r * n_cells_ + from, v_[l].begin() + (r + 1) * n_cells_, 0);
  }
}

}  // namespace uaii::runtime
