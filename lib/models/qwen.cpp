// Qwen 2 and Qwen 3: pre-norm RMSNorm decoder, RoPE neox, GQA, SwiGLU, head tied
// unless output.weight is present. Qwen 2 adds Q/K/V biases (found by presence);
// Qwen 3 adds per-head RMSNorm of Q and K before RoPE (llama.cpp src/models/qwen2.cpp,
// qwen3.cpp).
#include "models/decoder.h"
#include "models/families.h"

namespace uaii::models {

absl::StatusOr<ir::Graph> BuildQwen2(const ModelSpec& s) {
  DecoderConfig c;
  c.rope_mode = "neox";
  return BuildDecoder(s, c);
}

absl::StatusOr<ir::Graph> BuildQwen3(const ModelSpec& s) {
  DecoderConfig c;
  c.rope_mode = "neox";
  c.qk_norm = DecoderConfig::QkNorm::kPerHead;
  return BuildDecoder(s, c);
}

}  // namespace uaii::models
