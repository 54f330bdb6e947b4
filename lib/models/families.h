// The family table: which architectures (GGUF `general.architecture`) uaii builds,
// the builder for each and, for families Hugging Face checkpoints map onto, the
// config.json model_types and the family's own reading of config.json. Adding a family
// = one row here + one builder file (its GGUF builder and its config.json reading).
#pragma once
#include <string_view>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "loaders/hf_config.h"
#include "models/spec.h"

namespace uaii::models {

using BuildFn = absl::StatusOr<ir::Graph> (*)(const ModelSpec&);

// What a family's Hugging Face checkpoints store differently from its GGUF files, as
// the family's reading of config.json says (HfReadFn).
struct HfReading {
  bool norm_plus_one = false;  // RMSNorm weights are offsets: the graph's weight is 1 + w
  hf::Activation activation = hf::Activation::kSilu;  // what config.json says the MLP applies
  std::string activation_name;                        // as written, for messages
  bool reads_local_rope = false;  // the family rotates its sliding layers with rope_local_base_freq
};

// A family's own reading of config.json (in the family's file): the keys only it uses
// go into `s.hparams` under their GGUF names, with transformers' defaults; hf_graph.cpp
// has already mapped the keys every family shares (dimensions, rope_theta, rope_scaling,
// sliding_window, experts) and set `r` to the config's hidden_act. It runs before
// config.json's layer_types, which override its sliding layers.
using HfReadFn = absl::Status (*)(const hf::HfConfig& c, ModelSpec& s, HfReading& r);

struct Family {
  std::string_view arch;     // GGUF general.architecture
  BuildFn build;
  std::string_view summary;  // what the family adds over the plain decoder
  // Hugging Face config.json model_types read into this family (space-separated; ""
  // for none), and the hidden_act its graph applies ("silu" or "gelu_tanh").
  std::string_view hf_model_types = "";
  std::string_view hf_activation = "silu";
  HfReadFn hf_read = nullptr;  // null: the family reads no key of its own
};

const Family* FindFamily(std::string_view arch);
// The family a Hugging Face model_type is built as, or null.
const Family* FindHfFamily(std::string_view model_type);
std::string SupportedHfModelTypes();
// What a known model_type uaii refuses is ("T5 encoder-decoder", "Mamba state-space
// model", DeepSeek's MLA, ...), for the refusal's words; "" for any other.
std::string_view RefusedHfModelType(std::string_view model_type);

// Builds the forward graph for `spec`. Inputs: "tokens" I32 [T], "positions" I32 [T];
// output: "logits" F32 [R, n_vocab]. Unsupported architectures name the supported ones.
absl::StatusOr<ir::Graph> BuildGraph(const ModelSpec& spec);

// Fails naming the first tensor of `spec` that `g` neither reads nor declares unused
// (GraphBuilder::Unused): llama.cpp's "wrong number of tensors", fail closed.
absl::Status CheckEveryTensorRead(const ModelSpec& spec, const ir::Graph& g);

// Builders (one file each).
absl::StatusOr<ir::Graph> BuildLlama(const ModelSpec& spec);
absl::StatusOr<ir::Graph> BuildGemma3(const ModelSpec& spec);
absl::StatusOr<ir::Graph> BuildQwen2(const ModelSpec& spec);      // qwen.cpp
absl::StatusOr<ir::Graph> BuildQwen3(const ModelSpec& spec);      // qwen.cpp
absl::StatusOr<ir::Graph> BuildGemma(const ModelSpec& spec);      // gemma.cpp
absl::StatusOr<ir::Graph> BuildGemma2(const ModelSpec& spec);     // gemma.cpp
absl::StatusOr<ir::Graph> BuildGemma4(const ModelSpec& spec);     // gemma4.cpp
absl::StatusOr<ir::Graph> BuildGemma4Assistant(const ModelSpec& spec);  // gemma4.cpp: refuses (a drafter only)
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

// granite's scales (embedding_scale, residual_scale, attention.scale and the required
// logit_scale) into `c` (llama_like.cpp; granitemoe shares them).
struct DecoderConfig;
absl::Status ReadGraniteScales(const ModelSpec& s, DecoderConfig& c);

// Their readings of a Hugging Face config.json (same files).
absl::Status ReadLlamaHf(const hf::HfConfig& c, ModelSpec& s, HfReading& r);    // llama.cpp
absl::Status ReadQwenHf(const hf::HfConfig& c, ModelSpec& s, HfReading& r);     // qwen.cpp (qwen2, qwen3)
absl::Status ReadGemmaHf(const hf::HfConfig& c, ModelSpec& s, HfReading& r);    // gemma.cpp
absl::Status ReadGemma2Hf(const hf::HfConfig& c, ModelSpec& s, HfReading& r);   // gemma.cpp
absl::Status ReadGemma3Hf(const hf::HfConfig& c, ModelSpec& s, HfReading& r);   // gemma.cpp
absl::Status ReadPhi3Hf(const hf::HfConfig& c, ModelSpec& s, HfReading& r);     // phi3.cpp
absl::Status ReadQwenMoeHf(const hf::HfConfig& c, ModelSpec& s, HfReading& r);  // moe_families.cpp

}  // namespace uaii::models
