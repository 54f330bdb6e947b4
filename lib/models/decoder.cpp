#include "models/decoder.h"

#include <cmath>

#include "models/graph_builder.h"
#include "util/str_cat.h"

namespace uaii::models {
namespace {

using Config = DecoderConfig;

class Decoder {
 public:
  Decoder(const ModelSpec& s, const Config& c) : s_(s), c_(c), b_(s) {}

  absl::StatusOr<ir::Graph> Build() {
    std::string tokens = b_.Input("tokens", TensorType::I32, {ir::kDimTokens});
    positions_ = b_.Input("positions", TensorType::I32, {ir::kDimTokens});
    std::string x = b_.Op("embed", {b_.Weight("token_embd.weight", {s_.n_vocab, s_.n_embd}), tokens}, "inp_embd");
    if (c_.learned_positions) {
      std::string pe = b_.Op("embed", {b_.Weight("position_embd.weight", {s_.n_ctx_train, s_.n_embd}), positions_},
                             "inp_pos_embd");
      x = b_.Op("add", {x, pe}, "inp_embd_pos");
    }
    if (c_.embed_scale != 0) x = b_.Op("scale", {x}, "inp_scaled", {{"scale", c_.embed_scale}});
    for (int il = 0; il < s_.n_layer; ++il) x = Layer(il, x);
    std::string rows = b_.Op("output_rows", {x}, "result_rows");
    std::string h = Norm(rows, "output_norm", "result_norm");
    std::string head = b_.OptionalWeight("output.weight", {s_.n_vocab, s_.n_embd});
    if (head.empty()) head = b_.Weight("token_embd.weight");
    const bool post = c_.logit_scale != 0 || c_.final_softcap > 0;
    std::string out = post ? "logits_raw" : "logits";
    h = b_.Op("matmul", {h, head}, out + (b_.spec().Find("output.bias") ? "_nobias" : ""));
    h = Bias(h, "output.bias", s_.n_vocab, out);
    if (c_.logit_scale != 0)
      h = b_.Op("scale", {h}, c_.final_softcap > 0 ? "logits_scaled" : "logits",
                {{"scale", static_cast<double>(1.0f / static_cast<float>(c_.logit_scale))}});
    if (c_.final_softcap > 0) h = b_.Op("softcap", {h}, "logits", {{"cap", c_.final_softcap}});
    for (const auto& u : c_.unused) b_.Unused(u.name, u.shape, u.why);
    b_.Meta("architecture", s_.arch);
    return b_.Finish({"logits"});
  }

 private:
  std::string P(int il, const std::string& n) const { return StrCat("blk.", il, ".", n); }

  // norm(x) with `<name>.weight` (and `<name>.bias` for LayerNorm).
  std::string Norm(const std::string& x, const std::string& name, const std::string& out, int64_t n = 0) {
    if (n == 0) n = s_.n_embd;
    std::string w = b_.Weight(name + ".weight", {n});
    if (c_.norm == Config::Norm::kRms) return b_.Op("rms_norm", {x, w}, out, {{"eps", s_.rms_eps}});
    std::string bias = b_.OptionalWeight(name + ".bias", {n});
    return b_.Op("layer_norm", {x, w, bias}, out, {{"eps", s_.norm_eps}});
  }

  // x + bias when the file has `bias` ([n]); the result is named `out` either way.
  std::string Bias(const std::string& x, const std::string& bias, int64_t n, const std::string& out) {
    std::string bw = b_.OptionalWeight(bias, {n});
    if (bw.empty()) return x == out ? x : b_.Op("reshape", {x}, out, {{"shape", b_.ShapeOf(x)}});
    return b_.Op("add", {x, bw}, out);
  }

  // y = x W^T (+ bias): `name`.weight [n_out, n_in], optional `name`.bias [n_out].
  std::string Linear(const std::string& x, const std::string& name, int64_t n_out, int64_t n_in,
                     const std::string& out) {
    const bool has_bias = b_.spec().Find(name + ".bias") != nullptr;
    std::string y = b_.Op("matmul", {x, b_.Weight(name + ".weight", {n_out, n_in})}, has_bias ? out + "_nobias" : out);
    return has_bias ? Bias(y, name + ".bias", n_out, out) : y;
  }

  std::string Attention(int il, const std::string& x) {
    const int64_t T = ir::kDimTokens, E = s_.n_embd;
    const int64_t nq = s_.n_head * s_.head_dim_k, nk = s_.n_head_kv * s_.head_dim_k, nv = s_.n_head_kv * s_.head_dim_v;
    std::string q, k, v;
    if (b_.spec().Find(P(il, "attn_qkv.weight"))) {
      std::string qkv = Linear(x, P(il, "attn_qkv"), nq + nk + nv, E, P(il, "qkv"));
      // Without a fused bias, separate Q/K/V biases apply, only when all three exist
      // (llama.cpp create_tensor_qkv / build_qkv); one or two of them load unused.
      bool split_bias = !b_.spec().Find(P(il, "attn_qkv.bias"));
      if (split_bias) {
        int n_bias = 0;
        for (const char* n : {"q", "k", "v"}) n_bias += b_.spec().Find(P(il, StrCat("attn_", n, ".bias"))) != nullptr;
        if (n_bias > 0 && n_bias < 3) {
          const std::string why = "llama.cpp adds separate Q/K/V biases to a fused QKV only when all three exist";
          b_.Unused(P(il, "attn_q.bias"), {nq}, why);
          b_.Unused(P(il, "attn_k.bias"), {nk}, why);
          b_.Unused(P(il, "attn_v.bias"), {nv}, why);
          split_bias = false;
        }
      }
      auto part = [&](const std::string& n, int64_t begin, int64_t size) {
        const std::string out = P(il, n);
        const bool bias = split_bias && b_.spec().Find(P(il, "attn_" + n + ".bias"));
        std::string y = b_.Op("slice", {qkv}, bias ? out + "_nobias" : out, {{"begin", begin}, {"size", size}});
        return bias ? Bias(y, P(il, "attn_" + n + ".bias"), size, out) : y;
      };
      q = part("q", 0, nq);
      k = part("k", nq, nk);
      v = part("v", nq + nk, nv);
    } else {
      q = Linear(x, P(il, "attn_q"), nq, E, P(il, "q"));
      k = Linear(x, P(il, "attn_k"), nk, E, P(il, "k"));
      v = Linear(x, P(il, "attn_v"), nv, E, P(il, "v"));
    }
    if (c_.qk_norm == Config::QkNorm::kWhole) {
      q = b_.Op("rms_norm", {q, b_.Weight(P(il, "attn_q_norm.weight"), {nq})}, P(il, "q_normed"), {{"eps", s_.rms_eps}});
      k = b_.Op("rms_norm", {k, b_.Weight(P(il, "attn_k_norm.weight"), {nk})}, P(il, "k_normed"), {{"eps", s_.rms_eps}});
    }
    q = b_.Op("reshape", {q}, P(il, "q_heads"), {{"shape", std::vector<int64_t>{T, s_.n_head, s_.head_dim_k}}});
    k = b_.Op("reshape", {k}, P(il, "k_heads"), {{"shape", std::vector<int64_t>{T, s_.n_head_kv, s_.head_dim_k}}});
    v = b_.Op("reshape", {v}, P(il, "v_heads"), {{"shape", std::vector<int64_t>{T, s_.n_head_kv, s_.head_dim_v}}});
    if (c_.qk_norm == Config::QkNorm::kPerHead) {
      q = b_.Op("rms_norm", {q, b_.Weight(P(il, "attn_q_norm.weight"), {s_.head_dim_k})}, P(il, "q_normed"),
                {{"eps", s_.rms_eps}});
      k = b_.Op("rms_norm", {k, b_.Weight(P(il, "attn_k_norm.weight"), {s_.head_dim_k})}, P(il, "k_normed"),
                {{"eps", s_.rms_eps}});
    }
    const bool sliding = c_.swa.size > 0 && il < static_cast<int>(c_.swa.layers.size()) && c_.swa.layers[il];
    if (c_.rope_mode != "none" && (!c_.rope_layer || c_.rope_layer(il))) {
      // Unpermuted (Hugging Face) Q/K rows rotate halves where GGUF's rotate pairs.
      const std::string mode = c_.rope_mode == "norm" && s_.rope_halves ? "neox" : c_.rope_mode;
      auto rope = sliding ? RopeAttrs(s_, mode, c_.swa.rope_base, c_.swa.rope_scale)
                          : RopeAttrs(s_, mode, s_.rope_freq_base, s_.rope_freq_scale);
      std::string factors =
          b_.OptionalWeight(c_.rope_factors.empty() ? "rope_freqs.weight" : c_.rope_factors, {s_.n_rot / 2});
      std::vector<std::string> in = {q, positions_, factors};
      if (!c_.rope_long_factors.empty()) {
        std::string lf = b_.OptionalWeight(c_.rope_long_factors, {s_.n_rot / 2});
        if (!lf.empty()) {
          in.push_back(lf);
          rope["long_factors_ctx"] = c_.long_factors_ctx;
        }
      }
      q = b_.Op("rope", in, P(il, "q_rope"), rope);
      in[0] = k;
      k = b_.Op("rope", in, P(il, "k_rope"), rope);
    }
    if (c_.q_prescale != 0) q = b_.Op("scale", {q}, P(il, "q_scaled"), {{"scale", c_.q_prescale}});
    const double kq = c_.kq_scale != 0 ? c_.kq_scale : 1.0f / std::sqrt(static_cast<float>(s_.head_dim_k));
    std::map<std::string, ir::AttrValue> attn = {{"layer", int64_t{il}}, {"scale", kq}};
    if (sliding) attn["window"] = c_.swa.size;
    if (c_.attn_softcap > 0) attn["softcap"] = c_.attn_softcap;
    std::string o = b_.Op("attention", {q, k, v}, P(il, "attn"), attn);
    return Linear(o, P(il, "attn_output"), E, s_.n_head * s_.head_dim_v, P(il, "attn_out"));
  }

  std::string Ffn(int il, const std::string& x) {
    const int64_t E = s_.n_embd, F = s_.n_ff;
    if (c_.ffn_block)
      if (std::string out = c_.ffn_block(b_, il, x); !out.empty()) return out;
    if (c_.ffn == Config::Ffn::kGelu) {
      std::string up = Linear(x, P(il, "ffn_up"), F, E, P(il, "ffn_up"));
      std::string h = b_.Op("gelu", {up}, P(il, "ffn_act"));
      return Linear(h, P(il, "ffn_down"), E, F, P(il, "ffn_out"));
    }
    std::string h;
    if (!b_.spec().Find(P(il, "ffn_gate.weight")) && c_.ffn == Config::Ffn::kSwiglu) {
      // Fused gate|up rows (Phi-3): silu(first half) * second half.
      std::string gu = Linear(x, P(il, "ffn_up"), 2 * F, E, P(il, "ffn_gate_up"));
      h = b_.Op("swiglu_fused", {gu}, P(il, "ffn_act"));
    } else {
      std::string gate = Linear(x, P(il, "ffn_gate"), F, E, P(il, "ffn_gate"));
      std::string up = Linear(x, P(il, "ffn_up"), F, E, P(il, "ffn_up"));
      h = b_.Op(c_.ffn == Config::Ffn::kGeglu ? "geglu" : "swiglu", {gate, up}, P(il, "ffn_act"));
    }
    return Linear(h, P(il, "ffn_down"), E, F, P(il, "ffn_out"));
  }

  std::string Layer(int il, const std::string& x) {
    std::string h = c_.pre_norms ? Norm(x, P(il, "attn_norm"), P(il, "attn_in")) : x;
    h = Attention(il, h);
    if (c_.post_norms) h = Norm(h, P(il, "post_attention_norm"), P(il, "attn_post"));
    if (c_.residual_scale != 0) h = b_.Op("scale", {h}, P(il, "attn_res_scaled"), {{"scale", c_.residual_scale}});
    std::string mid = b_.Op("add", {h, x}, P(il, "ffn_inp"));
    h = c_.pre_norms ? Norm(mid, P(il, "ffn_norm"), P(il, "ffn_in")) : mid;
    h = Ffn(il, h);
    if (c_.post_norms) h = Norm(h, P(il, "post_ffw_norm"), P(il, "ffn_post"));
    if (c_.residual_scale != 0) h = b_.Op("scale", {h}, P(il, "ffn_res_scaled"), {{"scale", c_.residual_scale}});
    return b_.Op("add", {h, mid}, P(il, "out"));
  }

  const ModelSpec& s_;
  const Config& c_;
  GraphBuilder b_;
  std::string positions_;
};

}  // namespace

std::map<std::string, ir::AttrValue> RopeAttrs(const ModelSpec& s, const std::string& mode, double base,
                                               double scale) {
  std::map<std::string, ir::AttrValue> rope = {
      {"mode", mode}, {"n_dims", s.n_rot}, {"freq_base", base}, {"freq_scale", scale}};
  // llama.cpp's ext_factor and attn_factor are the context's, so every layer's.
  if (s.yarn_ext_factor != 0 || s.yarn_attn_factor != 1) {
    rope["ext_factor"] = s.yarn_ext_factor;
    rope["attn_factor"] = s.yarn_attn_factor;
    rope["beta_fast"] = s.yarn_beta_fast;
    rope["beta_slow"] = s.yarn_beta_slow;
    rope["n_ctx_orig"] = s.n_ctx_orig;
  }
  return rope;
}

absl::StatusOr<std::vector<bool>> SwaPattern(const ModelSpec& s, int64_t n_pattern, bool dense_first) {
  const std::string key = "attention.sliding_window_pattern";
  std::vector<bool> out(static_cast<size_t>(s.n_layer));
  if (s.hparams.IsArray(key)) {
    auto arr = s.hparams.IntArray(key);
    if (!arr.ok()) return arr.status();
    if (static_cast<int64_t>((*arr)->size()) != s.n_layer)
      return absl::InvalidArgumentError(StrCat(s.hparams.origin(), key, " has ", (*arr)->size(),
                                               " entries for ", s.n_layer, " layers"));
    for (size_t il = 0; il < out.size(); ++il) out[il] = (**arr)[il] != 0;
    return out;
  }
  auto n = s.hparams.Int(key, n_pattern);
  if (!n.ok()) return n.status();
  if (*n < 0) return absl::InvalidArgumentError(StrCat(s.hparams.origin(), key, " = ", *n, " must not be negative"));
  for (int64_t il = 0; il < s.n_layer; ++il)
    out[il] = *n == 0 || (dense_first ? il % *n != 0 : il % *n < *n - 1);
  return out;
}

void SetSwaPattern(ModelSpec& s, const std::vector<bool>& layers) {
  s.hparams.SetNumbers("attention.sliding_window_pattern", std::vector<double>(layers.begin(), layers.end()));
}

absl::StatusOr<ir::Graph> BuildDecoder(const ModelSpec& s, const DecoderConfig& cfg) {
  // llama.cpp's graphs for families without sliding layers ignore a window in the
  // metadata; transformers applies the layers a config names, so a non-GGUF source's
  // attention.sliding_window_pattern (per-layer bools) is honoured there.
  if (cfg.swa.size == 0 && s.source != "gguf" && s.sliding_window > 0 &&
      s.hparams.IsArray("attention.sliding_window_pattern")) {
    auto layers = SwaPattern(s, 0, false);
    if (!layers.ok()) return layers.status();
    DecoderConfig c = cfg;
    c.swa = SlidingWindow{s.sliding_window, std::move(*layers), s.rope_freq_base, s.rope_freq_scale};
    return Decoder(s, c).Build();
  }
  return Decoder(s, cfg).Build();
}

}  // namespace uaii::models
