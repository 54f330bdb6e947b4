// The plan: what the runtime runs a graph with. The planner (pipeline.h) fills the
// graph (validated, fused) and the memory plans; the storage plan has its place here
// but is decided by the storage module (lib/storage/plan.h), which reads the memory
// plan's prefill figure as its activation budget. Plans are cached on disk
// (plan_cache.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "planner/memory_plan.h"

namespace uaii::planner {

// Bump when a pass changes what it produces: cached plans of older versions miss.
inline constexpr int kPlannerVersion = 2;  // 2: memory-plan buffers padded to 64 bytes

struct PlanOptions {
  bool fuse = true;
  int64_t prefill_tokens = 512;  // T of the prefill memory plan (the session's default chunk)
  std::string backend = "cpu";
  // Canonical text of every option, part of the cache key.
  std::string Key() const;
};

// What Model::Load plans with: the defaults, with fusion off when $UAII_FUSE is "0"
// (to measure or bisect; results are bit-identical either way).
PlanOptions DefaultPlanOptions();

struct Plan {
  ir::Graph graph;                  // what the executor runs
  std::vector<std::string> passes;  // "fuse_norm_linear: 5 rewrites", ...
  MemoryPlan decode;                // T = 1, R = 1
  MemoryPlan prefill;               // T = prefill_tokens, R = 1
  // The storage plan, serialized by the storage module; empty = not decided yet (all
  // weights stay resident in their mappings). The planner only carries it.
  std::string storage;
  bool from_cache = false;          // loaded from the plan cache: no pass ran
  std::string cache_key;
};

}  // namespace uaii::planner
