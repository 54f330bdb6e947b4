#include "planner/pipeline.h"

#include <cstdlib>

#include "ir/validate.h"
#include "planner/fusion.h"
#include "util/str_cat.h"

namespace uaii::planner {

std::string PlanOptions::Key() const {
  return StrCat("fuse=", fuse ? 1 : 0, ";prefill_tokens=", prefill_tokens, ";backend=", backend);
}

PlanOptions DefaultPlanOptions() {
  PlanOptions o;
  if (const char* f = std::getenv("UAII_FUSE"); f && std::string(f) == "0") o.fuse = false;
  return o;
}

const std::vector<Pass>& Passes() {
  static const std::vector<Pass> kPasses = {
      // name                      rewrite               fusion
      {"fuse_norm_linear",         FuseNormLinear,       true},
      {"fuse_gated_activation",    FuseGatedActivation,  true},
  };
  return kPasses;
}

absl::StatusOr<Plan> RunPasses(const ir::Graph& g, const PlanOptions& options) {
  if (auto v = ir::Validate(g); !v.ok()) return v.status();
  Plan plan;
  plan.graph = g;
  for (const Pass& p : Passes()) {
    if (p.fusion && !options.fuse) continue;
    int count = 0;
    auto next = p.run(std::move(plan.graph), &count);
    if (!next.ok()) return next.status();
    if (auto v = ir::Validate(*next); !v.ok())
      return absl::InternalError(StrCat("planner pass ", std::string(p.name), " broke the graph: ",
                                        std::string(v.status().message())));
    plan.graph = std::move(*next);
    plan.passes.push_back(StrCat(std::string(p.name), ": ", count, " rewrites"));
  }
  auto decode = PlanMemory(plan.graph, 1, 1);
  if (!decode.ok()) return decode.status();
  auto prefill = PlanMemory(plan.graph, options.prefill_tokens, 1);
  if (!prefill.ok()) return prefill.status();
  plan.decode = std::move(*decode);
  plan.prefill = std::move(*prefill);
  return plan;
}

}  // namespace uaii::planner
