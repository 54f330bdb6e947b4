// Llama-shaped families that differ in one or two knobs (RoPE "norm", RMSNorm, SwiGLU):
//  * smollm3 (src/models/smollm3.cpp): no RoPE on every 4th layer ((il + 1) % 4 == 0,
//    llama.cpp's hard-coded n_no_rope_layer_step = 4; no GGUF key carries it).
//  * granite (src/models/granite.cpp): embeddings * granite.embedding_scale, block
//    outputs * residual_scale before each residual add, K.Q * attention.scale,
//    logits / logit_scale (required key).
//  * ernie4_5 (src/models/ernie4-5.cpp): head size from attention.key_length, which
//    may exceed n_embd / n_head.
//  * olmo2 (src/models/olmo2.cpp): no pre-norms, post-attention and post-FFN norms
//    only, RMSNorm of the whole Q and K projections before the head split, RoPE neox.
#include <cmath>

#include "models/decoder.h"
#include "models/families.h"
#include "util/str_cat.h"

namespace uaii::models {

absl::StatusOr<ir::Graph> BuildSmolLM3(const ModelSpec& s) {
  DecoderConfig c;
  c.rope_layer = [](int il) { return (il + 1) % 4 != 0; };
  return BuildDecoder(s, c);
}

absl::Status ReadGraniteScales(const ModelSpec& s, DecoderConfig& c) {
  if (!s.hparams.Has("logit_scale"))
    return absl::NotFoundError(StrCat(s.hparams.origin(), "logit_scale: missing"));
  for (auto [key, field] : {std::pair{"embedding_scale", &c.embed_scale}, std::pair{"residual_scale", &c.residual_scale},
                            std::pair{"attention.scale", &c.kq_scale}, std::pair{"logit_scale", &c.logit_scale}}) {
    auto v = s.hparams.Float(key, 0.0);
    if (!v.ok()) return v.status();
    *field = *v;
  }
  if (c.logit_scale == 0) return absl::InvalidArgumentError(StrCat(s.hparams.origin(), "logit_scale = 0 (logits / 0)"));
  return absl::OkStatus();
}

absl::StatusOr<ir::Graph> BuildGranite(const ModelSpec& s) {
  DecoderConfig c;
  if (auto st = ReadGraniteScales(s, c); !st.ok()) return st;
  return BuildDecoder(s, c);
}

absl::StatusOr<ir::Graph> BuildErnie45(const ModelSpec& s) { return BuildDecoder(s, DecoderConfig{}); }

absl::StatusOr<ir::Graph> BuildOlmo2(const ModelSpec& s) {
  DecoderConfig c;
  c.rope_mode = "neox";
  c.pre_norms = false;
  c.post_norms = true;
  c.qk_norm = DecoderConfig::QkNorm::kWhole;
  return BuildDecoder(s, c);
}

}  // namespace uaii::models
