// The one model assembly every source goes through (GGUF file, Hugging Face directory,
// .uaii graph file): plan (fusions and memory plan, or the cached plan) -> bind the
// planned graph's weights -> the CPU backend's program -> the tokenizer, then the model's summary.
// A source only says how to do what differs: where its graph comes from, its plan
// cache identity, how its weights bind and where its vocabulary lives.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/model_impl.h"

namespace uaii::runtime {

struct ModelSource {
  std::string path;        // what the user opened (errors and ModelInfo name it)
  ir::Graph graph;         // the unplanned forward graph
  std::string plan_identity;  // the plan cache's model identity (planner/plan_cache.h)
  // Weights of the planned graph (paths already as the source wants them).
  std::function<absl::StatusOr<std::unique_ptr<WeightSet>>(ir::Graph& planned)> bind;
  std::function<absl::StatusOr<std::unique_ptr<Tokenizer>>()> tokenizer;
  std::string vocabulary_origin;  // named when the vocabulary has no end-of-generation token
};

// A GGUF file read into its model description and unplanned graph: the first half of
// Model::Load, shared with `uaii compile` (CompileModel) so both plan the same graph
// under the same plan cache identity.
struct GgufModel {
  std::shared_ptr<const gguf::File> file;
  models::ModelSpec spec;
  ir::Graph graph;
  std::string plan_identity;  // planner::GgufContentHash
  std::string name;           // general.name, "" when absent
};
absl::StatusOr<GgufModel> ReadGgufModel(const std::string& path);

// A Hugging Face directory read into its model description and unplanned graph (the
// weights' TensorRefs carry their views): the first half of Model::Load for a
// directory, shared with `uaii compile` like GgufModel.
struct HfDirectoryModel {
  std::shared_ptr<const hf::HfModel> model;  // keeps the safetensors files mapped
  models::ModelSpec spec;
  ir::Graph graph;
  std::string plan_identity;  // config.json and the tensor table, hashed
};
absl::StatusOr<HfDirectoryModel> ReadHfDirectory(const std::string& dir);

// Runs the assembly into `impl` (which already holds the source's spec and whatever
// must stay alive: the GGUF file, the HF model) and fills impl->info from the spec.
absl::StatusOr<std::shared_ptr<const Model>> Assemble(ModelSource source, std::unique_ptr<ModelInternals::Impl> impl);

}  // namespace uaii::runtime
