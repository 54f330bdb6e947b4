// Storage figures for `generate` / `chat`: the memory flags (--preset, --ram-gb,
// --kv-window), the `--dry-run` plan report (docs/json/dry_run.schema.json), and the
// storage part of `memory` in --json (docs/storage.md).
#pragma once
#include <string>

#include "absl/status/status.h"
#include "args.h"
#include "uaii/calibration.h"
#include "uaii/json_writer.h"
#include "uaii/model.h"
#include "uaii/session.h"

namespace uaii::cli {

// The memory flags every generating command takes (default preset: laptop).
inline constexpr const char* kMemoryFlags[] = {"--preset", "--ram-gb", "--kv-window", "--moe-top-k", "--moe-prefetch"};
// Fills so.preset / ram_budget_bytes / kv_window / moe_top_k / moe_prefetch from the
// flags; errors name the flag.
absl::Status MemoryOptionsFromArgs(const Args& a, SessionOptions* so);

// Prints the plan `so` would run with for `model` (PlanDryRun, uaii/plan.h), reading
// no weights. Exit code.
int PrintDryRun(const std::string& command, const Model& model, const SessionOptions& so, bool json);

// After a run (not a dry run): what the run teaches the cost model, folded into the
// calibration cache in CacheDir() (uaii/calibration.h). Never fails the run:
// returns a note for stderr when the cache could not be written, "" otherwise.
std::string RecordRunObservation(const std::string& model_path, const Model& model, const SessionOptions& so,
                                 const StorageStats& st, const DecodeTimings& decode,
                                 const std::string& device);

// The storage keys of --json's `memory` object (after peak_rss_bytes); `expert_cache`
// only with an expert LRU.
void WriteStorageMemory(JsonWriter& w, const StorageStats& s);

}  // namespace uaii::cli
