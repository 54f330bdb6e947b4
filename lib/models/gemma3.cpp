// Gemma 3: embeddings scaled by sqrt(n_embd), QK-norm, post-attention and post-FFN
// norms, GeGLU (tanh GELU), RoPE "neox" (halves). Layers alternate 5 sliding-window
// : 1 global — layer il is global when (il + 1) % 6 == 0 (llama.cpp set_swa_pattern(6)).
// Sliding layers use rope base 10000, global ones `gemma3.rope.freq_base`.
// Q is scaled by 1/sqrt(head_dim) before attention (1/sqrt(n_embd/n_head) for the
// 62-layer 27B, as llama.cpp's f_attention_scale does) and K.Q is not scaled again.
// Gemma's GGUF stores RMSNorm weights as (1 + w) already: they multiply as stored.
#include <cmath>

#include "models/blocks.h"
#include "models/families.h"
#include "util/str_cat.h"

namespace uaii::models {

absl::StatusOr<ir::Graph> BuildGemma3(const ModelSpec& s) {
  GraphBuilder b(s);
  std::string tokens = b.Input("tokens", TensorType::I32, {ir::kDimTokens});
  std::string positions = b.Input("positions", TensorType::I32, {ir::kDimTokens});
  std::string x = EmbedTokens(b, tokens);
  x = b.Op("scale", {x}, "inp_scaled", {{"scale", static_cast<double>(std::sqrt(static_cast<float>(s.n_embd)))}});

  const float q_scale = s.n_layer == 62 ? 1.0f / std::sqrt(static_cast<float>(s.n_embd / s.n_head))
                                        : 1.0f / std::sqrt(static_cast<float>(s.head_dim_k));
  for (int il = 0; il < s.n_layer; ++il) {
    const bool sliding = s.sliding_window > 0 && (il + 1) % 6 != 0;
    AttentionConfig attn;
    attn.rope_mode = "neox";
    // Sliding layers: rope base gemma3.rope.freq_base_swa (default 10000), no scaling.
    attn.rope_base = sliding ? s.rope_freq_base_swa : s.rope_freq_base;
    attn.rope_scale = sliding ? 1.0 : s.rope_freq_scale;
    attn.yarn = !sliding;
    attn.q_prescale = q_scale;
    attn.kq_scale = 1.0;
    attn.window = sliding ? s.sliding_window : 0;
    attn.qk_norm = true;
    std::string p = StrCat("blk.", il, ".");
    std::string h = RmsNorm(b, x, b.Weight(p + "attn_norm.weight"), p + "attn_in");
    h = SelfAttention(b, il, h, positions, attn);
    h = RmsNorm(b, h, b.Weight(p + "post_attention_norm.weight"), p + "attn_post");
    std::string sa_out = b.Op("add", {h, x}, p + "sa_out");
    h = RmsNorm(b, sa_out, b.Weight(p + "ffn_norm.weight"), p + "ffn_in");
    h = GatedFfn(b, il, h, "geglu");
    h = RmsNorm(b, h, b.Weight(p + "post_ffw_norm.weight"), p + "ffn_post");
    x = b.Op("add", {h, sa_out}, p + "out");
  }
  OutputHead(b, x, s.final_logit_softcap);
  b.Meta("architecture", s.arch);
  b.Meta("sliding_window", StrCat(s.sliding_window));
  return b.Finish({"logits"});
}

}  // namespace uaii::models
