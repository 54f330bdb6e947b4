// The planner as a pass pipeline: validate, then each pass (a graph -> graph rewrite
// that reports how many rewrites it made), validating after each, then the memory
// plans. A pass that breaks the graph fails the plan with the pass named.
#pragma once
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "planner/plan.h"

namespace uaii::planner {

struct Pass {
  std::string_view name;
  absl::StatusOr<ir::Graph> (*run)(ir::Graph g, int* count);
  bool fusion;  // skipped when PlanOptions::fuse is false
};

const std::vector<Pass>& Passes();

absl::StatusOr<Plan> RunPasses(const ir::Graph& g, const PlanOptions& options);

}  // namespace uaii::planner
