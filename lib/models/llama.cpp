// Llama / Mistral: pre-norm decoder, RoPE "norm" (adjacent pairs), GQA, SwiGLU.
// Mirrors llama.cpp's llm_build_llama.
#include <cmath>

#include "models/blocks.h"
#include "models/families.h"
#include "util/str_cat.h"

namespace uaii::models {

absl::StatusOr<ir::Graph> BuildLlama(const ModelSpec& s) {
  if (s.n_expert > 0) return BuildLlamaMoe(s);  // Mixtral: llama.expert_count (moe_families.cpp)
  GraphBuilder b(s);
  std::string tokens = b.Input("tokens", TensorType::I32, {ir::kDimTokens});
  std::string positions = b.Input("positions", TensorType::I32, {ir::kDimTokens});
  std::string x = EmbedTokens(b, tokens);
  AttentionConfig attn;
  attn.rope_mode = "norm";
  attn.rope_base = s.rope_freq_base;
  attn.rope_scale = s.rope_freq_scale;
  attn.yarn = true;
  // As llama.cpp: 1/sqrtf(head_dim) in float unless <arch>.attention.scale is set.
  attn.kq_scale = s.attention_scale != 0 ? s.attention_scale : 1.0f / std::sqrt(static_cast<float>(s.head_dim_k));
  // llama.cpp runs llama-architecture files without a sliding window even when the
  // metadata names one (Mistral 7B v0.1), so neither do we: tokens must match.
  attn.window = 0;
  for (int il = 0; il < s.n_layer; ++il) {
    std::string p = StrCat("blk.", il, ".");
    std::string h = RmsNorm(b, x, b.Weight(p + "attn_norm.weight"), p + "attn_in");
    h = SelfAttention(b, il, h, positions, attn);
    std::string ffn_in = b.Op("add", {h, x}, p + "ffn_inp");
    h = RmsNorm(b, ffn_in, b.Weight(p + "ffn_norm.weight"), p + "ffn_in");
    h = GatedFfn(b, il, h, "swiglu");
    x = b.Op("add", {h, ffn_in}, p + "out");
  }
  OutputHead(b, x, s.final_logit_softcap);
  b.Meta("architecture", s.arch);
  return b.Finish({"logits"});
}

}  // namespace uaii::models
