// uaii::PlanDryRun: the memory plan a session would run with for a model and
// SessionOptions — what stays resident, what streams, the KV cache, the expected peak —
// and the decode speed the storage cost model predicts from the calibration cache
// ($UAII_HOME/calibration.json, measured on first use), reading no weights.
// `uaii generate --dry-run` prints it; the C ABI's uaii_model_plan_json returns `json`.
#pragma once
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "uaii/model.h"
#include "uaii/session.h"

namespace uaii {

// The plan's headline figures (the whole plan is in DryRun::json).
struct MemoryPlan {
  Preset preset = Preset::kNone;
  uint64_t budget_bytes = 0;          // 0: unlimited
  bool streaming = false;             // some weights stay on disk and stream per token
  int threads = 0;
  uint64_t weights_bytes = 0;
  uint64_t pinned_bytes = 0;          // weights held in memory
  uint64_t streamed_bytes = 0;        // weights left on disk
  uint64_t streamed_bytes_per_token = 0;
  int staging_buffers = 0;
  uint64_t staging_bytes_each = 0;
  uint64_t kv_bytes = 0;
  int64_t kv_window = 0;              // 0: unbounded
  int64_t kv_sinks = 0;
  int64_t max_context = 0;
  uint64_t activation_bytes = 0;
  uint64_t expert_cache_bytes = 0;    // the expert LRU of a MoE model (0: none)
  uint64_t minimum_bytes = 0;         // the smallest budget this plan runs in
  uint64_t expected_peak_bytes = 0;   // plus the process's fixed overhead
  bool calibrated = false;            // the predictions below exist
  double decode_tokens_per_s_cold = 0;
  double decode_tokens_per_s_warm = 0;
};

struct DryRun {
  MemoryPlan plan;
  std::string json;  // docs/json/dry_run.schema.json
  std::string text;  // the report `uaii generate --dry-run` prints
  std::string note;  // about the calibration (for stderr), "" when there is none
};

// Fails (with the session's own error) when `options` cannot run `model`: an unknown
// device, a budget below the minimum.
absl::StatusOr<DryRun> PlanDryRun(const Model& model, const SessionOptions& options);

}  // namespace uaii
