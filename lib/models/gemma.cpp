// The Gemma family (llama.cpp src/models/gemma.cpp, gemma2.cpp, gemma3.cpp): embeddings
// scaled by sqrtf(n_embd), RoPE neox, Q scaled before attention (K.Q unscaled), GeGLU
// (tanh GELU), head tied unless output.weight is present. Gemma's GGUF stores RMSNorm
// weights as (1 + w) already: they multiply as stored.
//   gemma2: post-attention / post-FFN norms, attention logit soft-cap (default 50) and
//     final soft-cap (default 30); sliding window (default 4096) on the layers of
//     attention.sliding_window_pattern (default period 2: even layers), which rotate
//     with rope.freq_base_swa (default the global base) and the global scale.
//   gemma3: QK-norm per head, post-norms, optional final soft-cap; when
//     attention.sliding_window > 0, the pattern's layers (default period 6: five
//     sliding, one global) slide and rotate with rope.freq_base_swa (default 10000),
//     scale 1; without a window every layer is global.
// The Q scale is 1/sqrt(head_dim), except 1/sqrt(n_embd/n_head) for the 27B models
// (gemma2: 46 layers, gemma3: 62), as llama.cpp's f_attention_scale.
#include <cmath>

#include "models/decoder.h"
#include "models/families.h"

namespace uaii::models {
namespace {

absl::StatusOr<DecoderConfig> GemmaCommon(const ModelSpec& s, int64_t layers_27b) {
  DecoderConfig c;
  c.rope_mode = "neox";
  c.embed_scale = std::sqrt(static_cast<float>(s.n_embd));
  c.q_prescale = s.n_layer == layers_27b ? 1.0f / std::sqrt(static_cast<float>(s.n_embd / s.n_head))
                                         : 1.0f / std::sqrt(static_cast<float>(s.head_dim_k));
  // A Hugging Face config's query_pre_attn_scalar (GGUF files do not carry it: llama.cpp
  // derives the same scale from the layer count above).
  auto scalar = s.hparams.Float("attention.query_pre_attn_scalar", 0);
  if (!scalar.ok()) return scalar.status();
  if (*scalar > 0) c.q_prescale = static_cast<float>(1.0 / std::sqrt(*scalar));
  c.kq_scale = 1.0;
  c.ffn = DecoderConfig::Ffn::kGeglu;
  return c;
}

// The sliding layers of a pattern with period `n_pattern` by default; their RoPE base is
// rope.freq_base_swa, else `default_base`.
absl::Status ReadSlidingWindow(const ModelSpec& s, int64_t size, int64_t n_pattern, double default_base,
                               double scale, SlidingWindow& out) {
  auto layers = SwaPattern(s, n_pattern, /*dense_first=*/false);
  if (!layers.ok()) return layers.status();
  auto base = s.hparams.Float("rope.freq_base_swa", default_base);
  if (!base.ok()) return base.status();
  out = SlidingWindow{size, std::move(*layers), *base, scale};
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ir::Graph> BuildGemma(const ModelSpec& s) {
  auto c = GemmaCommon(s, 0);
  if (!c.ok()) return c.status();
  return BuildDecoder(s, *c);
}

absl::StatusOr<ir::Graph> BuildGemma2(const ModelSpec& s) {
  auto common = GemmaCommon(s, 46);
  if (!common.ok()) return common.status();
  DecoderConfig c = *std::move(common);
  c.post_norms = true;
  c.attn_softcap = s.attn_logit_softcap > 0 ? s.attn_logit_softcap : 50.0;
  c.final_softcap = s.final_logit_softcap > 0 ? s.final_logit_softcap : 30.0;
  const int64_t window = s.sliding_window > 0 ? s.sliding_window : 4096;
  if (auto st = ReadSlidingWindow(s, window, 2, s.rope_freq_base, s.rope_freq_scale, c.swa); !st.ok()) return st;
  return BuildDecoder(s, c);
}

absl::StatusOr<ir::Graph> BuildGemma3(const ModelSpec& s) {
  auto common = GemmaCommon(s, 62);
  if (!common.ok()) return common.status();
  DecoderConfig c = *std::move(common);
  c.qk_norm = DecoderConfig::QkNorm::kPerHead;
  c.post_norms = true;
  c.final_softcap = s.final_logit_softcap;
  if (s.sliding_window > 0)
    if (auto st = ReadSlidingWindow(s, s.sliding_window, 6, 10000.0, 1.0, c.swa); !st.ok()) return st;
  return BuildDecoder(s, c);
}

}  // namespace uaii::models
