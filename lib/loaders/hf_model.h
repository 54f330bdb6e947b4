// What the Hugging Face loader hands to the runtime: the family and its variant
// features, typed hyper-parameters (hf_config.h), a tensor table of references into
// memory-mapped safetensors files (never copies), and the tokenizer side (files,
// chat template, special tokens). Built by LoadHfModel (hf_loader.h).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "formats/tensor_type.h"
#include "loaders/hf_config.h"
#include "loaders/safetensors_file.h"

namespace uaii::hf {

// How q, k and v reach the attention. Fused weights are one [rows, n_embd] tensor
// (role "attn_qkv") whose output rows split as follows (hd = head_dim,
// nq = num_attention_heads, nkv = num_key_value_heads):
enum class QkvLayout {
  kSeparate,     // attn_q [nq*hd, E], attn_k [nkv*hd, E], attn_v [nkv*hd, E]
  kConcat,       // rows [q: nq*hd | k: nkv*hd | v: nkv*hd]   (phi3 qkv_proj, baichuan W_pack)
  kGroupedHeads, // per kv group g: [q: (nq/nkv)*hd | k: hd | v: hd], groups back to back
                 // (GPT-NeoX / Falcon query_key_value; NeoX is the nq == nkv case)
  kGpt2Conv1D,   // GPT-2 c_attn: Conv1D weight stored TRANSPOSED as [E, 3*E] (in, out),
                 // columns [q | k | v]; bias [3*E]
};

enum class FfnKind {
  kGated,       // down(act(gate(x)) * up(x)): ffn_gate, ffn_up, ffn_down
  kGatedFused,  // ffn_gate_up [2*I, E]: rows [gate: I | up: I]   (phi3 gate_up_proj)
  kMlp,         // down(act(up(x))) with biases: GPT-2 c_fc / c_proj (Conv1D, transposed [in, out])
  kMoe,         // router ffn_gate_inp [n_expert, E]; per expert ffn_gate/ffn_up/ffn_down
                // (TensorRef::expert), optional shared expert (*_shexp, ffn_gate_inp_shexp)
};

// What the layout says of the norms. How a family's RMSNorm applies its weight (Gemma's
// are offsets: 1 + w) is the family's reading of config.json (lib/models/families.h).
enum class NormKind {
  kRms,        // RMSNorm weights (model.norm, input_layernorm, ...)
  kLayerNorm,  // (x - mean) / std * w + b (GPT-2)
};

// The weight layout and what its variant adds, all decided from the weight names and
// shapes (config.json's model_type picks the family's graph: lib/models/families.h).
struct HfArchitecture {
  std::string family;   // "llama" (Llama/Mistral/Qwen/Gemma/Phi/Baichuan/Mixtral/Qwen-MoE), "gpt2", "gpt_oss"
  std::string variant;  // config.json model_type ("llama", "qwen3", "gemma3_text", "phi3", ...)
  QkvLayout qkv = QkvLayout::kSeparate;
  FfnKind ffn = FfnKind::kGated;
  NormKind norm = NormKind::kRms;
  bool qkv_bias = false;        // attn_q/k/v (or attn_qkv) carry biases
  bool o_bias = false;          // attn_output carries a bias
  bool ffn_bias = false;        // ffn projections carry biases
  bool qk_norm = false;         // attn_q_norm / attn_k_norm, per head over head_dim (qwen3, gemma3)
  bool sandwich_norms = false;  // gemma2/3: attn_post_norm after attention, ffn_norm before and
                                // ffn_post_norm after the FFN (post_attention_layernorm is then a post-norm)
  bool learned_positions = false; // GPT-2 position_embd [n_positions, E]; no RoPE
  bool rope = true;
  int64_t rotary_dims = 0;      // leading dims of each head that rotate (partial rotary)
  // RoPE on HF weights is the "rotate_half" (NeoX) pairing: dim i pairs with i + rotary_dims/2.
  // (GGUF llama converts q/k weights to the interleaved pairing; HF weights are not permuted.)
  bool tied_embeddings = false;   // no lm_head weight: the output projection is token_embd
  int64_t n_ff = 0;               // intermediate size (GPT-2: n_inner or 4 * n_embd)
  bool runnable = true;           // false: inspect may describe it, generate must refuse
  std::string not_runnable_reason;
};

// One weight, by reference. The runtime reads `bytes` bytes at `offset` of `file`.
struct HfTensor {
  std::string name;          // HF name ("model.layers.0.self_attn.q_proj.weight")
  std::string file;          // absolute path of the .safetensors file
  uint64_t offset = 0;       // absolute offset in `file` (header and its length already skipped)
  uint64_t bytes = 0;
  TensorType dtype = TensorType::F32;  // what the runtime consumes (F32 / F16 / BF16);
                                       // F32 when promote_to_f32 (I8 / U8 stored)
  safetensors::Dtype stored = safetensors::Dtype::F32;  // dtype in the file
  bool promote_to_f32 = false;  // I8 / U8 weights: read via safetensors::MaterializeF32
  std::vector<int64_t> shape;   // outermost first, as in the header ([out, in] for nn.Linear)
  // The tensor's role in the family, GGUF-style: "token_embd", "position_embd",
  // "output_norm", "output", "attn_norm", "attn_q", "attn_k", "attn_v", "attn_qkv",
  // "attn_output", "attn_q_norm", "attn_k_norm", "attn_post_norm", "ffn_norm",
  // "ffn_post_norm", "ffn_gate", "ffn_up", "ffn_gate_up", "ffn_down", "ffn_gate_inp",
  // "ffn_gate_shexp", "ffn_up_shexp", "ffn_down_shexp", "ffn_gate_inp_shexp";
  // "" for tensors outside the family's layout (gpt_oss, ignored buffers).
  std::string role;
  bool is_bias = false;   // ".bias" rather than ".weight"
  int32_t layer = -1;     // block index, -1 for global tensors
  int32_t expert = -1;    // expert index inside the layer's MoE bank, -1 otherwise
};

struct HfSpecialToken {
  std::string kind;      // "bos", "eos", "pad", "unk", "eot" (extra end-of-generation)
  int64_t id = -1;       // -1 when the id could not be resolved from tokenizer.json
  std::string content;   // the token text, "" when only the id is known
  std::string source;    // "config.json", "generation_config.json", "tokenizer_config.json", "tokenizer.json"
};

struct HfTokenizerInfo {
  std::vector<std::string> files;  // present in the directory: tokenizer.json, tokenizer.model,
                                   // tokenizer_config.json, special_tokens_map.json, vocab.json,
                                   // merges.txt, generation_config.json, chat_template.jinja, ...
  std::string model;               // tokenizer.json model.type lowercased ("bpe", "unigram", ...);
                                   // "sentencepiece" with only tokenizer.model; "" if none
  std::string pre;                 // tokenizer.json pre_tokenizer type ("ByteLevel", "Sequence", ...)
  int64_t vocab_size = 0;          // tokenizer.json model vocab + added tokens not in it
  std::string chat_template;       // the default template text, "" when none
  std::string chat_template_source;  // "tokenizer_config.json" / "chat_template.jinja" / "chat_template.json"
  std::vector<std::string> named_chat_templates;  // names of a list-form chat_template ("tool_use", ...)
  bool add_bos_token = false;      // tokenizer_config.json add_bos_token (when given)
  bool add_bos_token_given = false;
  std::vector<HfSpecialToken> special;          // bos / eos / pad / unk
  std::vector<HfSpecialToken> end_of_generation;  // eos ids (all sources) + known terminators present
};

struct HfModel {
  std::string dir;       // the model directory (absolute)
  HfConfig config;
  HfArchitecture arch;
  std::vector<HfTensor> tensors;  // sorted by name
  std::vector<std::string> weight_files;  // absolute paths, in shard order
  HfTokenizerInfo tokenizer;
  // Keeps every file mapped while the model lives; `tensors` point into these.
  std::vector<std::shared_ptr<const safetensors::File>> files;

  const HfTensor* Find(const std::string& name) const;
  // The tensor with role/layer/expert/bias, or nullptr.
  const HfTensor* FindRole(const std::string& role, int layer = -1, int expert = -1, bool bias = false) const;
  uint64_t TotalTensorBytes() const;
};

// Ok when the runtime may run this model; otherwise FailedPrecondition with the reason
// (gpt_oss today). Generate calls this; inspect does not.
absl::Status CheckRunnable(const HfModel& m);

// f32 copy of a tensor of the model (any stored dtype ConvertToF32 handles): how
// promote_to_f32 tensors reach the kernels.
absl::StatusOr<std::vector<float>> MaterializeF32(const HfModel& m, const HfTensor& t);

}  // namespace uaii::hf
