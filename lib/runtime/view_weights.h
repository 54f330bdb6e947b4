// Binds every weight of a graph to bytes: GGUF tensors (TensorRefs without a view)
// through WeightSet::Bind, declared views (ir::TensorView, docs/ir.md "Views") here.
// A view's stored tensor is read from its safetensors file (memory-mapped; the
// header's dtype, shape, offset and size must agree with the reference):
//   * zero-copy when the view only slices rows of an F32 / F16 / BF16 tensor: the
//     BoundWeight points into the mapping (file and offset set, so the storage engine
//     may stream it);
//   * a copy owned by the WeightSet for transpose, widen, add-one, concat (parts back
//     to back) and synthetic values.
// One binder for the Hugging Face load path (hf_load.cpp) and graph files
// (graph_model.cpp), so both bind identical bytes.
#pragma once
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "formats/gguf_file.h"
#include "ir/graph.h"
#include "loaders/safetensors_file.h"
#include "runtime/weights.h"

namespace uaii::runtime {

// Safetensors files already open, by path (others are opened on first use).
using SafetensorsFiles = std::map<std::string, std::shared_ptr<const safetensors::File>>;

absl::StatusOr<std::unique_ptr<WeightSet>> BindGraphWeights(
    const ir::Graph& g, std::map<std::string, std::shared_ptr<const gguf::File>> gguf_files = {},
    SafetensorsFiles safetensors_files = {});

}  // namespace uaii::runtime
