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
  if (kw.draft_path.find('\0') != std::string::npos) Fail(UAII_ERR_INVALID_ARGUMENT, "draft path contains a NUL character");
  if (!kw.draft_path.empty()) o.draft_path = kw.draft_path.c_str();
  o.draft_auto = kw.draft_auto ? 1 : 0;
  // Ranges are the library's to check (its messages name the limit); only what the C
  // fields cannot hold is refused here. 0 would mean "the default" to the C ABI.
  if (kw.draft_max) {
    if (*kw.draft_max < 1 || *kw.draft_max > INT32_MAX)
      Fail(UAII_ERR_INVALID_ARGUMENT, "draft_max " + std::to_string(*kw.draft_max) + " is outside 1.." +
                                          std::to_string(UAII_MAX_DRAFT_TOKENS));
    o.draft_max = static_cast<int32_t>(*kw.draft_max);
  }
  if (kw.draft_min) {
    if (*kw.draft_min < 0 || *kw.draft_min > INT32_MAX)
      Fail(UAII_ERR_INVALID_ARGUMENT, "draft_min " + std::to_string(*kw.draft_min) + " is negative");
    o.draft_min = static_cast<int32_t>(*kw.draft_min);
  }
  if (kw.draft_p_min) o.draft_p_min = static_cast<float>(*kw.draft_p_min);
  if (kw.draft_rule) {
    if (*kw.draft_rule == "auto") o.draft_rule = UAII_DRAFT_RULE_AUTO;
    else if (*kw.draft_rule == "exact") o.draft_rule = UAII_DRAFT_RULE_EXACT;
    else if (*kw.draft_rule == "rejection") o.draft_rule = UAII_DRAFT_RULE_REJECTION;
    else Fail(UAII_ERR_INVALID_ARGUMENT, "draft_rule \"" + *kw.draft_rule + "\" is not auto, exact or rejection");
  }
  return o;
}

}  // namespace uaii_py
