// The disk plan cache: a second load of the same model with the same options and
// backend reads its plan instead of running the passes.
//
// Key = SHA-256 of: planner version, the model's content hash (GGUF: header +
// metadata + tensor table, content_hash.h; a graph file: its bytes), the hash of the
// graph the builder produced (so a changed builder never meets a stale plan), the
// options (PlanOptions::Key, which names the backend). An entry is
// `<dir>/<key>.uaii`: the planned graph with the plan's figures as `plan.*`
// metadata, written atomically. A missing, unreadable or invalid entry is a miss.
//
// Directory: $UAII_PLAN_CACHE when set ("off" or "0" turns the cache off), else
// `<cache>/plans` with <cache> = $UAII_HOME, else ~/.cache/uaii.
#pragma once
#include <string>

#include "absl/status/statusor.h"
#include "planner/plan.h"

namespace uaii::planner {

std::string DefaultPlanCacheDir();  // "" when turned off

std::string PlanKey(const std::string& content_hash, const ir::Graph& built, const PlanOptions& options);

// Plans `built` through the cache at `dir` ("" = no cache). On a hit the plan has
// from_cache = true and memory plans with their figures only (no buffer list).
absl::StatusOr<Plan> PlanWithCache(const ir::Graph& built, const std::string& content_hash,
                                   const PlanOptions& options, const std::string& dir);

}  // namespace uaii::planner
