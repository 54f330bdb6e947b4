// Llama / Mistral (llama.cpp src/models/llama.cpp): pre-norm RMSNorm decoder, RoPE
// "norm" (adjacent pairs) with optional rope_freqs factors, GQA, SwiGLU, optional
// Q/K/V/output and FFN biases (found by presence), head tied unless output.weight is
// present. K.Q is scaled by attention.scale, else 1/sqrtf(head_dim). llama.cpp runs
// llama-architecture files without a sliding window even when the metadata names one
// (Mistral 7B v0.1), so neither do we: tokens must match. Mixtral (expert_count > 0)
// is built by moe_families.cpp.
#include "models/decoder.h"
#include "models/families.h"

namespace uaii::models {

absl::StatusOr<ir::Graph> BuildLlama(const ModelSpec& s) {
  if (s.n_expert > 0) return BuildLlamaMoe(s);
  DecoderConfig c;
  if (s.attention_scale != 0) c.kq_scale = s.attention_scale;
  return BuildDecoder(s, c);
}

}  // namespace uaii::models
