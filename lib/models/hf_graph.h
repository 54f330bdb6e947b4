// A Hugging Face directory (hf::HfModel) read into the one model description
// (ModelSpec, GGUF's vocabulary and tensor names) and built by its family's builder,
// the same one a GGUF file of that architecture uses (hf_graph.cpp says how HF
// checkpoints differ and how the description absorbs it). Each graph weight's
// TensorRef declares its view of the safetensors tensors (ir::TensorView: which HF
// tensor, as stored, and how its bytes become the graph tensor: row slices, GPT-2
// Conv1D transposes, f32 widening of element-wise weights, Gemma's 1 + w norms,
// stacked expert banks, synthetic RoPE factors), so the graph alone says how to bind
// it (runtime/view_weights.h) and `uaii compile` can write it as a graph file.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "loaders/hf_model.h"
#include "models/families.h"
#include "models/spec.h"

namespace uaii::models {

struct HfGraph {
  ModelSpec spec;  // GGUF-style hyper-parameters and tensor table (graph names)
  ir::Graph graph; // its weights' TensorRefs carry the views
  std::map<std::string, ir::TensorRef> refs;  // graph weight name -> the declared view
};

// config.json read as its family reads it, without the weights (what `pull --dry-run`
// and `inspect` report): the family (null when model_type is not in the table), its
// reading and the per-layer sliding flags (empty without a sliding window).
struct HfFamilyReading {
  const Family* family = nullptr;
  HfReading reading;
  std::vector<bool> sliding_layers;
};
absl::StatusOr<HfFamilyReading> ReadHfFamily(const hf::HfConfig& c);

// Builds the graph (inputs "tokens", "positions"; output "logits"); the views name
// the safetensors files by absolute path. An unlisted model_type fails naming
// the supported ones (families.h hf_model_types). Fails closed, naming the config key
// or tensor, for what the runtime does not implement (activation, rope scaling kind,
// MoE, fused grouped-head q/k/v).
absl::StatusOr<HfGraph> BuildHfGraph(const hf::HfModel& m);

}  // namespace uaii::models
