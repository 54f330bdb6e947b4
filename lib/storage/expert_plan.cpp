#include "storage/expert_plan.h"

#include <algorithm>
#include <map>

namespace uaii::storage {

ExpertNeeds MeasureExperts(const PlanInputs& in) {
  ExpertNeeds n;
  std::map<int, uint64_t> slice_bytes;  // per layer: one expert's three slices
  std::map<int, int64_t> k, k_file;
  for (const PlanTensor& t : in.tensors) {
    if (t.n_expert <= 0) continue;
    n.total_bytes += t.bytes;
    n.n_expert = std::max(n.n_expert, t.n_expert);
    slice_bytes[t.layer] += t.bytes / static_cast<uint64_t>(t.n_expert);
    k[t.layer] = std::max(k[t.layer], t.expert_used);
    k_file[t.layer] = std::max(k_file[t.layer], t.expert_used_file);
  }
  for (const auto& [layer, bytes] : slice_bytes) {
    n.step_bytes = std::max(n.step_bytes, bytes * static_cast<uint64_t>(k[layer]));
    n.bytes_per_token += bytes * static_cast<uint64_t>(k[layer]);
    n.bytes_per_token_file_k += bytes * static_cast<uint64_t>(k_file[layer]);
    n.top_k = std::max(n.top_k, k[layer]);
    n.top_k_file = std::max(n.top_k_file, k_file[layer]);
  }
  return n;
}

void ApplyMoeTopK(PlanInputs* in, int64_t k) {
  for (PlanTensor& t : in->tensors)
    if (t.n_expert > 0) t.expert_used = k > 0 ? std::min(k, t.expert_used_file) : t.expert_used_file;
}

void PlaceExperts(const PlanInputs& in, const ResolvedPreset& preset, const ExpertNeeds& needs, StoragePlan* p) {
  if (needs.total_bytes == 0) return;
  p->expert_bytes = needs.total_bytes;
  p->expert_step_bytes = needs.step_bytes;
  p->expert_bytes_per_token = needs.bytes_per_token;
  p->expert_bytes_per_token_file_k = needs.bytes_per_token_file_k;
  p->moe_top_k = needs.top_k;
  p->moe_top_k_file = needs.top_k_file;
  if (preset.streaming == StreamPolicy::kOff || preset.budget_bytes == 0) {
    // No budget: the banks are read through the mapping like every other weight.
    p->pinned_bytes += needs.total_bytes;
    p->minimum_bytes += needs.total_bytes;
    p->expected_peak_bytes += needs.total_bytes;
    return;
  }
  for (size_t i = 0; i < in.tensors.size(); ++i)
    if (in.tensors[i].n_expert > 0) p->residency[i] = Residency::kExpertLru;
  // A trunk-only plan that streams has the step in its minimum already (PlanStorage
  // reserves it with the KV cache); one that pins everything does not.
  if (!p->streaming) p->minimum_bytes += needs.step_bytes;
  const uint64_t trunk = p->pinned_bytes + static_cast<uint64_t>(p->staging_buffers) * p->staging_bytes +
                         p->kv_bytes + p->activation_bytes;
  const uint64_t left = preset.budget_bytes > trunk ? preset.budget_bytes - trunk : 0;
  uint64_t cap = std::min(left, preset.expert_lru_bytes > 0 ? preset.expert_lru_bytes : left);
  cap = std::min(std::max(cap, needs.step_bytes), needs.total_bytes);
  p->expert_cache_bytes = cap;
  p->expected_peak_bytes = trunk + cap;
}

}  // namespace uaii::storage
