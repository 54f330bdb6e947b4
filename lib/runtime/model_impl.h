// uaii::Model internals shared by model.cpp and session.cpp.
#pragma once
#include <memory>

#include "formats/gguf_file.h"
#include "ir/graph.h"
#include "loaders/hf_model.h"
#include "models/spec.h"
#include "backends/backend.h"
#include "runtime/weights.h"
#include "uaii/model.h"

namespace uaii {

struct Model::Impl {
  ModelInfo info;
  std::shared_ptr<const gguf::File> file;
  models::ModelSpec spec;
  ir::Graph graph;
  std::unique_ptr<runtime::WeightSet> weights;
  std::unique_ptr<backends::Program> program;  // the CPU backend's; sessions on another device compile their own
  std::unique_ptr<Tokenizer> tokenizer;
  std::shared_ptr<const hf::HfModel> hf;  // Hugging Face directory: keeps its files mapped
};

namespace runtime {
// Model::Load's directory branch (hf_load.cpp).
absl::StatusOr<std::shared_ptr<const Model>> LoadHfDirectory(const std::string& dir);
}  // namespace runtime

}  // namespace uaii
