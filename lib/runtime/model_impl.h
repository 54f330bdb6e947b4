// uaii::Model internals shared by model.cpp and session.cpp.
#pragma once
#include <memory>

#include "formats/gguf_file.h"
#include "ir/graph.h"
#include "models/spec.h"
#include "runtime/executor.h"
#include "runtime/weights.h"
#include "uaii/model.h"

namespace uaii {

struct Model::Impl {
  ModelInfo info;
  std::shared_ptr<const gguf::File> file;
  models::ModelSpec spec;
  ir::Graph graph;
  std::unique_ptr<runtime::WeightSet> weights;
  std::unique_ptr<runtime::Executor> executor;
  std::unique_ptr<Tokenizer> tokenizer;
};

}  // namespace uaii
