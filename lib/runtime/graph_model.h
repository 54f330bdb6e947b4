// Loading a model from a graph file (`.uaii` or `.uaii.json`, written by `uaii
// compile` or by hand; docs/ir.md, "Graph files"). The graph carries what generation
// needs besides weights:
//   weights        TensorRef.file (and its view's parts'): absolute, or relative to the
//                  graph file's directory; GGUF tensors, or views of safetensors tensors
//                  (runtime/view_weights.h)
//   tokenizer      metadata "tokenizer.gguf": the GGUF file whose vocabulary, special
//                  tokens and end-of-generation ids the model uses, or "tokenizer.dir":
//                  a Hugging Face directory (tokenizer.json / tokenizer.model +
//                  tokenizer_config.json, as Model::Load reads it); same path rules
//   KV layer shapes come from the attention ops' k / v shapes (backends/cpu/program.h); context
//                  length from metadata "context_length" (optional: 0 = unbounded)
// The graph is planned (lib/planner, through the plan cache) like a built one.
#pragma once
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "uaii/model.h"

namespace uaii::runtime {

absl::StatusOr<std::shared_ptr<const Model>> LoadGraphModel(const std::string& path);

}  // namespace uaii::runtime
