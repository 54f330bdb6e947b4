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
//
// Hugging Face checkpoints (transformers' Gemma / Gemma2 / Gemma3 text models): RMSNorm
// weights are offsets (the norm multiplies by 1 + w), the MLP's activation is
// hidden_activation (default gelu_pytorch_tanh; hidden_act is ignored), the Q scale is
// query_pre_attn_scalar^-0.5, the soft-caps are attn_logit_softcapping and
// final_logit_softcapping, gemma3's sliding layers' RoPE base is rope_local_base_freq,
// and the sliding layers follow the same periods as llama.cpp's defaults (gemma2: even
// layers; gemma3: sliding_window_pattern, default 6).
#include <cmath>

#include "models/decoder.h"
#include "models/families.h"

namespace uaii::models {
namespace {

constexpr int64_t kGemma2SwaPeriod = 2;  // llama.cpp's set_swa_pattern(2): even layers slide
constexpr int64_t kGemma3SwaPeriod = 6;  // five sliding layers, then one global

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
  auto attn_cap = s.hparams.Float("attn_logit_softcapping", 50.0);
  if (!attn_cap.ok()) return attn_cap.status();
  auto final_cap = s.hparams.Float("final_logit_softcapping", 30.0);
  if (!final_cap.ok()) return final_cap.status();
  c.attn_softcap = *attn_cap;
  c.final_softcap = *final_cap;
  const int64_t window = s.sliding_window > 0 ? s.sliding_window : 4096;
  if (auto st = ReadSlidingWindow(s, window, kGemma2SwaPeriod, s.rope_freq_base, s.rope_freq_scale, c.swa); !st.ok())
    return st;
  return BuildDecoder(s, c);
}

absl::StatusOr<ir::Graph> BuildGemma3(const ModelSpec& s) {
  auto common = GemmaCommon(s, 62);
  if (!common.ok()) return common.status();
  DecoderConfig c = *std::move(common);
  c.qk_norm = DecoderConfig::QkNorm::kPerHead;
  c.post_norms = true;
  auto final_cap = s.hparams.Float("final_logit_softcapping", 0.0);
  if (!final_cap.ok()) return final_cap.status();
  c.final_softcap = *final_cap;
  if (s.sliding_window > 0)
    if (auto st = ReadSlidingWindow(s, s.sliding_window, kGemma3SwaPeriod, 10000.0, 1.0, c.swa); !st.ok()) return st;
  return BuildDecoder(s, c);
}

absl::Status ReadGemmaHf(const hf::HfConfig& c, ModelSpec& s, HfReading& r) {
  r.norm_plus_one = true;
  r.activation = c.hidden_activation.value_or(hf::Activation::kGeluTanh);
  r.activation_name = c.hidden_activation ? c.hidden_activation_name : "gelu_pytorch_tanh (hidden_activation default)";
  if (c.query_pre_attn_scalar > 0) s.hparams.SetNumber("attention.query_pre_attn_scalar", c.query_pre_attn_scalar);
  // A null soft-cap in config.json reads as 0 and leaves the family's default.
  if (c.attn_logit_softcapping > 0) s.hparams.SetNumber("attn_logit_softcapping", c.attn_logit_softcapping);
  if (c.final_logit_softcapping > 0) s.hparams.SetNumber("final_logit_softcapping", c.final_logit_softcapping);
  return absl::OkStatus();
}

absl::Status ReadGemma2Hf(const hf::HfConfig& c, ModelSpec& s, HfReading& r) {
  if (auto st = ReadGemmaHf(c, s, r); !st.ok()) return st;
  auto layers = SwaPattern(s, kGemma2SwaPeriod, /*dense_first=*/false);
  if (!layers.ok()) return layers.status();
  SetSwaPattern(s, *layers);
  return absl::OkStatus();
}

absl::Status ReadGemma3Hf(const hf::HfConfig& c, ModelSpec& s, HfReading& r) {
  if (auto st = ReadGemmaHf(c, s, r); !st.ok()) return st;
  r.reads_local_rope = true;
  if (c.rope_local_base_freq > 0) s.hparams.SetNumber("rope.freq_base_swa", c.rope_local_base_freq);
  if (c.sliding_window <= 0) return absl::OkStatus();
  auto layers = SwaPattern(s, c.sliding_window_pattern > 0 ? c.sliding_window_pattern : kGemma3SwaPeriod,
                           /*dense_first=*/false);
  if (!layers.ok()) return layers.status();
  SetSwaPattern(s, *layers);
  return absl::OkStatus();
}

}  // namespace uaii::models
