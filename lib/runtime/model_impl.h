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

// The library's access to a Model's internals (Model::Impl is private to the public
// header): the loaders build one, the session and the planner read it.
struct ModelInternals {
  using Impl = Model::Impl;
  static const Impl& Of(const Model& m) { return *m.impl_; }
  static std::shared_ptr<const Model> Make(std::unique_ptr<Impl> impl) {
    return std::shared_ptr<const Model>(new Model(std::move(impl)));
  }
};

namespace runtime {
// Model::Load's directory branch (hf_load.cpp).
absl::StatusOr<std::shared_ptr<const Model>> LoadHfDirectory(const std::string& dir);
}  // namespace runtime

}  // namespace uaii
