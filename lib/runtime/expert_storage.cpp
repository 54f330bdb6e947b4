#include "runtime/expert_storage.h"

#include <map>
#include <string>

namespace uaii::runtime {

void MarkExpertBanks(const ir::Graph& g, const WeightSet& weights, storage::PlanInputs* in) {
  std::map<std::string, int64_t> k;  // bank -> n_expert_used
  for (const auto& op : g.ops) {
    if (op.type != "moe_ffn") continue;
    for (size_t i = 2; i <= 4 && i < op.inputs.size(); ++i)
      if (!op.inputs[i].empty()) k[op.inputs[i]] = op.Int("n_expert_used", 0);
  }
  for (auto& t : in->tensors) {
    auto it = k.find(t.name);
    if (it == k.end()) continue;
    const BoundWeight* w = weights.Find(t.name);
    if (!w || w->file.empty() || w->shape.size() != 3 || w->shape[0] <= 0 || it->second <= 0) continue;
    t.n_expert = w->shape[0];
    t.expert_used = t.expert_used_file = it->second;
    t.matmul = t.embed = false;
    t.role = storage::RoleOf(t.name, false, &t.layer);
  }
}

}  // namespace uaii::runtime
