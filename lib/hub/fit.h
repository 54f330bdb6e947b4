// Will a model fit a memory preset? (ARCHITECTURE.md, "Memory presets"): weights plus
// the KV cache of the preset's window, against the preset's resident target. An
// estimate for `uaii pull --dry-run`, before anything large is downloaded.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "loaders/hf_config.h"
#include "loaders/hf_model.h"
#include "uaii/hub.h"

namespace uaii::hub {

struct Preset {
  std::string_view name;
  uint64_t budget_bytes;  // 0 = unlimited
  int64_t kv_window;      // tokens; 0 = max_position_embeddings
};

// laptop ~8 GiB / 2048, desktop ~32 GiB / 4096, server ~128 GiB / 8192, phone 2 GiB / 512,
// none unlimited / max_position_embeddings ("off" is an alias of none).
const Preset* FindPreset(std::string_view name);

// KV bytes = sum over layers of 2 (K, V) * num_key_value_heads * head_dim * 2 bytes *
// min(window, sliding_window on sliding layers). `sliding_layers` (per layer, as the
// family reads config.json: models::ReadHfFamily) may be empty: no sliding layers.
FitEstimate EstimateFit(const hf::HfConfig& cfg, const std::vector<bool>& sliding_layers, uint64_t weight_bytes,
                        const Preset& preset);

}  // namespace uaii::hub
