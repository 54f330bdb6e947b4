// Qwen 2 and Qwen 3: pre-norm RMSNorm decoder, RoPE neox, GQA, SwiGLU, head tied
// unless output.weight is present. Qwen 2 adds Q/K/V biases (found by presence);
// Qwen 3 adds per-head RMSNorm of Q and K before RoPE (llama.cpp src/models/qwen2.cpp,
// qwen3.cpp).
// Hugging Face checkpoints (Qwen2 / Qwen3 and their MoE variants): with
// use_sliding_window, the layers from max_window_layers on attend within
// sliding_window (transformers' default layer_types), which the decoder applies to
// non-GGUF sources (llama.cpp's qwen graphs have no window).
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
  // A Qwen3 reranker's classifier head [n_cls_out, n_embd] (llama.cpp: optional, read
  // only by rank pooling): generation runs on the LM head as llama.cpp's does. Its
  // width is checked; its row count is the file's label count, which llama.cpp checks
  // and uaii (which keeps no string arrays in HParams) does not.
  if (const SpecTensor* cls = s.Find("cls.output.weight"))
    c.unused.push_back({"cls.output.weight", {cls->shape.size() == 2 ? cls->shape[0] : 1, s.n_embd},
                        "the reranker's classifier head (rank pooling), not the logits"});
  return BuildDecoder(s, c);
}

absl::Status ReadQwenHf(const hf::HfConfig& c, ModelSpec& s, HfReading&) {
  if (c.sliding_window <= 0 || !c.use_sliding_window) return absl::OkStatus();
  std::vector<bool> layers(static_cast<size_t>(s.n_layer));
  for (int64_t il = 0; il < s.n_layer; ++il) layers[il] = il >= c.max_window_layers;
  SetSwaPattern(s, layers);
  return absl::OkStatus();
}

}  // namespace uaii::models
