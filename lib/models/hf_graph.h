// The forward graph of a Hugging Face directory (hf::HfModel), built from the
// loader's architecture flags rather than from GGUF metadata. Graph weights carry
// GGUF-style names ("blk.0.attn_q.weight") so graphs of both sources read alike; each
// names an HfWeightView: which HF tensor it comes from and how its bytes become the
// graph tensor (zero-copy row slices of fused q|k|v and gate|up projections, GPT-2
// Conv1D transposes, f32 widening of element-wise weights, Gemma's 1 + w norms).
//
// Family math on HF weights (what differs from the GGUF builders):
//   * RoPE is rotate_half ("neox": dim i pairs with i + rotary_dims/2) on the first
//     rotary_dims of each head (Phi-3 partial_rotary_factor); HF q/k are not permuted.
//   * Gemma RMSNorm is x * (1 + w): the view adds 1 to the f32 weight.
//   * rope_scaling: linear -> freq_scale, llama3 / longrope -> per-frequency factors
//     (a synthetic "rope_freqs.weight"), longrope's attention_factor multiplies cos
//     and sin (rope attn_factor), so only the rotated dims. Others fail closed.
//   * GPT-2: token + learned position embeddings, LayerNorm, Conv1D weights [in, out]
//     transposed to [out, in], biases, tanh GELU MLP.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "loaders/hf_model.h"
#include "models/spec.h"

namespace uaii::models {

struct HfWeightView {
  const hf::HfTensor* src = nullptr;  // null for synthetic tensors (`values`)
  bool transpose = false;             // 2-D source [a, b] read as [b, a] (GPT-2 Conv1D)
  int64_t row_begin = 0;              // rows [row_begin, row_begin + rows) of the (transposed) source
  int64_t rows = -1;                  // -1: all rows
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

// Builds the graph (inputs "tokens", "positions"; output "logits"). `m` must outlive
// the result (views point into its tensor table). Fails closed, naming the config key
// or tensor, for what the runtime does not implement (activation, rope scaling kind,
// MoE, fused grouped-head q/k/v).
absl::StatusOr<HfGraph> BuildHfGraph(const hf::HfModel& m);

}  // namespace uaii::models
