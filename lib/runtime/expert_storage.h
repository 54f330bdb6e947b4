// Expert banks in the storage plan (storage/expert_plan.h): which graph weights are
// `moe_ffn` expert banks, and the session's expert LRU (runtime/moe_cache.h).
#pragma once
#include "ir/graph.h"
#include "runtime/weights.h"
#include "storage/plan.h"

namespace uaii::runtime {

// Marks every file-backed expert bank (inputs 2..4 of a moe_ffn op, 3-D) in `in`:
// n_expert = its first dimension, expert_used(_file) = the op's n_expert_used, layer
// from the name. Such tensors are neither matmul nor embedding weights for the plan.
void MarkExpertBanks(const ir::Graph& g, const WeightSet& weights, storage::PlanInputs* in);

}  // namespace uaii::runtime
