// The configurable decoder most GGUF families are: embeddings (optionally scaled, plus
// learned positions), n_layer blocks of attention + feed-forward with pre- and/or
// post-norms, and the output head. A family builder fills a DecoderConfig from its
// ModelSpec and calls BuildDecoder; optional tensors are found by presence:
//   attn_{q,k,v,output}.bias, attn_qkv.{weight,bias} (fused Q|K|V rows; separate Q/K/V
//   biases beside a fused weight without its own bias, as llama.cpp's create_tensor_qkv),
//   ffn_{up,gate,down}.bias, ffn_up with 2 n_ff rows and no ffn_gate (fused gate|up),
//   *_norm.bias (LayerNorm), output.weight (else tied to token_embd), output.bias.
// Shapes follow llama.cpp's create_tensor calls; a mismatch names the tensor.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "models/spec.h"

namespace uaii::models {

class GraphBuilder;

// Sliding-window attention layers (llama.cpp's is_swa layers and their RoPE).
struct SlidingWindow {
  int64_t size = 0;            // keys with pos_q - pos_k >= size are masked; 0: no sliding layers
  std::vector<bool> layers;    // layer il slides when layers[il]
  double rope_base = 10000;    // the sliding layers' RoPE (rope_freq_{base,scale}_train_swa)
  double rope_scale = 1;
};

// llama.cpp's load_swa_pattern: `attention.sliding_window_pattern` is either a bool per
// layer, or a period n (default `n_pattern`): layer il slides when il % n != 0 with
// `dense_first`, else when il % n < n - 1; n = 0 makes every layer slide.
absl::StatusOr<std::vector<bool>> SwaPattern(const ModelSpec& s, int64_t n_pattern, bool dense_first);
// Writes per-layer flags as attention.sliding_window_pattern's array form (how a
// family's reading of another source states its sliding layers).
void SetSwaPattern(ModelSpec& s, const std::vector<bool>& layers);

struct DecoderConfig {
  enum class Norm { kRms, kLayer };          // RMSNorm (rms_eps) or LayerNorm (norm_eps, + bias)
  enum class QkNorm { kNone, kPerHead, kWhole };
  enum class Ffn { kSwiglu, kGeglu, kGelu };  // gated (gate, up) or plain up -> gelu -> down

  Norm norm = Norm::kRms;
  double embed_scale = 0;          // x *= embed_scale after the lookup, 0 = none
  bool learned_positions = false;  // x += position_embd[pos]
  std::string rope_mode = "norm";  // "norm", "neox" or "none"
  std::function<bool(int)> rope_layer;     // false = layer il skips RoPE; null = all rotate
  SlidingWindow swa;
  std::string rope_factors;        // optional per-frequency factor tensor ("" = rope_freqs.weight)
  double q_prescale = 0;           // Q *= this before attention, 0 = none
  double kq_scale = 0;             // softmax(kq_scale K.Q); 0 = 1/sqrtf(head_dim)
  std::string rope_long_factors;   // LongRoPE: optional factors used when the session's context
  int64_t long_factors_ctx = 0;    //   exceeds long_factors_ctx (rope_factors are the short ones)
  double attn_softcap = 0;         // cap * tanh(K.Q / cap) before the softmax
  QkNorm qk_norm = QkNorm::kNone;  // RMSNorm of Q and K per head, or over the whole projection
  bool pre_norms = true;           // attn_norm / ffn_norm before the blocks
  bool post_norms = false;         // post_attention_norm / post_ffw_norm after the blocks
  double residual_scale = 0;       // block output *= this before the residual add, 0 = none
  Ffn ffn = Ffn::kSwiglu;
  double logit_scale = 0;          // logits /= logit_scale, 0 = none
  double final_softcap = 0;        // cap * tanh(logits / cap), 0 = none
  // Replaces the feed-forward block of layer il (input: the normed x [T, n_embd]);
  // returns the block's output tensor, or "" for the dense block. Mixture-of-experts
  // families (moe_families.cpp).
  std::function<std::string(GraphBuilder&, int il, const std::string& x)> ffn_block;
  // Tensors llama.cpp loads as optional for this family but never uses for the logits
  // (a reranker's classifier head): accepted when present, shape-checked, not loaded.
  struct Unused {
    std::string name;
    ir::Shape shape;
    std::string why;
  };
  std::vector<Unused> unused;
};

// Rope op attributes: mode, n_dims, base, scale and the spec's YaRN ext_factor /
// attn_factor / betas / original context when the file sets them.
std::map<std::string, ir::AttrValue> RopeAttrs(const ModelSpec& s, const std::string& mode, double base,
                                               double scale);

absl::StatusOr<ir::Graph> BuildDecoder(const ModelSpec& s, const DecoderConfig& cfg);

}  // namespace uaii::models
