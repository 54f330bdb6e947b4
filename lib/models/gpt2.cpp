// GPT-2 (llama.cpp src/models/gpt2.cpp): learned absolute positions added to the token
// embeddings, no RoPE, LayerNorm with biases (attention.layer_norm_epsilon), fused
// attn_qkv with bias, biased projections, plain MLP up -> GELU (tanh, ggml's f16
// table) -> down, K.Q scaled by 1/sqrt(head_dim).
#include "models/decoder.h"
#include "models/families.h"

namespace uaii::models {

absl::StatusOr<ir::Graph> BuildGpt2(const ModelSpec& s) {
  DecoderConfig c;
  c.norm = DecoderConfig::Norm::kLayer;
  c.learned_positions = true;
  c.rope_mode = "none";
  c.ffn = DecoderConfig::Ffn::kGelu;
  return BuildDecoder(s, c);
}

}  // namespace uaii::models
