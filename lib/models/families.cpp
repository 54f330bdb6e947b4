#include "models/families.h"

#include "util/str_cat.h"

namespace uaii::models {
namespace {

constexpr Family kFamilies[] = {
    // arch       builder      what it adds
    {"llama",   BuildLlama,  "RMSNorm, RoPE norm (+rope_freqs), GQA, SwiGLU; optional output.weight "
                             "(Mistral GGUFs use this architecture too)"},
    {"gemma3",  BuildGemma3, "sqrt(n_embd) embed scale, QK-norm, post-norms, GeGLU, RoPE neox, "
                             "5 sliding : 1 global layers (local rope base 10000), tied head"},
    {"qwen2",    BuildQwen2,   "RoPE neox, Q/K/V biases (by presence), optional tied head"},
    {"qwen3",    BuildQwen3,   "RoPE neox, per-head Q/K RMSNorm"},
    {"gemma",    BuildGemma,   "sqrt(n_embd) embed scale, RoPE neox, Q pre-scale, GeGLU, tied head"},
    {"gemma2",   BuildGemma2,  "gemma + post-norms, attention and final logit soft-caps, "
                               "sliding window on even layers"},
    {"phi3",     BuildPhi3,    "fused QKV, fused gate|up SwiGLU, RoPE neox with LongRoPE factors, Q pre-scale"},
    {"gpt2",     BuildGpt2,    "learned positions, LayerNorm + biases, fused QKV, GELU MLP, no RoPE"},
    {"smollm3",  BuildSmolLM3, "llama without RoPE on every 4th layer"},
    {"granite",  BuildGranite, "llama + embedding, residual, attention and logit scales"},
    {"olmo2",    BuildOlmo2,   "post-norms only, whole-projection Q/K RMSNorm, RoPE neox"},
    {"ernie4_5", BuildErnie45, "llama with attention.key_length head size (may exceed n_embd / n_head)"},
    {"qwen2moe", BuildQwen2Moe, "qwen2 + softmax top-k experts (weights not renormalised), shared expert with sigmoid gate"},
    {"qwen3moe", BuildQwen3Moe, "qwen3 + softmax top-k experts, renormalised weights"},
    {"granitemoe", BuildGraniteMoe, "granite + softmax top-k experts, renormalised weights, optional ungated "
                                    "shared expert (expert_shared_feed_forward_length)"},
};

}  // namespace

const Family* FindFamily(std::string_view arch) {
  for (const auto& f : kFamilies)
    if (f.arch == arch) return &f;
  return nullptr;
}

absl::StatusOr<ir::Graph> BuildGraph(const ModelSpec& spec) {
  const Family* f = FindFamily(spec.arch);
  if (!f) {
    std::string known;
    for (const auto& x : kFamilies) known += StrCat(known.empty() ? "" : ", ", x.arch);
    return absl::UnimplementedError(
        StrCat(spec.file, ": unsupported GGUF architecture ", spec.arch, "; supported: ", known));
  }
  return f->build(spec);
}

}  // namespace uaii::models
