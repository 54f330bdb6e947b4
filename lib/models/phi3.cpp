// Phi-3 (llama.cpp src/models/phi3.cpp): RMSNorm, fused attn_qkv (or separate Q/K/V),
// RoPE neox with LongRoPE factors, Q scaled by 1/sqrt(head_dim) before attention,
// fused gate|up in ffn_up (2 n_ff rows) with SwiGLU, optional output.bias. llama.cpp
// disables Phi-3's sliding window, so we do too.
// LongRoPE: rope_factors_short.weight applies while the context stays within
// rope.scaling.original_context_length, rope_factors_long.weight beyond it. The graph
// is built before the session's context is known, so uaii uses the short factors
// when the file's training context does not exceed the original one, else the long.
#include <cmath>

#include "models/decoder.h"
#include "models/families.h"

namespace uaii::models {

absl::StatusOr<ir::Graph> BuildPhi3(const ModelSpec& s) {
  DecoderConfig c;
  c.rope_mode = "neox";
  c.q_prescale = 1.0f / std::sqrt(static_cast<float>(s.head_dim_k));
  c.kq_scale = 1.0;
  const bool long_ctx = s.n_ctx_train > s.n_ctx_orig;
  c.rope_factors = long_ctx ? "rope_factors_long.weight" : "rope_factors_short.weight";
  if (!s.Find(c.rope_factors)) c.rope_factors = "rope_freqs.weight";
  return BuildDecoder(s, c);
}

}  // namespace uaii::models
