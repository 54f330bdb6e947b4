#include "planner/fusion.h"

#include <algorithm>
#include <map>
#include <set>

#include "util/str_cat.h"

namespace uaii::planner {
namespace {

constexpr size_t kMaxFusedWeights = 8;  // registry: norm_linear has at most 8 outputs

struct Use {
  size_t op;
  size_t input;
};

std::map<std::string, std::vector<Use>> Consumers(const ir::Graph& g) {
  std::map<std::string, std::vector<Use>> users;
  for (size_t i = 0; i < g.ops.size(); ++i)
    for (size_t k = 0; k < g.ops[i].inputs.size(); ++k)
      if (!g.ops[i].inputs[k].empty()) users[g.ops[i].inputs[k]].push_back({i, k});
  return users;
}

bool IsOutput(const ir::Graph& g, const std::string& t) {
  return std::find(g.outputs.begin(), g.outputs.end(), t) != g.outputs.end();
}

// Drops the ops at `dead` and the tensors in `gone`.
void Compact(ir::Graph& g, const std::set<size_t>& dead, const std::set<std::string>& gone) {
  std::vector<ir::Op> ops;
  for (size_t i = 0; i < g.ops.size(); ++i)
    if (!dead.count(i)) ops.push_back(std::move(g.ops[i]));
  g.ops = std::move(ops);
  std::erase_if(g.tensors, [&](const ir::Tensor& t) { return gone.count(t.name) > 0; });
}

}  // namespace

absl::StatusOr<ir::Graph> FuseNormLinear(ir::Graph g, int* count) {
  *count = 0;
  auto users = Consumers(g);
  std::set<size_t> dead;
  std::set<std::string> gone;
  std::vector<ir::Op> added;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const ir::Op& norm = g.ops[i];
    if (norm.type != "rms_norm" || norm.inputs.size() < 2 || norm.inputs[1].empty()) continue;
    const std::string& h = norm.outputs[0];
    if (IsOutput(g, h)) continue;
    const auto& us = users[h];
    if (us.empty() || us.size() > kMaxFusedWeights) continue;
    bool all_matmul = true;
    for (const Use& u : us) {
      const ir::Op& m = g.ops[u.op];
      all_matmul &= m.type == "matmul" && u.input == 0 && m.inputs[1] != h && !dead.count(u.op);
    }
    if (!all_matmul) continue;
    ir::Op f;
    f.name = StrCat(norm.name, "+linear");
    f.type = "norm_linear";
    f.inputs = {norm.inputs[0], norm.inputs[1]};
    f.attrs["eps"] = norm.attrs.at("eps");
    for (const Use& u : us) {
      f.inputs.push_back(g.ops[u.op].inputs[1]);
      f.outputs.push_back(g.ops[u.op].outputs[0]);
      dead.insert(u.op);
    }
    dead.insert(i);
    gone.insert(h);
    added.push_back(std::move(f));
    ++*count;
  }
  Compact(g, dead, gone);
  for (auto& op : added) g.ops.push_back(std::move(op));
  return g;
}

absl::StatusOr<ir::Graph> FuseGatedActivation(ir::Graph g, int* count) {
  *count = 0;
  auto users = Consumers(g);
  std::set<size_t> dead;
  std::set<std::string> gone;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    ir::Op& f = g.ops[i];
    if (f.type != "norm_linear" || f.outputs.size() != 2 || f.Has("act")) continue;
    const std::string a = f.outputs[0], b = f.outputs[1];
    if (IsOutput(g, a) || IsOutput(g, b) || users[a].size() != 1 || users[b].size() != 1) continue;
    const size_t ai = users[a][0].op;
    if (users[b][0].op != ai || dead.count(ai)) continue;
    const ir::Op& act = g.ops[ai];
    if (act.type != "swiglu" && act.type != "geglu") continue;
    if (act.inputs[0] == b) std::swap(f.inputs[2], f.inputs[3]);  // weight order: gate, up
    f.attrs["act"] = act.type;
    f.outputs = {act.outputs[0]};
    f.name = StrCat(f.name, "+", act.type);
    dead.insert(ai);
    gone.insert(a);
    gone.insert(b);
    ++*count;
  }
  Compact(g, dead, gone);
  return g;
}

}  // namespace uaii::planner
