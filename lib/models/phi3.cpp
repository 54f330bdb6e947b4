// Phi-3 (llama.cpp src/models/phi3.cpp): RMSNorm, fused attn_qkv (or separate Q/K/V),
// RoPE neox with LongRoPE factors, Q scaled by 1/sqrt(head_dim) before attention,
// fused gate|up in ffn_up (2 n_ff rows) with SwiGLU, optional output.bias. llama.cpp
// disables Phi-3's sliding window, so we do too.
// LongRoPE: rope_factors_short.weight applies while the session's context stays within
// rope.scaling.original_context_length (default context_length), rope_factors_long.weight
// beyond it (llama.cpp's get_rope_factors); the rope op gets both and the runtime picks.
// rope.scaling.attn_factor, when present, scales cos/sin (RopeAttrs).
// Hugging Face checkpoints: transformers' Phi-3 attends within sliding_window on every
// layer, which the decoder applies to non-GGUF sources.
#include <cmath>

#include "models/decoder.h"
#include "models/families.h"

namespace uaii::models {

absl::StatusOr<ir::Graph> BuildPhi3(const ModelSpec& s) {
  DecoderConfig c;
  c.rope_mode = "neox";
  c.q_prescale = 1.0f / std::sqrt(static_cast<float>(s.head_dim_k));
  c.kq_scale = 1.0;
  if (s.Find("rope_factors_short.weight") || s.Find("rope_factors_long.weight")) {
    c.rope_factors = "rope_factors_short.weight";
    c.rope_long_factors = "rope_factors_long.weight";
    c.long_factors_ctx = s.n_ctx_orig;
  }
  return BuildDecoder(s, c);
}

absl::Status ReadPhi3Hf(const hf::HfConfig& c, ModelSpec& s, HfReading&) {
  if (c.sliding_window > 0) SetSwaPattern(s, std::vector<bool>(static_cast<size_t>(s.n_layer), true));
  return absl::OkStatus();
}

}  // namespace uaii::models
