// Session options from Python keywords: one reading for uaii.Session and Model.plan.
// Defaults are the C ABI's (uaii_session_options_init), which are the C++ API's.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common.h"

namespace uaii_py {

struct SessionKwargs {
  std::optional<std::string> preset;  // None: the default (none)
  std::optional<double> ram_gb;
  std::optional<int64_t> kv_window;   // None: the preset's window
  std::optional<int64_t> threads;
  std::string device = "cpu";
  std::optional<int64_t> max_context;
  std::optional<int64_t> moe_top_k;
  bool moe_prefetch = false;
  bool learn_calibration = false;
  // Speculative decoding (docs/speculative.md): the draft model (None: none), or the
  // model's own in-trunk head (draft="auto"), and the knobs (None: the C ABI's defaults).
  std::shared_ptr<ModelHandle> draft_model;
  std::string draft_path;  // a drafter file (a gemma4-assistant GGUF, or a model): "" none
  bool draft_auto = false;
  std::optional<int64_t> draft_max;  // n_draft= is its alias
  std::optional<int64_t> draft_min;
  std::optional<double> draft_p_min;
  std::optional<std::string> draft_rule;  // "auto", "exact", "rejection"
  std::optional<int64_t> device_memory_bytes;  // None: 90% of the device's largest memory heap
};

// The options struct; its `device` points into `kw`, which must outlive it. Raises
// InvalidArgumentError naming a bad value.
uaii_session_options SessionOptionsFrom(const SessionKwargs& kw);

}  // namespace uaii_py
