// Llama / Mistral (llama.cpp src/models/llama.cpp): pre-norm RMSNorm decoder, RoPE
// "norm" (adjacent pairs) with optional rope_freqs factors, GQA, SwiGLU, optional
// Q/K/V/output and FFN biases (found by presence), head tied unless output.weight is
// present. K.Q is scaled by attention.scale, else 1/sqrtf(head_dim). llama.cpp runs
// llama-architecture files without a sliding window even when the metadata names one
// (Mistral 7B v0.1), so neither do we: tokens must match. Mixtral (expert_count > 0)
// is built by moe_families.cpp.
// Hugging Face checkpoints: transformers' Mistral and Mixtral attend within
// sliding_window on every layer (Llama has no window), which the decoder applies to
// non-GGUF sources.
#include "models/decoder.h"
#include "models/families.h"

namespace uaii::models {

absl::StatusOr<ir::Graph> BuildLlama(const ModelSpec& s) {
  if (s.n_expert > 0) return BuildLlamaMoe(s);
  DecoderConfig c;
  auto scale = s.hparams.Float("attention.scale", 0.0);
  if (!scale.ok()) return scale.status();
  if (*scale != 0) c.kq_scale = *scale;
  return BuildDecoder(s, c);
}

absl::Status ReadLlamaHf(const hf::HfConfig& c, ModelSpec& s, HfReading&) {
  if (c.sliding_window > 0 && (c.model_type == "mistral" || c.model_type == "mixtral"))
    SetSwaPattern(s, std::vector<bool>(static_cast<size_t>(s.n_layer), true));
  return absl::OkStatus();
}

}  // namespace uaii::models
