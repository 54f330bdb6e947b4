// What a Session will be, decided before anything is allocated or read: the resolved
// memory preset, the KV cache shape, and the storage plan (storage/plan.h). Used by
// Session::Create and by `uaii generate --dry-run`, so the plan shown is the plan run.
#pragma once
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "formats/tensor_type.h"
#include "storage/plan.h"
#include "storage/presets.h"
#include "uaii/model.h"
#include "uaii/session.h"

namespace uaii::runtime {

struct SessionPlan {
  storage::ResolvedPreset preset;
  storage::PlanInputs inputs;
  std::vector<TensorType> tensor_types;  // per inputs.tensors entry (the cost model's compute term)
  storage::StoragePlan storage;
  int64_t max_context = 0;
  int64_t kv_window = 0;     // 0: unbounded
  int64_t kv_sinks = 0;
  int64_t kv_cells = 0;
  int64_t prefill_chunk = 0;
  int threads = 0;
  int64_t moe_top_k = 0;     // SessionOptions::moe_top_k (0: the file's)
  bool moe_prefetch = false; // SessionOptions::moe_prefetch
  bool use_storage = false;  // false: weights read through the mapping (no budget)
};

// Fails with ResourceExhausted (naming the minimum and the advice) when the budget
// cannot hold the model's minimum, InvalidArgument for an unknown preset.
absl::StatusOr<SessionPlan> PlanSession(const Model& model, const SessionOptions& options);

}  // namespace uaii::runtime
