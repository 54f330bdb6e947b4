// The family table: which architectures (GGUF `general.architecture`) uaii builds,
// and the builder for each. Adding a family = one row here + one builder file.
#pragma once
#include <string_view>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "models/spec.h"

namespace uaii::models {

using BuildFn = absl::StatusOr<ir::Graph> (*)(const ModelSpec&);

struct Family {
  std::string_view arch;     // GGUF general.architecture
  BuildFn build;
  std::string_view summary;  // what the family adds over the plain decoder
  // Hugging Face config.json model_types read into this family (space-separated; ""
  // for none), and the hidden_act its graph applies ("silu" or "gelu_tanh").
  std::string_view hf_model_types = "";
  std::string_view hf_activation = "silu";
};

const Family* FindFamily(std::string_view arch);
// The family a Hugging Face model_type is built as, or null.
const Family* FindHfFamily(std::string_view model_type);
std::string SupportedHfModelTypes();

// Builds the forward graph for `spec`. Inputs: "tokens" I32 [T], "positions" I32 [T];
// output: "logits" F32 [R, n_vocab]. Unsupported architectures name the supported ones.
absl::StatusOr<ir::Graph> BuildGraph(const ModelSpec& spec);

// Builders (one file each).
absl::StatusOr<ir::Graph> BuildLlama(const ModelSpec& spec);
absl::StatusOr<ir::Graph> BuildGemma3(const ModelSpec& spec);
absl::StatusOr<ir::Graph> BuildQwen2(const ModelSpec& spec);      // qwen.cpp
absl::StatusOr<ir::Graph> BuildQwen3(const ModelSpec& spec);      // qwen.cpp
absl::StatusOr<ir::Graph> BuildGemma(const ModelSpec& spec);      // gemma.cpp
absl::StatusOr<ir::Graph> BuildGemma2(const ModelSpec& spec);     // gemma.cpp
absl::StatusOr<ir::Graph> BuildPhi3(const ModelSpec& spec);       // phi3.cpp
absl::StatusOr<ir::Graph> BuildGpt2(const ModelSpec& spec);       // gpt2.cpp
absl::StatusOr<ir::Graph> BuildSmolLM3(const ModelSpec& spec);    // llama_like.cpp
absl::StatusOr<ir::Graph> BuildGranite(const ModelSpec& spec);    // llama_like.cpp
absl::StatusOr<ir::Graph> BuildErnie45(const ModelSpec& spec);    // llama_like.cpp
absl::StatusOr<ir::Graph> BuildOlmo2(const ModelSpec& spec);      // llama_like.cpp
absl::StatusOr<ir::Graph> BuildLlamaMoe(const ModelSpec& spec);   // moe_families.cpp (via the llama row)
absl::StatusOr<ir::Graph> BuildQwen2Moe(const ModelSpec& spec);   // moe_families.cpp
absl::StatusOr<ir::Graph> BuildQwen3Moe(const ModelSpec& spec);   // moe_families.cpp
absl::StatusOr<ir::Graph> BuildGraniteMoe(const ModelSpec& spec); // moe_families.cpp

}  // namespace uaii::models
