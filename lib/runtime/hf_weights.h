// Binds the weights of a Hugging Face graph (models/hf_graph.h) to bytes: each graph
// weight is an HfWeightView of a safetensors tensor. Plain views point into the memory
// mapping, nothing copied; a transposed view
// (GPT-2 Conv1D) is copied once in its own dtype; element-wise weights (norms, biases)
// and I8/U8 sources are widened to f32 (Gemma norms as 1 + w); synthetic views (rope
// frequency factors) own their values. The HfModel must outlive the WeightSet.
#pragma once
#include <memory>

#include "absl/status/statusor.h"
#include "loaders/hf_model.h"
#include "models/hf_graph.h"
#include "runtime/weights.h"

namespace uaii::runtime {

absl::StatusOr<std::unique_ptr<WeightSet>> BindHfWeights(const hf::HfModel& m, const models::HfGraph& g);

}  // namespace uaii::runtime
