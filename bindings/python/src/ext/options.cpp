#include "options.h"

#include <cmath>
#include <cstdint>

namespace uaii_py {
namespace {

struct PresetName {
  const char* name;
  uaii_preset preset;
};
constexpr PresetName kPresets[] = {
    {"none", UAII_PRESET_NONE},     {"off", UAII_PRESET_NONE},       {"laptop", UAII_PRESET_LAPTOP},
    {"desktop", UAII_PRESET_DESKTOP}, {"server", UAII_PRESET_SERVER}, {"phone", UAII_PRESET_PHONE},
};

uaii_preset PresetFrom(const std::optional<std::string>& name) {
  if (!name) return UAII_PRESET_NONE;
  for (const PresetName& p : kPresets)
    if (*name == p.name) return p.preset;
  Fail(UAII_ERR_INVALID_ARGUMENT,
       "unknown preset \"" + *name + "\"; use one of none, laptop, desktop, server, phone");
}

}  // namespace

uaii_session_options SessionOptionsFrom(const SessionKwargs& kw) {
  uaii_session_options o;
  uaii_session_options_init(&o);
  o.preset = PresetFrom(kw.preset);
  if (kw.ram_gb) {
    if (!std::isfinite(*kw.ram_gb) || *kw.ram_gb < 0)
      Fail(UAII_ERR_INVALID_ARGUMENT, "ram_gb " + std::to_string(*kw.ram_gb) + " is not a size (GiB >= 0)");
    o.ram_budget_bytes = static_cast<uint64_t>(*kw.ram_gb * 1024.0 * 1024.0 * 1024.0);
  }
  if (kw.kv_window) o.kv_window = *kw.kv_window;
  if (kw.threads) {
    if (*kw.threads > INT32_MAX || *kw.threads < INT32_MIN)
      Fail(UAII_ERR_INVALID_ARGUMENT, "threads " + std::to_string(*kw.threads) + " is out of range");
    o.threads = static_cast<int32_t>(*kw.threads);
  }
  if (kw.device.find('\0') != std::string::npos) Fail(UAII_ERR_INVALID_ARGUMENT, "device contains a NUL character");
  o.device = kw.device.c_str();
  if (kw.device_memory_bytes) {
    if (*kw.device_memory_bytes < 0)
      Fail(UAII_ERR_INVALID_ARGUMENT,
           "device_memory_bytes " + std::to_string(*kw.device_memory_bytes) + " is negative");
    o.device_memory_bytes = static_cast<uint64_t>(*kw.device_memory_bytes);
  }
  if (kw.max_context) o.max_context = *kw.max_context;
  if (kw.moe_top_k) o.moe_top_k = *kw.moe_top_k;
  o.moe_prefetch = kw.moe_prefetch ? 1 : 0;
  o.learn_calibration = kw.learn_calibration ? 1 : 0;
  if (kw.draft_model) o.draft_model = kw.draft_model->h;
  if (kw.n_draft) {
    if (*kw.n_draft < 1 || *kw.n_draft > 64)
      Fail(UAII_ERR_INVALID_ARGUMENT, "n_draft " + std::to_string(*kw.n_draft) + " is outside 1..64");
    o.n_draft = static_cast<int32_t>(*kw.n_draft);
  }
  return o;
}

}  // namespace uaii_py
