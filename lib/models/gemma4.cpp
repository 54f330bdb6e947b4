// Gemma 4 (llama.cpp src/models/gemma4.cpp), read from the file as llama.cpp reads it:
//   - sliding and full layers (attention.sliding_window_pattern, a bool per layer) with
//     their own head sizes (attention.key_length_swa / key_length), rotary dims
//     (rope.dimension_count_swa / dimension_count) and RoPE bases (rope.freq_base_swa,
//     default 10000, scale 1 / rope.freq_base); the full layers rotate with the file's
//     rope_freqs factors (proportional RoPE); head counts and feed-forward widths may
//     be per-layer arrays;
//   - Q and K RMSNorm per head, V normed without a weight; a missing attn_v reuses the
//     K projection (before its norm); attention scale 1 (no Q pre-scale);
//   - shared K/V: the last attention.shared_kv_layers layers store nothing and attend
//     over an earlier layer's cache: the last sliding layer that has one
//     (n_kv - 2) when they slide, the last full one (n_kv - 1) otherwise, as
//     llama.cpp's layer_reuse_cb (n_kv = layers with their own cache); their own
//     attn_k / attn_v / attn_k_norm, when the file keeps them, are accepted unread;
//   - post-attention and post-FFN norms, GeGLU (tanh GELU);
//   - per-layer embeddings (embedding_length_per_layer_input P > 0): a row of
//     per_layer_token_embd [n_vocab, n_layer * P] per token (scaled by sqrt(P)) plus
//     the scaled embeddings projected by per_layer_model_proj (scaled by 1/sqrt(n_embd),
//     RMSNorm'd per layer by per_layer_proj_norm), the sum scaled by 1/sqrt(2); layer il
//     adds proj(gelu(inp_gate x) * its slice), RMSNorm'd by blk.il.post_norm. The table
//     is read by row, so under a budget it streams (storage/plan.cpp: never pinned);
//   - blk.il.layer_output_scale (one element) multiplies the layer's output;
//   - final_logit_softcapping (llama.cpp's default 30 when the key is absent);
//   - mixture-of-experts layers (26B-A4B: where blk.il.ffn_gate_inp exists): the dense
//     FFN as a shared expert (ffn_norm in, post_ffw_norm_1 out) plus the routed experts
//     (pre_ffw_norm_2 in, post_ffw_norm_2 out; GELU, softmax top-k renormalised, each
//     expert's output times ffn_down_exps.scale), the router reading its own input
//     rms_norm(x) / sqrt(n_embd) * ffn_gate_inp.scale; their sum goes to post_ffw_norm.
//     Fused gate|up expert banks (ffn_gate_up_exps [n_expert, 2F, E], gate rows then
//     up) are read as llama.cpp reads them, first, separate banks otherwise.
#include <cmath>

#include "models/gemma4.h"

#include "models/decoder.h"
#include "models/families.h"
#include "models/graph_builder.h"
#include "util/str_cat.h"

namespace uaii::models {
namespace {

// A per-layer integer: the key's array entry, or its scalar for every layer.
absl::StatusOr<std::vector<int64_t>> PerLayer(const ModelSpec& s, const std::string& key, int64_t dflt) {
  if (s.hparams.IsArray(key)) {
    auto arr = s.hparams.IntArray(key);
    if (!arr.ok()) return arr.status();
    if (static_cast<int64_t>((*arr)->size()) != s.n_layer)
      return absl::InvalidArgumentError(
          StrCat(s.hparams.origin(), key, " has ", (*arr)->size(), " entries for ", s.n_layer, " layers"));
    return **arr;
  }
  auto v = s.hparams.Int(key, dflt);
  if (!v.ok()) return v.status();
  return std::vector<int64_t>(static_cast<size_t>(s.n_layer), *v);
}

}  // namespace

absl::StatusOr<std::vector<Gemma4Layer>> ReadGemma4Layers(const ModelSpec& s) {
  const std::string pattern = "attention.sliding_window_pattern";
  if (!s.hparams.IsArray(pattern))
    return absl::InvalidArgumentError(StrCat(s.hparams.origin(), pattern, " is missing or not a per-layer array"));
  auto swa = SwaPattern(s, 0, false);
  if (!swa.ok()) return swa.status();
  auto heads = PerLayer(s, "attention.head_count", s.n_head);
  if (!heads.ok()) return heads.status();
  auto kv_heads = PerLayer(s, "attention.head_count_kv", -1);
  if (!kv_heads.ok()) return kv_heads.status();
  auto ff = PerLayer(s, "feed_forward_length", s.n_ff);
  if (!ff.ok()) return ff.status();
  // llama.cpp: key_length defaults to n_embd / n_head, value_length likewise; the
  // sliding layers' sizes default to the full layers'.
  auto full_k = s.hparams.Int("attention.key_length", s.n_embd / s.n_head);
  auto full_v = s.hparams.Int("attention.value_length", s.n_embd / s.n_head);
  if (!full_k.ok()) return full_k.status();
  if (!full_v.ok()) return full_v.status();
  auto swa_k = s.hparams.Int("attention.key_length_swa", *full_k);
  auto swa_v = s.hparams.Int("attention.value_length_swa", *full_v);
  if (!swa_k.ok()) return swa_k.status();
  if (!swa_v.ok()) return swa_v.status();
  if (*full_k != *full_v || *swa_k != *swa_v)
    return absl::InvalidArgumentError(StrCat(s.hparams.origin(), "attention key and value lengths differ (full ",
                                             *full_k, "/", *full_v, ", sliding ", *swa_k, "/", *swa_v,
                                             "): Gemma 4 requires them equal"));
  auto full_rot = s.hparams.Int("rope.dimension_count", *full_k);
  if (!full_rot.ok()) return full_rot.status();
  auto swa_rot = s.hparams.Int("rope.dimension_count_swa", *full_rot);
  if (!swa_rot.ok()) return swa_rot.status();
  auto shared = s.hparams.Int("attention.shared_kv_layers", 0);
  if (!shared.ok()) return shared.status();
  const int64_t n_kv = s.n_layer - *shared;
  if (*shared < 0 || n_kv < 1 || (*shared > 0 && n_kv < 2))
    return absl::InvalidArgumentError(StrCat(s.hparams.origin(), "attention.shared_kv_layers = ", *shared, " for ",
                                             s.n_layer, " layers leaves fewer than two layers with a KV cache"));
  std::vector<Gemma4Layer> layers(static_cast<size_t>(s.n_layer));
  for (int il = 0; il < s.n_layer; ++il) {
    Gemma4Layer& l = layers[il];
    l.swa = (*swa)[il];
    l.n_head = (*heads)[il];
    l.n_head_kv = (*kv_heads)[il] < 0 ? l.n_head : (*kv_heads)[il];
    l.head_dim = l.swa ? *swa_k : *full_k;
    l.n_rot = l.swa ? *swa_rot : *full_rot;
    l.n_ff = (*ff)[il];
    l.kv_layer = il < n_kv ? il : static_cast<int>(n_kv - (l.swa ? 2 : 1));
    if (l.n_head <= 0 || l.n_ff <= 0 || l.head_dim <= 0 || l.n_rot <= 0 || l.n_rot > l.head_dim ||
        (il < n_kv && (l.n_head_kv <= 0 || l.n_head % l.n_head_kv != 0)))
      return absl::InvalidArgumentError(StrCat(s.hparams.origin(), "layer ", il, ": ", l.n_head, " heads of ",
                                               l.head_dim, " (", l.n_rot, " rotated) over ", l.n_head_kv,
                                               " KV heads, feed-forward ", l.n_ff, " is not a valid shape"));
    if (il >= n_kv && layers[l.kv_layer].swa != l.swa)
      return absl::InvalidArgumentError(StrCat(s.hparams.origin(), "shared-KV layer ", il, " (",
                                               l.swa ? "sliding" : "full", ") would read layer ", l.kv_layer,
                                               "'s cache, which is ", layers[l.kv_layer].swa ? "sliding" : "full"));
  }
  return layers;
}

namespace {

class Gemma4Graph {
 public:
  Gemma4Graph(const ModelSpec& s, std::vector<Gemma4Layer> layers) : s_(s), b_(s), layers_(std::move(layers)) {}

  absl::StatusOr<ir::Graph> Build() {
    auto window = s_.hparams.Int("attention.sliding_window", 0);
    if (!window.ok()) return window.status();
    window_ = *window;
    auto swa_base = s_.hparams.Float("rope.freq_base_swa", 10000.0);
    if (!swa_base.ok()) return swa_base.status();
    swa_base_ = *swa_base;
    auto cap = s_.hparams.Float("final_logit_softcapping", 30.0);
    if (!cap.ok()) return cap.status();
    auto per_layer = s_.hparams.Int("embedding_length_per_layer_input", 0);
    if (!per_layer.ok()) return per_layer.status();
    ple_ = *per_layer;
    if (ple_ < 0)
      return absl::InvalidArgumentError(StrCat(s_.hparams.origin(), "embedding_length_per_layer_input = ", ple_));
    for (int il = 0; il < s_.n_layer; ++il) {
      if (s_.Find(P(il, "ffn_gate_inp.weight")) &&
          (s_.n_expert <= 0 || s_.n_expert_used <= 0 || s_.n_expert_used > s_.n_expert || s_.n_ff_exp <= 0))
        return absl::InvalidArgumentError(StrCat(s_.hparams.origin(), "expert_count ", s_.n_expert,
                                                 ", expert_used_count ", s_.n_expert_used,
                                                 ", expert_feed_forward_length ", s_.n_ff_exp,
                                                 " do not describe the experts of layer ", il));
    }

    const std::string tokens = b_.Input("tokens", TensorType::I32, {ir::kDimTokens});
    positions_ = b_.Input("positions", TensorType::I32, {ir::kDimTokens});
    std::string x = b_.Op("embed", {b_.Weight("token_embd.weight", {s_.n_vocab, s_.n_embd}), tokens}, "inp_embd");
    x = b_.Op("scale", {x}, "inp_scaled", {{"scale", static_cast<double>(std::sqrt(static_cast<float>(s_.n_embd)))}});
    if (ple_ > 0) PerLayerInputs(tokens, x);
    for (int il = 0; il < s_.n_layer; ++il) x = Layer(il, x);
    std::string rows = b_.Op("output_rows", {x}, "result_rows");
    // The head's input is also the graph's "hidden" output: the post-final-norm state
    // a drafter (the gemma4 assistant, an MTP head) continues from.
    std::string h = Norm(rows, "output_norm", "hidden", s_.n_embd);
    std::string head = b_.OptionalWeight("output.weight", {s_.n_vocab, s_.n_embd});
    if (head.empty()) head = b_.Weight("token_embd.weight");
    h = b_.Op("matmul", {h, head}, *cap > 0 ? "logits_raw" : "logits");
    if (*cap > 0) b_.Op("softcap", {h}, "logits", {{"cap", *cap}});
    b_.Meta("architecture", s_.arch);
    return b_.Finish({"logits", "hidden"});
  }

 private:
  static std::string P(int il, const std::string& n) { return StrCat("blk.", il, ".", n); }

  std::string Norm(const std::string& x, const std::string& name, const std::string& out, int64_t n) {
    return b_.Op("rms_norm", {x, b_.Weight(name + ".weight", {n})}, out, {{"eps", s_.rms_eps}});
  }
  std::string Linear(const std::string& x, const std::string& w, int64_t n_out, int64_t n_in, const std::string& out) {
    return b_.Op("matmul", {x, b_.Weight(w, {n_out, n_in})}, out);
  }
  std::string Heads(const std::string& x, int64_t heads, int64_t dim, const std::string& out) {
    return b_.Op("reshape", {x}, out, {{"shape", std::vector<int64_t>{ir::kDimTokens, heads, dim}}});
  }

  // The [T, n_layer * P] per-layer inputs (llama.cpp's build_inp_per_layer and
  // project_per_layer_inputs), kept as per_layer_inp_.
  void PerLayerInputs(const std::string& tokens, const std::string& x) {
    const int64_t L = s_.n_layer, LP = L * ple_;
    std::string tok = b_.Op("embed", {b_.Weight("per_layer_token_embd.weight", {s_.n_vocab, LP}), tokens},
                            "inp_per_layer_selected_raw");
    tok = b_.Op("scale", {tok}, "inp_per_layer_selected",
                {{"scale", static_cast<double>(std::sqrt(static_cast<float>(ple_)))}});
    std::string proj = Linear(x, "per_layer_model_proj.weight", LP, s_.n_embd, "per_layer_proj_raw");
    proj = b_.Op("scale", {proj}, "per_layer_proj_scaled",
                 {{"scale", static_cast<double>(1.0f / std::sqrt(static_cast<float>(s_.n_embd)))}});
    proj = Heads(proj, L, ple_, "per_layer_proj_layers");
    proj = Norm(proj, "per_layer_proj_norm", "per_layer_proj_normed", ple_);
    proj = b_.Op("reshape", {proj}, "per_layer_proj", {{"shape", std::vector<int64_t>{ir::kDimTokens, LP}}});
    std::string sum = b_.Op("add", {proj, tok}, "inp_per_layer_sum");
    per_layer_inp_ = b_.Op("scale", {sum}, "inp_per_layer",
                           {{"scale", static_cast<double>(1.0f / std::sqrt(2.0f))}});
  }

  std::string Attention(int il, const std::string& h) {
    const Gemma4Layer& l = layers_[il];
    const int64_t E = s_.n_embd, nq = l.n_head * l.head_dim, nk = l.n_head_kv * l.head_dim;
    const bool owns_kv = l.kv_layer == il;
    std::string q, k, v;
    if (s_.Find(P(il, "attn_qkv.weight"))) {
      std::string qkv = Linear(h, P(il, "attn_qkv.weight"), nq + 2 * nk, E, P(il, "qkv"));
      q = b_.Op("slice", {qkv}, P(il, "q"), {{"begin", int64_t{0}}, {"size", nq}});
      if (owns_kv) {
        k = b_.Op("slice", {qkv}, P(il, "k"), {{"begin", nq}, {"size", nk}});
        v = b_.Op("slice", {qkv}, P(il, "v"), {{"begin", nq + nk}, {"size", nk}});
      }
    } else {
      q = Linear(h, P(il, "attn_q.weight"), nq, E, P(il, "q"));
      if (owns_kv) {
        k = Linear(h, P(il, "attn_k.weight"), nk, E, P(il, "k"));
        // No V projection: V is the K projection (use_alternative_attention).
        v = s_.Find(P(il, "attn_v.weight")) ? Linear(h, P(il, "attn_v.weight"), nk, E, P(il, "v")) : k;
      }
    }
    if (!owns_kv) {
      // A shared-KV layer attends over layer kv_layer's cache: llama.cpp creates its own
      // attn_k / attn_k_norm (and the always-optional attn_v) as TENSOR_NOT_REQUIRED and
      // never reads them. Checkpoints converted from Hugging Face keep k_proj / v_proj on
      // every layer, so they are accepted here, shape-checked, and not loaded.
      const std::string why = StrCat("shared-KV layer ", il, " reads layer ", l.kv_layer, "'s cache");
      b_.Unused(P(il, "attn_k.weight"), {nk, E}, why);
      b_.Unused(P(il, "attn_v.weight"), {nk, E}, why);
      b_.Unused(P(il, "attn_k_norm.weight"), {l.head_dim}, why);
    }
    auto rope = l.swa ? RopeAttrs(s_, "neox", swa_base_, 1.0) : RopeAttrs(s_, "neox", s_.rope_freq_base, s_.rope_freq_scale);
    rope["n_dims"] = l.n_rot;
    // Proportional RoPE: the full layers' frequencies divided by rope_freqs (required
    // by llama.cpp's loader once a full layer exists).
    const std::string factors = l.swa ? "" : b_.Weight("rope_freqs.weight", {l.n_rot / 2});
    q = Heads(q, l.n_head, l.head_dim, P(il, "q_heads"));
    q = Norm(q, P(il, "attn_q_norm"), P(il, "q_normed"), l.head_dim);
    q = b_.Op("rope", {q, positions_, factors}, P(il, "q_rope"), rope);
    std::map<std::string, ir::AttrValue> attn = {{"layer", int64_t{l.kv_layer}}, {"scale", 1.0}};
    if (l.swa && window_ > 0) attn["window"] = window_;
    std::vector<std::string> in = {q};
    if (owns_kv) {
      k = Heads(k, l.n_head_kv, l.head_dim, P(il, "k_heads"));
      v = Heads(v, l.n_head_kv, l.head_dim, P(il, "v_heads"));
      k = Norm(k, P(il, "attn_k_norm"), P(il, "k_normed"), l.head_dim);
      v = b_.Op("rms_norm", {v}, P(il, "v_normed"), {{"eps", s_.rms_eps}});  // the weightless value norm
      k = b_.Op("rope", {k, positions_, factors}, P(il, "k_rope"), rope);
      in = {q, k, v};
    }
    std::string o = b_.Op("attention", in, P(il, "attn"), attn);
    return Linear(o, P(il, "attn_output.weight"), E, nq, P(il, "attn_out"));
  }

  // The routed experts of an MoE layer on the attention block's output.
  std::string Experts(int il, const std::string& attn_out) {
    const int64_t E = s_.n_embd, N = s_.n_expert, F = s_.n_ff_exp;
    std::string in = Norm(attn_out, P(il, "pre_ffw_norm_2"), P(il, "ffn_norm_2"), E);
    std::string r = b_.Op("rms_norm", {attn_out}, P(il, "router_normed"), {{"eps", s_.rms_eps}});
    r = b_.Op("scale", {r}, P(il, "router_scaled"),
              {{"scale", static_cast<double>(1.0f / std::sqrt(static_cast<float>(E)))}});
    r = b_.Op("mul", {r, b_.Weight(P(il, "ffn_gate_inp.scale"), {E})}, P(il, "router_in"));
    std::map<std::string, ir::AttrValue> attrs = {{"n_expert_used", s_.n_expert_used},
                                                  {"gating", std::string("softmax")},
                                                  {"norm_w", int64_t{1}},
                                                  {"act", std::string("gelu")}};
    // llama.cpp tries the fused gate|up bank first, separate gate and up banks otherwise.
    std::string up, gate;
    if (s_.Find(P(il, "ffn_gate_up_exps.weight"))) {
      up = b_.Weight(P(il, "ffn_gate_up_exps.weight"), {N, 2 * F, E});
      attrs["fused_gate_up"] = int64_t{1};
    } else {
      up = b_.Weight(P(il, "ffn_up_exps.weight"), {N, F, E});
      gate = b_.Weight(P(il, "ffn_gate_exps.weight"), {N, F, E});
    }
    std::string moe = b_.Op("moe_ffn",
                            {in, b_.Weight(P(il, "ffn_gate_inp.weight"), {N, E}), up, gate,
                             b_.Weight(P(il, "ffn_down_exps.weight"), {N, E, F}), "", "", "", "", "", r,
                             b_.OptionalWeight(P(il, "ffn_down_exps.scale"), {N})},
                            P(il, "ffn_moe_out"), std::move(attrs));
    return Norm(moe, P(il, "post_ffw_norm_2"), P(il, "ffn_moe"), E);
  }

  std::string Layer(int il, const std::string& x) {
    const Gemma4Layer& l = layers_[il];
    const int64_t E = s_.n_embd, F = l.n_ff;
    std::string h = Norm(x, P(il, "attn_norm"), P(il, "attn_in"), E);
    h = Attention(il, h);
    h = Norm(h, P(il, "post_attention_norm"), P(il, "attn_post"), E);
    const std::string attn_out = b_.Op("add", {h, x}, P(il, "ffn_inp"));
    h = Norm(attn_out, P(il, "ffn_norm"), P(il, "ffn_in"), E);
    std::string gate = Linear(h, P(il, "ffn_gate.weight"), F, E, P(il, "ffn_gate"));
    std::string up = Linear(h, P(il, "ffn_up.weight"), F, E, P(il, "ffn_up"));
    h = b_.Op("geglu", {gate, up}, P(il, "ffn_act"));
    h = Linear(h, P(il, "ffn_down.weight"), E, F, P(il, "ffn_out"));
    if (s_.Find(P(il, "ffn_gate_inp.weight"))) h = b_.Op("add", {Norm(h, P(il, "post_ffw_norm_1"), P(il, "ffn_mlp"), E),
                                                               Experts(il, attn_out)}, P(il, "ffn_moe_combined"));
    h = Norm(h, P(il, "post_ffw_norm"), P(il, "ffn_post"), E);
    std::string out = b_.Op("add", {h, attn_out}, P(il, "ffn_res"));
    if (ple_ > 0) {
      std::string g = Linear(out, P(il, "inp_gate.weight"), ple_, E, P(il, "pe_gate"));
      g = b_.Op("gelu", {g}, P(il, "pe_act"));
      std::string mine = b_.Op("slice", {per_layer_inp_}, P(il, "pe_inp"), {{"begin", il * ple_}, {"size", ple_}});
      g = b_.Op("mul", {g, mine}, P(il, "pe_mul"));
      g = Linear(g, P(il, "proj.weight"), E, ple_, P(il, "pe_proj"));
      g = Norm(g, P(il, "post_norm"), P(il, "pe_out"), E);
      out = b_.Op("add", {out, g}, P(il, "pe_res"));
    }
    const std::string scale = b_.OptionalWeight(P(il, "layer_output_scale.weight"), {1});
    if (!scale.empty()) out = b_.Op("mul", {out, scale}, P(il, "out_scaled"));
    return out;
  }

  const ModelSpec& s_;
  GraphBuilder b_;
  std::vector<Gemma4Layer> layers_;
  std::string positions_, per_layer_inp_;
  int64_t window_ = 0, ple_ = 0;
  double swa_base_ = 10000;
};

}  // namespace

absl::StatusOr<ir::Graph> BuildGemma4Assistant(const ModelSpec& s) {
  // The assistant has no K/V projections and reads its target's cache and hidden
  // state: it cannot run as a model of its own (llama.cpp loads it only as the MTP
  // context of a gemma4 target too).
  return absl::FailedPreconditionError(StrCat(
      s.file, ": a gemma4-assistant file is a drafter for a gemma4 model (it reads the target's KV cache and "
              "hidden state); it cannot load as the main model. Load the gemma4 model and pass this file as its draft"));
}

absl::StatusOr<ir::Graph> BuildGemma4(const ModelSpec& s) {
  auto layers = ReadGemma4Layers(s);
  if (!layers.ok()) return layers.status();
  return Gemma4Graph(s, *std::move(layers)).Build();
}

}  // namespace uaii::models
