// Gemma (1) and Gemma 2 (llama.cpp src/models/gemma.cpp, gemma2-iswa.cpp): embeddings
// scaled by sqrtf(n_embd), RoPE neox, Q scaled before attention (K.Q unscaled), GeGLU,
// tied head. Gemma 2 adds post-attention / post-FFN norms, attention logit soft-cap
// (gemma2.attn_logit_softcapping, default 50) and final soft-cap (default 30), and
// alternates sliding-window (even layers, set_swa_pattern(2)) and global layers.
// The Q scale is 1/sqrt(head_dim), except 1/sqrt(n_embd/n_head) for the 46-layer 27B.
#include <cmath>

#include "models/decoder.h"
#include "models/families.h"

namespace uaii::models {
namespace {
DecoderConfig GemmaCommon(const ModelSpec& s) {
  DecoderConfig c;
  c.rope_mode = "neox";
  c.embed_scale = std::sqrt(static_cast<float>(s.n_embd));
  c.q_prescale = 1.0f / std::sqrt(static_cast<float>(s.head_dim_k));
  c.kq_scale = 1.0;
  c.ffn = DecoderConfig::Ffn::kGeglu;
  return c;
}
}  // namespace

absl::StatusOr<ir::Graph> BuildGemma(const ModelSpec& s) { return BuildDecoder(s, GemmaCommon(s)); }

absl::StatusOr<ir::Graph> BuildGemma2(const ModelSpec& s) {
  DecoderConfig c = GemmaCommon(s);
  if (s.n_layer == 46) c.q_prescale = 1.0f / std::sqrt(static_cast<float>(s.n_embd / s.n_head));
  c.post_norms = true;
  c.attn_softcap = s.attn_logit_softcap > 0 ? s.attn_logit_softcap : 50.0;
  c.final_softcap = s.final_logit_softcap > 0 ? s.final_logit_softcap : 30.0;
  const int64_t w = s.sliding_window;
  if (w > 0) c.window = [w](int il) -> int64_t { return il % 2 == 0 ? w : 0; };
  return BuildDecoder(s, c);
}

}  // namespace uaii::models
