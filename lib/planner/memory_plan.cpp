#include "planner/memory_plan.h"

#include <algorithm>
#include <map>
#include <set>

#include "ir/validate.h"

namespace uaii::planner {
namespace {

uint64_t F32Bytes(const ir::Shape& s, int64_t T, int64_t R) {
  uint64_t n = 4;
  for (int64_t d : s) n *= static_cast<uint64_t>(d == ir::kDimTokens ? T : d == ir::kDimRows ? R : d);
  return (n + kBufferAlign - 1) / kBufferAlign * kBufferAlign;
}

}  // namespace

absl::StatusOr<MemoryPlan> PlanMemory(const ir::Graph& g, int64_t tokens, int64_t rows) {
  auto order = ir::Validate(g);
  if (!order.ok()) return order.status();
  MemoryPlan plan;
  plan.tokens = tokens;
  plan.rows = rows;
  std::set<std::string> sources(g.inputs.begin(), g.inputs.end());
  for (const auto& t : g.tensors)
    if (t.weight) sources.insert(t.name);
  std::map<std::string, std::string> root;  // reshape outputs -> the buffer they view
  std::map<std::string, size_t> index;      // root tensor -> buffers[]
  const int n_steps = static_cast<int>(order->size());
  for (int step = 0; step < n_steps; ++step) {
    const ir::Op& op = g.ops[(*order)[step]];
    for (const auto& in : op.inputs) {
      if (in.empty() || sources.count(in)) continue;
      auto r = root.count(in) ? root[in] : in;
      plan.buffers[index.at(r)].last = step;
    }
    if (op.type == "reshape" && !sources.count(op.inputs[0])) {
      root[op.outputs[0]] = root.count(op.inputs[0]) ? root[op.inputs[0]] : op.inputs[0];
      continue;
    }
    for (const auto& out : op.outputs) {
      index[out] = plan.buffers.size();
      plan.buffers.push_back({out, F32Bytes(g.FindTensor(out)->shape, tokens, rows), 0, step, step});
    }
    if (op.type == "norm_linear") {
      uint64_t scratch = F32Bytes(g.FindTensor(op.inputs[0])->shape, tokens, rows);
      if (op.Has("act")) scratch += F32Bytes(g.FindTensor(op.outputs[0])->shape, tokens, rows);
      plan.buffers.push_back({op.name + ":scratch", scratch, 0, step, step});
    }
  }
  for (const auto& out : g.outputs) {
    auto r = root.count(out) ? root[out] : out;
    if (index.count(r)) plan.buffers[index[r]].last = n_steps;  // handed to the caller
  }
  // Live bytes per step (lower bound), and the sum without reuse.
  std::vector<uint64_t> live(n_steps + 1, 0);
  for (const auto& b : plan.buffers) {
    plan.no_reuse_bytes += b.bytes;
    for (int s = b.first; s <= b.last; ++s) live[s] += b.bytes;
  }
  plan.peak_live_bytes = *std::max_element(live.begin(), live.end());
  // Greedy placement, largest first (ties: earliest first, for a stable plan).
  std::vector<size_t> by_size(plan.buffers.size());
  for (size_t i = 0; i < by_size.size(); ++i) by_size[i] = i;
  std::stable_sort(by_size.begin(), by_size.end(),
                   [&](size_t a, size_t b) { return plan.buffers[a].bytes > plan.buffers[b].bytes; });
  std::vector<size_t> placed;
  for (size_t i : by_size) {
    BufferSlot& b = plan.buffers[i];
    std::vector<std::pair<uint64_t, uint64_t>> busy;  // [offset, end) of overlapping-in-time buffers
    for (size_t j : placed) {
      const BufferSlot& o = plan.buffers[j];
      if (o.first <= b.last && b.first <= o.last) busy.emplace_back(o.offset, o.offset + o.bytes);
    }
    std::sort(busy.begin(), busy.end());
    uint64_t at = 0;
    for (const auto& [s, e] : busy) {
      if (at + b.bytes <= s) break;
      at = std::max(at, e);
    }
    b.offset = at;
    plan.arena_bytes = std::max(plan.arena_bytes, at + b.bytes);
    placed.push_back(i);
  }
  return plan;
}

}  // namespace uaii::planner
