// Storage figures for `generate` / `chat`: the memory flags (--preset, --ram-gb,
// --kv-window), the `--dry-run` plan report (docs/json/dry_run.schema.json), and the
// storage part of `memory` in --json (docs/storage.md).
#pragma once
#include <string>

#include "absl/status/status.h"
#include "args.h"
#include "uaii/model.h"
#include "uaii/session.h"
#include "storage/plan.h"
#include "util/json_writer.h"

namespace uaii::cli {

// The memory flags every generating command takes (default preset: laptop).
inline constexpr const char* kMemoryFlags[] = {"--preset", "--ram-gb", "--kv-window", "--moe-top-k", "--moe-prefetch"};
// Fills so.preset / ram_budget_bytes / kv_window from the flags; errors name the flag.
absl::Status MemoryOptionsFromArgs(const Args& a, SessionOptions* so);

// Prints the plan `so` would run with for `model`, reading no weights. Exit code.
int PrintDryRun(const std::string& command, const std::string& model_path, const Model& model,
                const SessionOptions& so, bool json);

// The dry run's `expert_cache` (null without expert banks).
void WriteExpertPlan(JsonWriter& w, const storage::StoragePlan& p);

// After a run (not a dry run): fits the cost-model figures the run exercised (cold
// streaming: the streamed compute rate to its compute time per decode step, then the
// disk rate to its decode time; warm streaming: the warm streaming rate; nothing
// streamed: the resident rate) and folds them into the calibration cache
// (storage/calibration.h). `decode_io_wait_seconds_per_token`: the I/O wait of the
// decode steps alone, per step. Never fails the run: returns a note for stderr when
// the cache could not be written, "" otherwise (also when there was nothing to learn).
std::string RecordRunObservation(const std::string& model_path, const Model& model, const SessionOptions& so,
                                 const StorageStats& st, double decode_tokens_per_s,
                                 double decode_io_wait_seconds_per_token);

// The storage keys of --json's `memory` object (after peak_rss_bytes); `expert_cache`
// only with an expert LRU.
void WriteStorageMemory(JsonWriter& w, const StorageStats& s);

}  // namespace uaii::cli
