// ModelSpec: the one model description every source is read into, and all a family
// builder sees — the architecture, typed hyper-parameters (GGUF `<arch>.*` keys) and
// the tensor table under GGUF names. Built from an open GGUF file (SpecFromGguf) or a
// Hugging Face directory (hf_graph.h); no weight bytes are read.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "formats/gguf_file.h"
#include "formats/tensor_type.h"
#include "models/hparams.h"

namespace uaii::models {

struct SpecTensor {
  TensorType dtype = TensorType::F32;
  std::vector<int64_t> shape;  // outermost first (GGUF dims reversed): a weight is [out, in]
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

struct ModelSpec {
  std::string arch;   // general.architecture
  std::string file;   // path of the weights file, for `file#tensor` references
  std::string source = "gguf";  // "gguf" or "huggingface": whose conventions the tensors follow
  // Q/K rows in the rotate_half pairing (Hugging Face), not permuted to the adjacent
  // pairs convert_hf_to_gguf.py writes for RoPE "norm" families: those rotate halves.
  bool rope_halves = false;
  int64_t n_vocab = 0;
  int64_t n_embd = 0;
  int64_t n_layer = 0;
  int64_t n_ff = 0;
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim_k = 0;      // attention.key_length, default n_embd / n_head
  int64_t head_dim_v = 0;      // attention.value_length, default head_dim_k
  int64_t n_rot = 0;           // rope.dimension_count, default head_dim_k
  int64_t n_ctx_train = 0;     // context_length
  double rms_eps = 1e-5;       // attention.layer_norm_rms_epsilon
  double rope_freq_base = 10000.0;
  double rope_freq_scale = 1.0;  // 1 / rope.scaling.factor for linear scaling
  int64_t sliding_window = 0;    // attention.sliding_window, 0 = none
  double norm_eps = 1e-5;          // attention.layer_norm_epsilon (LayerNorm families)
  std::string rope_scaling = "none";  // rope.scaling.type: none, linear, yarn, longrope
  int64_t n_ctx_orig = 0;          // rope.scaling.original_context_length, default context_length
  // YaRN (rope.scaling.type yarn): ggml_rope_ext's ext_factor / attn_factor / betas.
  double yarn_ext_factor = 0;      // 1 when yarn, else 0
  double yarn_attn_factor = 1;     // rope.scaling.attn_factor (default 1)
  double yarn_beta_fast = 32, yarn_beta_slow = 1;
  // Mixture of experts (docs/moe.md): expert_count, expert_used_count,
  // expert_feed_forward_length, expert_shared_feed_forward_length.
  int64_t n_expert = 0, n_expert_used = 0, n_ff_exp = 0, n_ff_shexp = 0;
  // Every `<arch>.*` key (GGUF names without the prefix). The typed fields above are
  // the ones the shared decoder, the session and several families read; a key only one
  // family uses (soft-caps, granite's scales, attention.scale, rope.freq_base_swa,
  // sliding_window_pattern, ...) is read from here by that family's file.
  HParams hparams;
  std::map<std::string, SpecTensor> tensors;

  const SpecTensor* Find(const std::string& name) const;
};

// Reads hyper-parameters and the tensor table. Errors name the key and value.
absl::StatusOr<ModelSpec> SpecFromGguf(const gguf::File& f);

}  // namespace uaii::models
