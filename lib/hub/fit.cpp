#include "hub/fit.h"

#include <algorithm>

namespace uaii::hub {
namespace {

constexpr uint64_t kGiB = 1ull << 30;
constexpr Preset kPresets[] = {
    {"laptop", 8 * kGiB, 2048},
    {"desktop", 32 * kGiB, 4096},
    {"server", 128 * kGiB, 8192},
    {"phone", 2 * kGiB, 512},
    {"none", 0, 0},
    {"off", 0, 0},
};

}  // namespace

const Preset* FindPreset(std::string_view name) {
  for (const auto& p : kPresets)
    if (p.name == name) return &p;
  return nullptr;
}

FitEstimate EstimateFit(const hf::HfConfig& cfg, const std::vector<bool>& sliding_layers, uint64_t weight_bytes,
                        const Preset& preset) {
  FitEstimate f;
  f.weight_bytes = weight_bytes;
  f.kv_window = preset.kv_window > 0 ? preset.kv_window : cfg.max_position_embeddings;
  if (cfg.max_position_embeddings > 0) f.kv_window = std::min<int64_t>(f.kv_window, cfg.max_position_embeddings);
  const uint64_t per_token_layer = 2ull * 2ull * static_cast<uint64_t>(cfg.num_key_value_heads) *
                                   static_cast<uint64_t>(cfg.head_dim);
  for (int64_t l = 0; l < cfg.num_hidden_layers; ++l) {
    int64_t w = f.kv_window;
    const bool sliding = l < static_cast<int64_t>(sliding_layers.size()) && sliding_layers[l];
    if (sliding && cfg.sliding_window > 0) w = std::min(w, cfg.sliding_window);
    f.kv_bytes += per_token_layer * static_cast<uint64_t>(w);
  }
  f.total_bytes = f.weight_bytes + f.kv_bytes;
  f.budget_bytes = preset.budget_bytes;
  f.fits = preset.budget_bytes == 0 || f.total_bytes <= preset.budget_bytes;
  return f;
}

}  // namespace uaii::hub
