#include "loaders/hf_family.h"

#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include "util/str_cat.h"

namespace uaii::hf {
namespace {

// ---- Denied layouts: a name fragment that only that kind of model has. -------------
struct Denied { std::string_view fragment; std::string_view what; };
constexpr Denied kDeniedNames[] = {
    {"q_a_proj", "DeepSeek/Kimi multi-head latent attention (MLA) in HF layout: use GGUF"},
    {"kv_a_proj_with_mqa", "DeepSeek/Kimi multi-head latent attention (MLA) in HF layout: use GGUF"},
    {"vision_tower", "vision tower (LLaVA-style multimodal)"},
    {"vision_model.", "vision model (multimodal)"},
    {"multi_modal_projector", "multimodal projector (LLaVA-style)"},
    {"mm_projector", "multimodal projector (LLaVA-style)"},
    {"visual.", "vision encoder (multimodal)"},
    {"audio_tower", "audio tower (multimodal)"},
    {"encoder.conv1", "Whisper audio encoder (encoder-decoder)"},
    {"encoder.block.", "T5 encoder-decoder"},
    {"decoder.block.", "T5 encoder-decoder"},
    {"shared.weight", "T5 encoder-decoder"},
    {"model.encoder.", "encoder-decoder model"},
    {"encoder.layer.", "BERT-style encoder"},
    {"embeddings.word_embeddings", "BERT-style encoder"},
    {"bert.", "BERT-style encoder"},
    {"mixer.A_log", "Mamba state-space model"},
    {"backbone.layers.", "Mamba state-space model"},
    {".A_log", "Mamba state-space model"},
    {"rwkv.", "RWKV recurrent model"},
    {"time_mix_", "RWKV recurrent model"},
    {"time_decay", "RWKV recurrent model"},
};

// ---- Quantized checkpoints. ----------------------------------------------------------
constexpr std::string_view kQuantSuffixes[] = {
    ".qweight", ".qzeros", ".scales", ".g_idx", ".weight_scale", ".weight_scale_inv", ".input_scale",
    ".SCB", ".absmax", ".quant_map", ".nested_absmax", ".nested_quant_map", ".quant_state.bitsandbytes__nf4",
    ".quant_state.bitsandbytes__fp4", ".W_q", ".meta", "_blocks", ".weight_packed", ".weight_zero_point",
};

bool EndsWith(std::string_view s, std::string_view suf) {
  return s.size() >= suf.size() && s.substr(s.size() - suf.size()) == suf;
}
bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// ---- Layout tables: suffix inside a block -> role. ----------------------------------
struct RoleRow { std::string_view suffix; std::string_view role; };

constexpr RoleRow kLlamaGlobal[] = {
    {"model.embed_tokens", "token_embd"}, {"model.norm", "output_norm"}, {"lm_head", "output"},
};
// "post_attention_layernorm" is ffn_norm unless the layer also has pre_feedforward_layernorm
// (gemma2/3 sandwich norms), where it is the post-attention norm; resolved below.
constexpr RoleRow kLlamaLayer[] = {
    {"input_layernorm", "attn_norm"},
    {"post_attention_layernorm", "post_attention_layernorm"},
    {"pre_feedforward_layernorm", "ffn_norm"},
    {"post_feedforward_layernorm", "ffn_post_norm"},
    {"self_attn.q_proj", "attn_q"},
    {"self_attn.k_proj", "attn_k"},
    {"self_attn.v_proj", "attn_v"},
    {"self_attn.o_proj", "attn_output"},
    {"self_attn.qkv_proj", "attn_qkv"},
    {"self_attn.W_pack", "attn_qkv"},
    {"self_attn.query_key_value", "attn_qkv"},
    {"attention.query_key_value", "attn_qkv"},
    {"attention.dense", "attn_output"},
    {"self_attn.q_norm", "attn_q_norm"},
    {"self_attn.k_norm", "attn_k_norm"},
    {"mlp.gate_proj", "ffn_gate"},
    {"mlp.up_proj", "ffn_up"},
    {"mlp.down_proj", "ffn_down"},
    {"mlp.gate_up_proj", "ffn_gate_up"},
    {"mlp.gate", "ffn_gate_inp"},
    {"block_sparse_moe.gate", "ffn_gate_inp"},
    {"mlp.shared_expert.gate_proj", "ffn_gate_shexp"},
    {"mlp.shared_expert.up_proj", "ffn_up_shexp"},
    {"mlp.shared_expert.down_proj", "ffn_down_shexp"},
    {"mlp.shared_expert_gate", "ffn_gate_inp_shexp"},
};
// Inside "<bank>.experts.<E>.": Mixtral's w1/w3/w2, Qwen-MoE's gate/up/down_proj.
constexpr RoleRow kExpert[] = {
    {"w1", "ffn_gate"}, {"w3", "ffn_up"}, {"w2", "ffn_down"},
    {"gate_proj", "ffn_gate"}, {"up_proj", "ffn_up"}, {"down_proj", "ffn_down"},
};
// Non-persistent buffers some exports carry; they hold no weights.
constexpr std::string_view kIgnoredLayerSuffixes[] = {
    "self_attn.rotary_emb.inv_freq", "attn.bias", "attn.masked_bias", "attention.rotary_emb.inv_freq",
};

constexpr RoleRow kGpt2Global[] = {
    {"wte", "token_embd"}, {"wpe", "position_embd"}, {"ln_f", "output_norm"}, {"lm_head", "output"},
};
constexpr RoleRow kGpt2Layer[] = {
    {"ln_1", "attn_norm"}, {"attn.c_attn", "attn_qkv"}, {"attn.c_proj", "attn_output"},
    {"ln_2", "ffn_norm"},  {"mlp.c_fc", "ffn_up"},      {"mlp.c_proj", "ffn_down"},
};

template <size_t N>
std::string_view Lookup(const RoleRow (&table)[N], std::string_view suffix) {
  for (const auto& r : table)
    if (r.suffix == suffix) return r.role;
  return {};
}

bool ParseIndex(std::string_view s, int32_t& out) {
  if (s.empty() || s.size() > 6) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// "<prefix><N>.<rest>" -> N and rest.
bool SplitLayer(std::string_view name, std::string_view prefix, int32_t& layer, std::string_view& rest) {
  if (!StartsWith(name, prefix)) return false;
  name.remove_prefix(prefix.size());
  size_t dot = name.find('.');
  if (dot == std::string_view::npos || !ParseIndex(name.substr(0, dot), layer)) return false;
  rest = name.substr(dot + 1);
  return true;
}

// Splits ".weight" / ".bias" off.
bool SplitParam(std::string_view s, std::string_view& base, bool& is_bias) {
  if (EndsWith(s, ".weight")) { base = s.substr(0, s.size() - 7); is_bias = false; return true; }
  if (EndsWith(s, ".bias")) { base = s.substr(0, s.size() - 5); is_bias = true; return true; }
  return false;
}

std::string ShapeStr(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += StrCat(i ? ", " : "", s[i]);
  return out + "]";
}

absl::Status RequireDim(int64_t v, std::string_view key) {
  if (v <= 0) return absl::InvalidArgumentError(StrCat("config.json: ", key, ": missing (required)"));
  return absl::OkStatus();
}

absl::StatusOr<TensorRole> LlamaRole(std::string_view name) {
  TensorRole r;
  std::string_view rest, base;
  if (SplitLayer(name, "model.layers.", r.layer, rest)) {
    for (auto ign : kIgnoredLayerSuffixes)
      if (rest == ign) return r;
    if (!SplitParam(rest, base, r.is_bias)) return absl::NotFoundError("");
    size_t ex = base.find(".experts.");
    if (ex != std::string_view::npos) {
      std::string_view tail = base.substr(ex + 9);
      size_t dot = tail.find('.');
      if (dot == std::string_view::npos || !ParseIndex(tail.substr(0, dot), r.expert)) return absl::NotFoundError("");
      r.role = std::string(Lookup(kExpert, tail.substr(dot + 1)));
    } else {
      r.role = std::string(Lookup(kLlamaLayer, base));
    }
  } else if (SplitParam(name, base, r.is_bias)) {
    r.role = std::string(Lookup(kLlamaGlobal, base));
  }
  if (r.role.empty()) return absl::NotFoundError("");
  return r;
}

absl::StatusOr<TensorRole> Gpt2Role(std::string_view name) {
  TensorRole r;
  if (StartsWith(name, "transformer.")) name.remove_prefix(12);
  std::string_view rest, base;
  if (SplitLayer(name, "h.", r.layer, rest)) {
    for (auto ign : kIgnoredLayerSuffixes)
      if (rest == ign) return r;
    if (!SplitParam(rest, base, r.is_bias)) return absl::NotFoundError("");
    r.role = std::string(Lookup(kGpt2Layer, base));
  } else if (SplitParam(name, base, r.is_bias)) {
    r.role = std::string(Lookup(kGpt2Global, base));
  }
  if (r.role.empty()) return absl::NotFoundError("");
  return r;
}

bool IsGpt2(std::string_view name) {
  if (StartsWith(name, "transformer.")) name.remove_prefix(12);
  int32_t layer;
  std::string_view rest;
  return SplitLayer(name, "h.", layer, rest) && StartsWith(rest, "attn.c_attn.");
}

struct ShapeCheck {
  const HfConfig& c;
  const HfArchitecture& a;
  // Expected shape of a role, or empty when not checked.
  std::vector<int64_t> Expect(const TensorRole& r) const {
    const int64_t E = c.hidden_size, hd = c.head_dim, nq = c.num_attention_heads, nkv = c.num_key_value_heads;
    const int64_t I = r.expert >= 0 && c.moe_intermediate_size > 0 ? c.moe_intermediate_size : a.n_ff;
    const int64_t Ish = c.shared_expert_intermediate_size > 0 ? c.shared_expert_intermediate_size : a.n_ff;
    const std::string& x = r.role;
    if (a.family == "gpt2") {
      if (x == "token_embd" || x == "output") return r.is_bias ? std::vector<int64_t>{} : std::vector<int64_t>{c.vocab_size, E};
      if (x == "position_embd") return {c.max_position_embeddings, E};
      if (x == "attn_norm" || x == "ffn_norm" || x == "output_norm") return {E};
      // Conv1D weights are [in, out].
      if (x == "attn_qkv") return r.is_bias ? std::vector<int64_t>{3 * E} : std::vector<int64_t>{E, 3 * E};
      if (x == "attn_output") return r.is_bias ? std::vector<int64_t>{E} : std::vector<int64_t>{E, E};
      if (x == "ffn_up") return r.is_bias ? std::vector<int64_t>{I} : std::vector<int64_t>{E, I};
      if (x == "ffn_down") return r.is_bias ? std::vector<int64_t>{E} : std::vector<int64_t>{I, E};
      return {};
    }
    auto w = [&](int64_t out, int64_t in) { return r.is_bias ? std::vector<int64_t>{out} : std::vector<int64_t>{out, in}; };
    if (x == "token_embd" || x == "output") return r.is_bias ? std::vector<int64_t>{} : std::vector<int64_t>{c.vocab_size, E};
    if (x == "attn_norm" || x == "ffn_norm" || x == "ffn_post_norm" || x == "attn_post_norm" || x == "output_norm")
      return {E};
    if (x == "attn_q") return w(nq * hd, E);
    if (x == "attn_k" || x == "attn_v") return w(nkv * hd, E);
    if (x == "attn_qkv") return w((nq + 2 * nkv) * hd, E);
    if (x == "attn_output") return w(E, nq * hd);
    if (x == "attn_q_norm" || x == "attn_k_norm") return {hd};
    if (x == "ffn_gate" || x == "ffn_up") return w(I, E);
    if (x == "ffn_down") return w(E, I);
    if (x == "ffn_gate_up") return w(2 * I, E);
    if (x == "ffn_gate_inp") return w(c.num_experts, E);
    if (x == "ffn_gate_shexp" || x == "ffn_up_shexp") return w(Ish, E);
    if (x == "ffn_down_shexp") return w(E, Ish);
    if (x == "ffn_gate_inp_shexp") return w(1, E);
    return {};
  }
};

absl::StatusOr<Detection> FinishLayout(const HfConfig& c, const std::vector<TensorDesc>& tensors, Detection d) {
  HfArchitecture& a = d.arch;
  const bool gpt2 = a.family == "gpt2";
  // Critical dimensions: fail closed naming the key.
  for (auto [v, key] : {std::pair{c.hidden_size, "hidden_size"}, {c.num_hidden_layers, "num_hidden_layers"},
                        {c.num_attention_heads, "num_attention_heads"}, {c.vocab_size, "vocab_size"},
                        {c.max_position_embeddings, "max_position_embeddings"}})
    if (auto st = RequireDim(v, key); !st.ok()) return st;
  bool moe = false;
  for (const auto& r : d.roles) moe |= r.expert >= 0;
  if (gpt2) {
    a.n_ff = c.intermediate_size > 0 ? c.intermediate_size : 4 * c.hidden_size;  // GPT2Config: n_inner None -> 4 * n_embd
  } else if (moe && c.intermediate_size <= 0 && c.moe_intermediate_size <= 0) {
    return absl::InvalidArgumentError("config.json: intermediate_size: missing (required; or moe_intermediate_size)");
  } else if (!moe) {
    if (auto st = RequireDim(c.intermediate_size, "intermediate_size"); !st.ok()) return st;
  }
  if (!gpt2) a.n_ff = c.intermediate_size;
  if (moe) {
    if (c.num_experts <= 0)
      return absl::InvalidArgumentError("config.json: num_local_experts: missing (the weights hold expert banks)");
    if (c.num_experts_per_tok <= 0)
      return absl::InvalidArgumentError("config.json: num_experts_per_tok: missing (the weights hold expert banks)");
  }

  // Index what each layer holds; resolve post_attention_layernorm.
  std::vector<std::set<std::string>> have(c.num_hidden_layers);
  std::set<std::string> global;
  std::vector<std::set<int32_t>> experts(c.num_hidden_layers);
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorRole& r = d.roles[i];
    if (r.role.empty()) continue;
    if (r.layer >= c.num_hidden_layers)
      return absl::InvalidArgumentError(StrCat("tensor ", tensors[i].name, ": layer ", r.layer,
                                               " beyond config.json num_hidden_layers ", c.num_hidden_layers));
    if (r.expert >= 0 && r.expert >= c.num_experts)
      return absl::InvalidArgumentError(StrCat("tensor ", tensors[i].name, ": expert ", r.expert,
                                               " beyond config.json num_local_experts ", c.num_experts));
    if (r.layer < 0) {
      global.insert(StrCat(r.role, r.is_bias ? ".bias" : ""));
    } else {
      have[r.layer].insert(StrCat(r.role, r.is_bias ? ".bias" : ""));
      if (r.expert >= 0) experts[r.layer].insert(r.expert);
    }
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    TensorRole& r = d.roles[i];
    if (r.role != "post_attention_layernorm") continue;
    const bool sandwich = have[r.layer].count("ffn_norm") > 0;
    r.role = sandwich ? "attn_post_norm" : "ffn_norm";
    a.sandwich_norms |= sandwich;
  }
  for (auto& h : have) {
    if (h.erase("post_attention_layernorm")) h.insert(h.count("ffn_norm") ? "attn_post_norm" : "ffn_norm");
    if (h.erase("post_attention_layernorm.bias")) h.insert(h.count("ffn_norm.bias") ? "attn_post_norm.bias" : "ffn_norm.bias");
  }

  // Required tensors, per layer.
  auto missing = [&](int64_t layer, std::string_view what) {
    return absl::InvalidArgumentError(StrCat("layer ", layer, ": missing ", what, " (family ", a.family, ")"));
  };
  if (!global.count("token_embd")) return absl::InvalidArgumentError(StrCat("missing token embedding (family ", a.family, ")"));
  if (!global.count("output_norm")) return absl::InvalidArgumentError(StrCat("missing final norm (family ", a.family, ")"));
  if (gpt2 && !global.count("position_embd")) return absl::InvalidArgumentError("missing wpe.weight (GPT-2 learned positions)");
  a.tied_embeddings = !global.count("output");
  if (a.tied_embeddings && c.tie_word_embeddings_given && !c.tie_word_embeddings)
    return absl::InvalidArgumentError("missing lm_head.weight while config.json tie_word_embeddings is false");
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const auto& h = have[l];
    if (!h.count("attn_norm")) return missing(l, "the attention norm");
    if (!h.count("attn_output")) return missing(l, "the attention output projection");
    const bool fused = h.count("attn_qkv") > 0;
    if (!fused && !(h.count("attn_q") && h.count("attn_k") && h.count("attn_v")))
      return missing(l, "q/k/v projections");
    if (!h.count("ffn_norm")) return missing(l, "the FFN norm");
    if (h.count("ffn_gate_inp")) {
      if (experts[l].size() != static_cast<size_t>(c.num_experts))
        return missing(l, StrCat("experts (found ", experts[l].size(), " of num_local_experts ", c.num_experts, ")"));
    } else if (!h.count("ffn_down") || !(h.count("ffn_up") || h.count("ffn_gate_up"))) {
      return missing(l, "FFN projections");
    } else if (!gpt2 && !h.count("ffn_gate") && !h.count("ffn_gate_up")) {
      return missing(l, "the FFN gate projection (non-gated MLPs are not part of the llama family)");
    }
  }
  const auto& h0 = have[0];
  a.qkv = gpt2 ? QkvLayout::kGpt2Conv1D : !h0.count("attn_qkv") ? QkvLayout::kSeparate : QkvLayout::kConcat;
  if (!gpt2 && h0.count("attn_qkv")) {
    for (size_t i = 0; i < tensors.size(); ++i)
      if (d.roles[i].role == "attn_qkv" && tensors[i].name.find("query_key_value") != std::string::npos)
        a.qkv = QkvLayout::kGroupedHeads;
  }
  a.ffn = gpt2 ? FfnKind::kMlp : h0.count("ffn_gate_inp") ? FfnKind::kMoe : h0.count("ffn_gate_up") ? FfnKind::kGatedFused : FfnKind::kGated;
  a.qkv_bias = h0.count("attn_q.bias") || h0.count("attn_qkv.bias");
  a.o_bias = h0.count("attn_output.bias");
  a.ffn_bias = h0.count("ffn_down.bias");
  a.qk_norm = h0.count("attn_q_norm") && h0.count("attn_k_norm");
  a.norm = gpt2 ? NormKind::kLayerNorm : NormKind::kRms;
  a.learned_positions = gpt2;
  a.rope = !gpt2;
  a.rotary_dims = gpt2 ? 0 : c.RotaryDims();

  // Shapes against config.json.
  ShapeCheck sc{c, a};
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (d.roles[i].role.empty()) continue;
    auto want = sc.Expect(d.roles[i]);
    if (!want.empty() && want != tensors[i].shape)
      return absl::InvalidArgumentError(StrCat("tensor ", tensors[i].name, ": shape ", ShapeStr(tensors[i].shape),
                                               ", config.json implies ", ShapeStr(want), " (", d.roles[i].role, ")"));
  }
  return d;
}

}  // namespace

absl::Status CheckNotQuantized(const HfConfig& cfg, const std::vector<TensorDesc>& tensors) {
  if (!cfg.quant_method.empty())
    return absl::UnimplementedError(StrCat("quantized checkpoint (config.json quantization_config.quant_method \"",
                                           cfg.quant_method, "\") is not supported: ", kConvertAdvice));
  for (const auto& t : tensors) {
    if (safetensors::IsLowPrecisionFloat(t.dtype))
      return absl::UnimplementedError(StrCat("quantized checkpoint (tensor ", t.name, " has dtype ",
                                             safetensors::DtypeName(t.dtype), ") is not supported: ", kConvertAdvice));
    for (auto suf : kQuantSuffixes)
      if (EndsWith(t.name, suf))
        return absl::UnimplementedError(StrCat("quantized checkpoint (tensor ", t.name,
                                               " is a quantization parameter) is not supported: ", kConvertAdvice));
  }
  return absl::OkStatus();
}

absl::StatusOr<Detection> DetectFamily(const HfConfig& cfg, const std::vector<TensorDesc>& tensors) {
  if (tensors.empty()) return absl::InvalidArgumentError("no tensors in the safetensors files");
  // 1. Denied layouts, from the weights first, then from config.json.
  for (const auto& t : tensors)
    for (const auto& d : kDeniedNames)
      if (t.name.find(d.fragment) != std::string::npos)
        return absl::UnimplementedError(StrCat("denied: ", d.what, " (tensor ", t.name, ")"));
  if (cfg.is_encoder_decoder) return absl::UnimplementedError("denied: encoder-decoder model (config.json is_encoder_decoder)");
  for (const auto& s : cfg.sub_configs) {
    std::string_view what = s.find("vision") != std::string::npos ? "vision tower (multimodal)"
                            : s.find("audio") != std::string::npos || s.find("speech") != std::string::npos
                                ? "audio tower (multimodal)"
                            : s == "text_config" ? "multimodal wrapper (text_config)"
                                                 : "encoder-decoder model";
    return absl::UnimplementedError(StrCat("denied: ", what, " (config.json ", s, ")"));
  }

  Detection det;
  det.arch.variant = cfg.model_type;
  det.roles.resize(tensors.size());
  // 2. gpt-oss (by its router tensors): named so that inspect can describe it; the
  // runtime refuses it.
  bool gpt_oss = false;
  for (const auto& t : tensors)
    gpt_oss |= t.name.find(".mlp.router.") != std::string::npos && t.name.find("model.layers.") == 0;
  if (gpt_oss) {
    det.arch.family = "gpt_oss";
    det.arch.runnable = false;
    det.arch.not_runnable_reason =
        "gpt-oss (MXFP4 experts, attention sinks) in Hugging Face layout is not supported by the runtime: use GGUF";
    return det;
  }
  // 3. Quantized checkpoints.
  if (auto st = CheckNotQuantized(cfg, tensors); !st.ok()) return st;

  // 4. The family from the names.
  bool any_gpt2 = false, any_llama = false;
  for (const auto& t : tensors) {
    any_gpt2 |= IsGpt2(t.name);
    any_llama |= StartsWith(t.name, "model.layers.");
  }
  if (!any_gpt2 && !any_llama) {
    std::string sample;
    for (size_t i = 0; i < tensors.size() && i < 3; ++i) sample += StrCat(i ? ", " : "", tensors[i].name);
    return absl::UnimplementedError(StrCat("unrecognized weight layout: no model.layers.N.* (llama family) or ",
                                           "h.N.attn.c_attn (gpt2) tensors; first tensors: ", sample));
  }
  det.arch.family = any_gpt2 ? "gpt2" : "llama";
  for (size_t i = 0; i < tensors.size(); ++i) {
    auto r = any_gpt2 ? Gpt2Role(tensors[i].name) : LlamaRole(tensors[i].name);
    if (!r.ok())
      return absl::UnimplementedError(StrCat("tensor ", tensors[i].name, ": not part of the ", det.arch.family,
                                             " layout (uaii would ignore it and compute something else)"));
    det.roles[i] = *std::move(r);
    // Weights the runtime reads must be dense floats (I8/U8 are promoted).
    if (!det.roles[i].role.empty()) {
      auto dt = tensors[i].dtype;
      using safetensors::Dtype;
      if (dt != Dtype::F32 && dt != Dtype::F16 && dt != Dtype::BF16 && dt != Dtype::I8 && dt != Dtype::U8)
        return absl::UnimplementedError(StrCat("tensor ", tensors[i].name, ": dtype ", safetensors::DtypeName(dt),
                                               " is not supported for weights (F32, F16, BF16, I8, U8)"));
    }
  }
  return FinishLayout(cfg, tensors, std::move(det));
}

}  // namespace uaii::hf
