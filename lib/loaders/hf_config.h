// config.json of a Hugging Face model, as typed hyper-parameters. Aliases used by
// older configs (GPT-2 / GPT-J style) are accepted: n_embd, n_layer, n_head, n_inner,
// n_positions, layer_norm_epsilon, rotary_emb_base. Anything that changes the math and
// that uaii does not implement fails closed with the key and value in the message
// (unknown hidden_act, unknown rope_scaling type, ALiBi, quantization_config).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace uaii::hf {

enum class Activation { kSilu, kGeluErf, kGeluTanh, kRelu };
std::string_view ActivationName(Activation a);  // "silu", "gelu", "gelu_tanh", "relu"

// rope_scaling (or rope_parameters in newer configs). Fields beyond `kind` are read
// only for the kinds that use them; defaults are transformers' (modeling_rope_utils.py).
struct RopeScaling {
  enum class Kind { kNone, kLinear, kDynamicNtk, kLlama3, kYarn, kLongRope };
  Kind kind = Kind::kNone;
  double factor = 1.0;
  // llama3
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position_embeddings = 0;  // llama3 / yarn / longrope; 0 = not given
  // yarn
  double beta_fast = 32.0;
  double beta_slow = 1.0;
  bool truncate = true;         // floor / ceil the correction dims (transformers 5's "truncate")
  double mscale = 0.0;          // 0 = not given
  double mscale_all_dim = 0.0;  // 0 = not given
  std::optional<double> attention_factor;  // yarn / longrope
  // longrope ("su" is its old name): one factor per rotary frequency (rotary_dims / 2)
  std::vector<double> short_factor;
  std::vector<double> long_factor;
};
std::string_view RopeScalingName(RopeScaling::Kind k);  // "none", "linear", "dynamic", "llama3", "yarn", "longrope"

// The most layers a config.json may declare (ParseHfConfig refuses more), as a GGUF's
// block_count (loaders/gguf_summary.cpp).
inline constexpr int64_t kMaxHfLayers = 4096;

struct HfConfig {
  std::string model_type;                  // "" when absent
  std::vector<std::string> architectures;  // e.g. ["LlamaForCausalLM"]; informative only
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;             // n_embd
  int64_t num_hidden_layers = 0;       // n_layer, 1..kMaxHfLayers
  int64_t num_attention_heads = 0;     // n_head
  int64_t num_key_value_heads = 0;     // default num_attention_heads
  int64_t head_dim = 0;                // default hidden_size / num_attention_heads
  int64_t intermediate_size = 0;       // n_inner; 0 = absent (GPT-2 then uses 4 * hidden)
  int64_t max_position_embeddings = 0; // n_positions
  double norm_eps = 1e-5;              // rms_norm_eps / layer_norm_eps / layer_norm_epsilon
  bool norm_eps_given = false;
  double rope_theta = 10000.0;         // rotary_emb_base
  double partial_rotary_factor = 1.0;  // phi3 family (Phi-3.5 / Phi-4-mini): rotary on a prefix of head_dim
  Activation activation = Activation::kSilu;  // hidden_act / activation_function
  std::string activation_name;         // as written
  std::optional<Activation> hidden_activation;  // hidden_activation (Gemma's key), when given
  std::string hidden_activation_name;
  bool tie_word_embeddings = true;     // transformers' default
  bool tie_word_embeddings_given = false;
  bool attention_bias = false;
  bool mlp_bias = false;
  // Sliding-window attention; layer_types when the config lists them.
  int64_t sliding_window = 0;          // 0 = none
  bool use_sliding_window = false;     // qwen2 family
  int64_t max_window_layers = 0;       // qwen2 family
  int64_t sliding_window_pattern = 0;  // gemma3: every Nth layer is global
  std::vector<std::string> layer_types;  // "sliding_attention" / "full_attention"
  double rope_local_base_freq = 0.0;   // the sliding layers' RoPE base (Gemma 3's rope_local_base_freq,
                                       // or rope_parameters.sliding_attention.rope_theta); 0 = absent
  double query_pre_attn_scalar = 0.0;  // gemma2/3 attention scale = value^-0.5; 0 = absent
  double final_logit_softcapping = 0.0;
  double attn_logit_softcapping = 0.0;
  // Mixture of experts (Mixtral num_local_experts, Qwen-MoE num_experts).
  int64_t num_experts = 0;
  int64_t num_experts_per_tok = 0;
  int64_t moe_intermediate_size = 0;
  int64_t shared_expert_intermediate_size = 0;
  bool norm_topk_prob = false;
  RopeScaling rope_scaling;
  // Special token ids as config.json states them (-1 = absent); eos may be a list.
  int64_t bos_token_id = -1;
  std::vector<int64_t> eos_token_ids;
  int64_t pad_token_id = -1;
  std::string torch_dtype;             // "bfloat16", ... ("" when absent)
  std::string quant_method;            // quantization_config.quant_method; "" = dense
  bool is_encoder_decoder = false;
  std::vector<std::string> sub_configs;  // vision_config / audio_config / text_config / encoder ... present
  // Every top-level key with its JSON text, file order (what `inspect` prints).
  std::vector<std::pair<std::string, std::string>> raw;

  int64_t RotaryDims() const;  // head_dim * partial_rotary_factor, rounded down to even
};

// Parses config.json. Validates only what the config alone can tell (types, positive
// dims, known activation / rope kind, no ALiBi); the family-specific checks (required
// intermediate_size, shapes against the weights) are in hf_family.h.
absl::StatusOr<HfConfig> ParseHfConfig(std::string_view json, std::string_view origin);

}  // namespace uaii::hf
