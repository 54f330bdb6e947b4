#include "models/families.h"

#include <set>

#include "models/graph_builder.h"
#include "util/str_cat.h"

namespace uaii::models {
namespace {

constexpr Family kFamilies[] = {
    // arch       builder      what it adds     [HF model_types, HF activation, config.json reading]
    {"llama",   BuildLlama,  "RMSNorm, RoPE norm (+rope_freqs), GQA, SwiGLU, optional Q/K/V/output/FFN biases "
                             "and output.weight (Mistral GGUFs use this architecture too)",
     "llama mistral mixtral", "silu", ReadLlamaHf},
    {"gemma3",  BuildGemma3, "sqrt(n_embd) embed scale, QK-norm, post-norms, GeGLU, RoPE neox, sliding layers "
                             "by attention.sliding_window_pattern (default 5 : 1) with rope.freq_base_swa, tied head",
     "gemma3_text", "gelu_tanh", ReadGemma3Hf},
    {"qwen2",    BuildQwen2,   "RoPE neox, Q/K/V biases (by presence), optional tied head",
     "qwen2", "silu", ReadQwenHf},
    {"qwen3",    BuildQwen3,   "RoPE neox, per-head Q/K RMSNorm",
     "qwen3", "silu", ReadQwenHf},
    {"gemma",    BuildGemma,   "sqrt(n_embd) embed scale, RoPE neox, Q pre-scale, GeGLU, tied head",
     "gemma", "gelu_tanh", ReadGemmaHf},
    {"gemma2",   BuildGemma2,  "gemma + post-norms, attention and final logit soft-caps, "
                               "sliding layers by attention.sliding_window_pattern (default even layers)",
     "gemma2", "gelu_tanh", ReadGemma2Hf},
    {"gemma4",   BuildGemma4,  "gemma3 + per-type head sizes and RoPE (proportional on full layers), shared-KV "
                               "layers, per-layer embeddings, weightless V norm, layer output scale, final soft-cap"},
    {"gemma4-assistant", BuildGemma4Assistant, "Gemma 4's query-only drafter: loads only as a gemma4 model's draft"},
    {"phi3",     BuildPhi3,    "fused QKV, fused gate|up SwiGLU, RoPE neox with LongRoPE factors, Q pre-scale",
     "phi3", "silu", ReadPhi3Hf},
    {"gpt2",     BuildGpt2,    "learned positions, LayerNorm + biases, fused QKV, GELU MLP, no RoPE",
     "gpt2", "gelu_tanh"},
    {"smollm3",  BuildSmolLM3, "llama without RoPE on every 4th layer"},
    {"granite",  BuildGranite, "llama + embedding, residual, attention and logit scales"},
    {"olmo2",    BuildOlmo2,   "post-norms only, whole-projection Q/K RMSNorm, RoPE neox"},
    {"ernie4_5", BuildErnie45, "llama with attention.key_length head size (may exceed n_embd / n_head)"},
    {"qwen2moe", BuildQwen2Moe, "qwen2 + softmax top-k experts (weights not renormalised), shared expert with sigmoid gate",
     "qwen2_moe", "silu", ReadQwenMoeHf},
    {"qwen3moe", BuildQwen3Moe, "qwen3 + softmax top-k experts, renormalised weights",
     "qwen3_moe", "silu", ReadQwenMoeHf},
    {"granitemoe", BuildGraniteMoe, "granite + softmax top-k experts, renormalised weights, optional ungated "
                                    "shared expert (expert_shared_feed_forward_length)"},
};

// Hugging Face model_types that are not decoders uaii builds (the loader refuses most of
// them by their weight names already; these words name the rest).
struct RefusedType { std::string_view model_type, what; };
constexpr RefusedType kRefusedHfTypes[] = {
    {"t5", "T5 encoder-decoder"}, {"mt5", "T5 encoder-decoder"}, {"bart", "encoder-decoder model"},
    {"whisper", "Whisper audio encoder (encoder-decoder)"}, {"bert", "BERT-style encoder"},
    {"roberta", "BERT-style encoder"}, {"mamba", "Mamba state-space model"},
    {"mamba2", "Mamba state-space model"}, {"rwkv", "RWKV recurrent model"},
    {"deepseek_v2", "DeepSeek multi-head latent attention (MLA) in HF layout: use GGUF"},
    {"deepseek_v3", "DeepSeek multi-head latent attention (MLA) in HF layout: use GGUF"},
    {"kimi_k2", "Kimi multi-head latent attention (MLA) in HF layout: use GGUF"},
    {"gpt_oss", "gpt-oss (MXFP4 experts, attention sinks) in Hugging Face layout: use GGUF"},
};

}  // namespace

std::string_view RefusedHfModelType(std::string_view model_type) {
  for (const auto& r : kRefusedHfTypes)
    if (r.model_type == model_type) return r.what;
  return {};
}

const Family* FindFamily(std::string_view arch) {
  for (const auto& f : kFamilies)
    if (f.arch == arch) return &f;
  return nullptr;
}

const Family* FindHfFamily(std::string_view model_type) {
  if (model_type.empty()) return nullptr;
  for (const auto& f : kFamilies)
    for (std::string_view rest = f.hf_model_types; !rest.empty();) {
      const size_t sp = rest.find(' ');
      if (rest.substr(0, sp) == model_type) return &f;
      rest = sp == std::string_view::npos ? std::string_view() : rest.substr(sp + 1);
    }
  return nullptr;
}

std::string SupportedHfModelTypes() {
  std::string out;
  for (const auto& f : kFamilies)
    if (!f.hf_model_types.empty()) out += StrCat(out.empty() ? "" : " ", f.hf_model_types);
  return out;
}

absl::StatusOr<ir::Graph> BuildGraph(const ModelSpec& spec) {
  const Family* f = FindFamily(spec.arch);
  if (!f) {
    std::string known;
    for (const auto& x : kFamilies) known += StrCat(known.empty() ? "" : ", ", x.arch);
    return absl::UnimplementedError(
        StrCat(spec.file, ": unsupported ", spec.source == "gguf" ? "GGUF " : "", "architecture ", spec.arch,
               "; supported: ", known));
  }
  auto g = f->build(spec);
  if (!g.ok()) return g;
  if (auto st = CheckEveryTensorRead(spec, *g); !st.ok()) return st;
  return g;
}

absl::Status CheckEveryTensorRead(const ModelSpec& spec, const ir::Graph& g) {
  // As llama.cpp's loader ("wrong number of tensors"): a tensor the graph does not read
  // would be silently ignored, and its model computed wrongly, so the load fails.
  std::set<std::string> read;
  for (const auto& t : g.tensors)
    if (t.weight) read.insert(t.name);
  for (const auto& [key, why] : g.metadata)  // optional in llama.cpp, unused here
    if (key.starts_with(kUnusedTensorMeta)) read.insert(key.substr(sizeof(kUnusedTensorMeta) - 1));
  for (const auto& [name, t] : spec.tensors) {
    if (read.count(name)) continue;
    // llama.cpp's generic pass takes a `.scale` / `.input_scale` beside any projection:
    // NVFP4's per-tensor sidecars, for a codec uaii does not have.
    if (name.ends_with(".input_scale") || (name.ends_with(".scale") && spec.Find(name.substr(0, name.size() - 6) + ".weight")))
      return absl::UnimplementedError(StrCat(spec.file, ": tensor ", name, " is a quantization scale sidecar (NVFP4 "
                                             "files carry them); uaii does not support that format yet"));
    return absl::UnimplementedError(StrCat(spec.file, ": tensor ", name, " is not read by uaii's ", spec.arch,
                                           " graph (an unsupported variant of the architecture)"));
  }
  return absl::OkStatus();
}

}  // namespace uaii::models
