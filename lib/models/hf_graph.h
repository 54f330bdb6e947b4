// A Hugging Face directory (hf::HfModel) read into the one model description
// (ModelSpec, GGUF's vocabulary and tensor names) and built by its family's builder,
// the same one a GGUF file of that architecture uses (hf_graph.cpp says how HF
// checkpoints differ and how the description absorbs it). Each graph weight names an
// HfWeightView: which HF tensor it comes from and how its bytes become the graph tensor
// (zero-copy row slices, GPT-2 Conv1D transposes, f32 widening of element-wise
// weights, Gemma's 1 + w norms, stacked expert banks, synthetic RoPE factors).
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

struct HfWeightView {
  const hf::HfTensor* src = nullptr;  // null for synthetic tensors (`values`)
  bool transpose = false;             // 2-D source [a, b] read as [b, a] (GPT-2 Conv1D)
  bool to_f32 = false;                // widen to f32 (element-wise weights, I8/U8 sources)
  bool plus_one = false;              // f32 value + 1 (Gemma RMSNorm weights)
  std::vector<float> values;          // synthetic f32 data (rope frequency factors)
  // MoE bank: per-expert [rows, cols] tensors stacked into [n_expert, rows, cols]
  // (runtime/moe.h reads expert e as the e-th equal byte slice); `src` is unused.
  std::vector<const hf::HfTensor*> experts;
  TensorType dtype = TensorType::F32; // the graph tensor's type
  std::vector<int64_t> shape;         // the graph tensor's shape (outermost first)
};

struct HfGraph {
  ModelSpec spec;  // GGUF-style hyper-parameters and tensor table (graph names)
  ir::Graph graph;
  std::map<std::string, HfWeightView> views;  // graph weight name -> view
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

// Builds the graph (inputs "tokens", "positions"; output "logits"). `m` must outlive
// the result (views point into its tensor table). An unlisted model_type fails naming
// the supported ones (families.h hf_model_types). Fails closed, naming the config key
// or tensor, for what the runtime does not implement (activation, rope scaling kind,
// MoE, fused grouped-head q/k/v).
absl::StatusOr<HfGraph> BuildHfGraph(const hf::HfModel& m);

}  // namespace uaii::models
