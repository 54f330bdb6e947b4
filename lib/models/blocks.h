// Shared transformer blocks the family builders compose. Activations are [T, n_embd];
// each block takes the layer prefix ("blk.3") and returns its output tensor name.
#pragma once
#include <string>

#include "models/graph_builder.h"

namespace uaii::models {

// Token embedding lookup: tokens [T] -> [T, n_embd].
std::string EmbedTokens(GraphBuilder& b, const std::string& tokens);

// x * rsqrt(mean(x^2) + eps) * weight (ggml_rms_norm then ggml_mul). `weight` is a
// tensor name; the output is named `out`.
std::string RmsNorm(GraphBuilder& b, const std::string& x, const std::string& weight, const std::string& out);

struct AttentionConfig {
  std::string rope_mode;      // "norm" (llama) or "neox" (gemma)
  double rope_base = 10000;
  double rope_scale = 1;      // freq_scale: 1 / linear rope-scaling factor
  double q_prescale = 0;      // Q *= this before attention (gemma), 0 = none
  double kq_scale = 1;        // softmax(kq_scale * K.Q)
  int64_t window = 0;         // sliding window (keys with pos_q - pos_k >= window are masked)
  bool qk_norm = false;       // RMSNorm over head_dim of Q and K (attn_q_norm / attn_k_norm)
  bool yarn = false;          // apply the file's YaRN / rope attn_factor settings (RopeAttrs)
};

// Rope op attributes: mode, n_dims, base, scale and, when `yarn`, the spec's YaRN
// ext_factor / attn_factor / betas / original context.
std::map<std::string, ir::AttrValue> RopeAttrs(const ModelSpec& s, const std::string& mode, double base,
                                               double scale, bool yarn);

// Self-attention over the layer's KV cache: x [T, n_embd] -> [T, n_embd] (after
// the output projection).
std::string SelfAttention(GraphBuilder& b, int layer, const std::string& x, const std::string& positions,
                          const AttentionConfig& cfg);

// Gated feed-forward: down(act(gate(x)) * up(x)); act is "swiglu" or "geglu".
std::string GatedFfn(GraphBuilder& b, int layer, const std::string& x, const std::string& act);

// Final norm, rows the caller wants, and the output head (tied to token_embd when
// output.weight is absent); optional final soft-cap. Returns "logits" [R, n_vocab].
std::string OutputHead(GraphBuilder& b, const std::string& x, double softcap);

}  // namespace uaii::models
