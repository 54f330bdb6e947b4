// The expert LRU in the storage plan (docs/moe.md, "Experts under a memory budget").
//
// Mixture-of-experts banks (inputs 2..4 of `moe_ffn`: packed [n_expert, rows, cols]
// ffn_{up,gate,down}_exps) are neither pinned nor streamed through the staging
// sequence: after routing, only the selected experts' `#e=N` slices are read, into an
// LRU of expert slices (runtime/moe_cache.h). The plan gives that LRU
//
//   capacity = clamp(min(preset expert_lru_bytes, budget - pinned trunk - staging - KV
//                        - activations), step, all experts)
//
// where `step` (one layer's top-k experts, 3 slices each) is part of the plan's
// minimum. The trunk is planned first with `step` reserved, so the LRU never shrinks
// the trunk: it only takes what the trunk leaves.
#pragma once
#include <cstdint>

#include "storage/plan.h"
#include "storage/presets.h"

namespace uaii::storage {

struct ExpertNeeds {
  uint64_t total_bytes = 0;          // every expert bank
  uint64_t step_bytes = 0;           // the largest layer's top-k experts (3 slices each)
  uint64_t bytes_per_token = 0;      // every layer's top-k experts: a decoded token's reads when all miss
  uint64_t bytes_per_token_file_k = 0;  // the same at the file's top-k (differs under --moe-top-k)
  int64_t top_k = 0;                 // experts per token as run
  int64_t top_k_file = 0;            // the file's expert_used_count
  int64_t n_expert = 0;
};

// What the expert banks of `in` need (all zero without experts).
ExpertNeeds MeasureExperts(const PlanInputs& in);

// Fewer experts per token than the file says (an explicit approximation, --moe-top-k):
// sets expert_used = min(k, file's) on every expert bank. k <= 0: the file's.
void ApplyMoeTopK(PlanInputs* in, int64_t k);

// Marks the expert banks kExpertLru and sizes the LRU on a plan made for the trunk
// (the other weights) with `needs.step_bytes` reserved. Without a budget the banks are
// read through the mapping (kPinned, counted in pinned_bytes).
void PlaceExperts(const PlanInputs& in, const ResolvedPreset& preset, const ExpertNeeds& needs, StoragePlan* p);

}  // namespace uaii::storage
