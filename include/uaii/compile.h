// uaii::CompileModel: a model's forward graph as a graph file (docs/ir.md, "Graph
// files"), and the planner's report on it. `uaii compile` is this call.
//
// The model is a GGUF file, a Hugging Face directory or a graph file (which converts
// between the binary and JSON forms). Weights stay `file#tensor` references into the
// GGUF or the safetensors files (the latter with their declared views: transpose,
// widening, 1 + w, stacked experts, synthetic values), relative to the output's
// directory (or absolute); metadata names the tokenizer source ("tokenizer.gguf" or
// "tokenizer.dir") and the hyper-parameters the runtime reads. The plan: the passes and the activation
// memory plan (peak live bytes, arena bytes, bytes without reuse) for decode (T = 1)
// and prefill (T = prefill_tokens), fused and unfused.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace uaii {

// True for the graph file names: NAME.uaii (FlatBuffers) or NAME.uaii.json.
bool IsGraphFilePath(std::string_view path);

struct CompileOptions {
  std::string output;           // a graph file path (IsGraphFilePath); empty: write nothing
  bool absolute_paths = false;  // weight and tokenizer paths absolute, not relative to the output
  bool write_fused = false;     // write the planned (fused) graph instead of the built one
  bool fuse = true;             // plan with the fusion passes
  int64_t prefill_tokens = 512; // T of the prefill memory plan (> 0)
  bool report_plan = false;     // also plan unfused and fill CompileResult's plan report
};

// One step's activation memory plan, fused and unfused.
struct StepMemory {
  int64_t tokens = 0;
  uint64_t peak_activation_bytes = 0, arena_bytes = 0, no_reuse_bytes = 0;
  uint64_t unfused_peak_activation_bytes = 0, unfused_arena_bytes = 0;
};

struct CompileResult {
  std::vector<std::string> passes;  // "fuse_norm_linear: 5 rewrites", ...
  int64_t ops = 0, ops_unfused = 0;
  StepMemory decode, prefill;
  std::string storage_plan;         // "" while undecided (weights resident)
  bool from_cache = false;          // the plan came from the plan cache
  double plan_seconds = 0;
  // With report_plan: the report `uaii compile --plan` prints, as JSON and as text.
  std::string plan_json, plan_text;
  // With an output: what was written.
  int64_t written_tensors = 0, written_ops = 0;
};

// `model_path`: a GGUF file, a Hugging Face directory or a graph file. Fails naming
// the file and the cause.
absl::StatusOr<CompileResult> CompileModel(const std::string& model_path, const CompileOptions& options);

}  // namespace uaii
