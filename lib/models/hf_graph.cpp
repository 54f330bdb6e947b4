// One builder for every runnable HF layout, driven by the loader's HfArchitecture
// flags (the "table" for HF directories lives in lib/loaders/hf_family.cpp):
//
//   x = embed(tokens) [* sqrt(E)] [+ embed_pos(positions)]
//   per layer:  h = attn(norm(x)) [-> post norm];  x1 = x + h
//               h = ffn(norm(x1)) [-> post norm];   x  = x1 + h
//   logits = [softcap](head(norm(rows(x))))
//
// Shapes: x [T, E]; q [T, nq, hd]; k, v [T, nkv, hd]; weights [out, in].
#include "models/hf_graph.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "models/graph_builder.h"
#include "util/str_cat.h"

namespace uaii::models {
namespace {

using hf::HfTensor;

std::string GName(const std::string& role, int layer, bool bias) {
  std::string base = layer < 0 ? role : StrCat("blk.", layer, ".", role);
  return base + (bias ? ".bias" : ".weight");
}

class HfBuild {
 public:
  HfBuild(const hf::HfModel& m, HfGraph& out) : m_(m), c_(m.config), a_(m.arch), out_(out), b_(out.spec) {}

  absl::StatusOr<ir::Graph> Run();

 private:
  const HfTensor* Need(const std::string& role, int layer, bool bias = false) {
    const HfTensor* t = m_.FindRole(role, layer, -1, bias);
    if (!t && st_.ok())
      st_ = absl::NotFoundError(StrCat(m_.dir, ": no ", bias ? "bias" : "weight", " for role ", role,
                                       layer >= 0 ? StrCat(" in layer ", layer) : std::string()));
    return t;
  }
  // Registers a view under `name` and declares it as a graph weight.
  std::string Declare(const std::string& name, HfWeightView v) {
    SpecTensor t;
    t.dtype = v.dtype;
    t.shape = v.shape;
    if (v.src) {
      t.offset = v.src->offset;
      t.bytes = v.src->bytes;
    }
    out_.spec.tensors[name] = t;
    out_.views[name] = std::move(v);
    return b_.Weight(name);
  }
  // A weight read by matmul / embed: kept in its file type when a kernel exists.
  // rows < 0: all rows of the (transposed) source.
  std::string Matrix(const std::string& name, const HfTensor* t, bool transpose = false, int64_t row_begin = 0,
                     int64_t rows = -1, std::vector<int64_t> reshape = {}) {
    if (!t) return name;
    HfWeightView v;
    v.src = t;
    v.transpose = transpose;
    v.row_begin = row_begin;
    v.rows = rows;
    const bool packed = !t->promote_to_f32 && (t->dtype == TensorType::F32 || t->dtype == TensorType::F16 ||
                                               t->dtype == TensorType::BF16);
    v.to_f32 = !packed;
    v.dtype = packed ? t->dtype : TensorType::F32;
    v.shape = t->shape;
    if (transpose && v.shape.size() == 2) std::swap(v.shape[0], v.shape[1]);
    if (rows >= 0) v.shape[0] = rows;
    if (!reshape.empty()) v.shape = std::move(reshape);  // same bytes, another shape
    return Declare(name, std::move(v));
  }
  // A weight read element-wise (norms, biases): always f32.
  std::string Vector(const std::string& name, const HfTensor* t, bool plus_one = false, int64_t begin = 0,
                     int64_t n = -1) {
    if (!t) return name;
    HfWeightView v;
    v.src = t;
    v.row_begin = begin;
    v.rows = n;
    v.to_f32 = true;
    v.plus_one = plus_one;
    v.dtype = TensorType::F32;
    v.shape = t->shape;
    if (n >= 0) v.shape[0] = n;
    return Declare(name, std::move(v));
  }

  std::string Norm(const std::string& x, const std::string& role, int layer, const std::string& out);
  // y = x . W^T [+ b]; w_begin/w_rows select rows of W (and of b).
  std::string Linear(const std::string& x, const std::string& gname, const std::string& role, int layer,
                     bool transpose, bool bias, int64_t begin, int64_t rows, const std::string& out);
  std::string Attention(int il, const std::string& x, const std::string& positions);
  std::string Ffn(int il, const std::string& x);
  absl::Status RopeSetup();

  const hf::HfModel& m_;
  const hf::HfConfig& c_;
  const hf::HfArchitecture& a_;
  HfGraph& out_;
  GraphBuilder b_;
  absl::Status st_;
  std::string gated_act_, plain_act_;
  double rope_freq_scale_ = 1.0;
  std::string rope_factors_;   // graph name of the frequency factors, "" = none
  double attn_factor_ = 1.0;   // longrope attention_factor (cos and sin times it)
};

std::string HfBuild::Norm(const std::string& x, const std::string& role, int layer, const std::string& out) {
  const float eps = static_cast<float>(c_.norm_eps);
  if (a_.norm == hf::NormKind::kLayerNorm) {
    std::string w = Vector(GName(role, layer, false), Need(role, layer));
    std::string bias = Vector(GName(role, layer, true), Need(role, layer, true));
    return b_.Op("layer_norm", {x, w, bias}, out, {{"eps", static_cast<double>(eps)}});
  }
  std::string w = Vector(GName(role, layer, false), Need(role, layer), a_.norm == hf::NormKind::kRmsPlusOne);
  return b_.Op("rms_norm", {x, w}, out, {{"eps", static_cast<double>(eps)}});
}

std::string HfBuild::Linear(const std::string& x, const std::string& gname, const std::string& role, int layer,
                            bool transpose, bool bias, int64_t begin, int64_t rows, const std::string& out) {
  const bool sliced = rows >= 0;
  std::string w = Matrix(StrCat(layer >= 0 ? StrCat("blk.", layer, ".") : std::string(), gname, ".weight"),
                         Need(role, layer), transpose, begin, rows);
  std::string y = b_.Op("matmul", {x, w}, bias ? out + "_nobias" : out);
  if (!bias) return y;
  std::string bn = StrCat(layer >= 0 ? StrCat("blk.", layer, ".") : std::string(), gname, ".bias");
  std::string bv = Vector(bn, Need(role, layer, true), false, sliced ? begin : 0, rows);
  return b_.Op("add", {y, bv}, out);
}

absl::Status HfBuild::RopeSetup() {
  using K = hf::RopeScaling::Kind;
  const auto& rs = c_.rope_scaling;
  const int64_t nd = a_.rotary_dims;
  auto unsupported = [&] {
    return absl::UnimplementedError(StrCat(m_.dir, "/config.json: rope_scaling type \"",
                                           std::string(hf::RopeScalingName(rs.kind)),
                                           "\" is not implemented by the runtime"));
  };
  switch (rs.kind) {
    case K::kNone: return absl::OkStatus();
    case K::kLinear:
      if (rs.factor > 0) rope_freq_scale_ = 1.0 / rs.factor;
      return absl::OkStatus();
    case K::kDynamicNtk:
      // transformers rescales only when a sequence outgrows max_position_embeddings;
      // sessions are clamped to that context, so within it this is plain RoPE.
      return absl::OkStatus();
    case K::kYarn: {
      // transformers _compute_yarn_parameters: inv_freq blends interpolation (/ factor)
      // and extrapolation with a linear ramp over the frequencies between the
      // correction dims of beta_fast / beta_slow (floor / ceil, "truncate"), as
      // per-frequency factors; cos and sin times attention_factor.
      double orig = static_cast<double>(rs.original_max_position_embeddings);
      for (const auto& [k, val] : c_.raw)
        if (orig <= 0 && k == "original_max_position_embeddings") orig = std::atof(val.c_str());
      if (orig <= 0) orig = static_cast<double>(c_.max_position_embeddings);
      const double f = rs.factor;
      auto mscale = [](double scale, double m) { return scale <= 1 ? 1.0 : 0.1 * m * std::log(scale) + 1.0; };
      attn_factor_ = rs.attention_factor ? *rs.attention_factor
                     : (rs.mscale != 0 && rs.mscale_all_dim != 0) ? mscale(f, rs.mscale) / mscale(f, rs.mscale_all_dim)
                                                                  : mscale(f, 1.0);
      auto corr = [&](double rot) {
        return nd * std::log(orig / (rot * 2 * std::numbers::pi)) / (2 * std::log(c_.rope_theta));
      };
      const double low = std::max(0.0, std::floor(corr(rs.beta_fast)));
      double high = std::min(static_cast<double>(nd - 1), std::ceil(corr(rs.beta_slow)));
      if (low == high) high += 0.001;
      HfWeightView v;
      for (int64_t i = 0; i < nd / 2; ++i) {
        const double extrap = std::pow(c_.rope_theta, -2.0 * i / nd), interp = extrap / f;
        const double ramp = std::clamp((i - low) / (high - low), 0.0, 1.0);
        const double e = 1 - ramp;  // extrapolation weight
        const double inv = interp * (1 - e) + extrap * e;
        v.values.push_back(static_cast<float>(extrap / inv));
      }
      v.shape = {nd / 2};
      rope_factors_ = Declare("rope_freqs.weight", std::move(v));
      return absl::OkStatus();
    }
    case K::kLlama3: {
      // transformers _compute_llama3_parameters: per frequency, divide by `factor`
      // below low_freq_wavelen, keep above high_freq_wavelen, blend in between.
      const double orig = static_cast<double>(rs.original_max_position_embeddings);
      if (orig <= 0) return absl::InvalidArgumentError(StrCat(m_.dir, "/config.json: rope_scaling llama3 lacks original_max_position_embeddings"));
      const double low_wl = orig / rs.low_freq_factor, high_wl = orig / rs.high_freq_factor;
      HfWeightView v;
      for (int64_t i = 0; i < nd / 2; ++i) {
        const double inv = std::pow(c_.rope_theta, -2.0 * i / nd);
        const double wl = 2 * std::numbers::pi / inv;
        double nf = inv;
        if (wl > low_wl) {
          nf = inv / rs.factor;
        } else if (wl >= high_wl) {
          const double smooth = (orig / wl - rs.low_freq_factor) / (rs.high_freq_factor - rs.low_freq_factor);
          nf = (1 - smooth) * inv / rs.factor + smooth * inv;
        }
        v.values.push_back(static_cast<float>(inv / nf));
      }
      v.shape = {nd / 2};
      rope_factors_ = Declare("rope_freqs.weight", std::move(v));
      return absl::OkStatus();
    }
    case K::kLongRope: {
      // transformers _compute_longrope_parameters: inv_freq / ext_factor with the
      // short factors (prompts up to original_max_position_embeddings; the runtime
      // does not switch to long_factor beyond it yet), cos and sin times
      // attention_factor = sqrt(1 + ln(s) / ln(orig)), s = max_position / orig.
      if (static_cast<int64_t>(rs.short_factor.size()) != nd / 2)
        return absl::InvalidArgumentError(StrCat(m_.dir, "/config.json: rope_scaling short_factor has ",
                                                 rs.short_factor.size(), " values, rotary dims ", nd, " need ", nd / 2));
      double orig = static_cast<double>(rs.original_max_position_embeddings);
      for (const auto& [k, val] : c_.raw)
        if (orig <= 0 && k == "original_max_position_embeddings") orig = std::atof(val.c_str());
      double af = 1.0;
      if (rs.attention_factor) {
        af = *rs.attention_factor;
      } else if (orig > 0) {
        const double s = static_cast<double>(c_.max_position_embeddings) / orig;
        if (s > 1) af = std::sqrt(1 + std::log(s) / std::log(orig));
      }
      attn_factor_ = af;
      HfWeightView v;
      for (double f : rs.short_factor) v.values.push_back(static_cast<float>(f));
      v.shape = {nd / 2};
      rope_factors_ = Declare("rope_freqs.weight", std::move(v));
      return absl::OkStatus();
    }
  }
  return unsupported();
}

std::string HfBuild::Attention(int il, const std::string& x, const std::string& positions) {
  const int64_t T = ir::kDimTokens, nq = c_.num_attention_heads, nkv = c_.num_key_value_heads, hd = c_.head_dim;
  const std::string p = StrCat("blk.", il, ".");
  std::string q, k, v;
  switch (a_.qkv) {
    case hf::QkvLayout::kSeparate:
      q = Linear(x, "attn_q", "attn_q", il, false, a_.qkv_bias, 0, -1, p + "q");
      k = Linear(x, "attn_k", "attn_k", il, false, a_.qkv_bias, 0, -1, p + "k");
      v = Linear(x, "attn_v", "attn_v", il, false, a_.qkv_bias, 0, -1, p + "v");
      break;
    case hf::QkvLayout::kConcat:       // rows [q | k | v]
    case hf::QkvLayout::kGpt2Conv1D: { // columns [q | k | v], transposed to rows
      const bool tr = a_.qkv == hf::QkvLayout::kGpt2Conv1D;
      q = Linear(x, "attn_q", "attn_qkv", il, tr, a_.qkv_bias, 0, nq * hd, p + "q");
      k = Linear(x, "attn_k", "attn_qkv", il, tr, a_.qkv_bias, nq * hd, nkv * hd, p + "k");
      v = Linear(x, "attn_v", "attn_qkv", il, tr, a_.qkv_bias, (nq + nkv) * hd, nkv * hd, p + "v");
      break;
    }
    case hf::QkvLayout::kGroupedHeads:
      if (st_.ok())
        st_ = absl::UnimplementedError(StrCat(m_.dir, ": fused grouped-head query_key_value (GPT-NeoX / Falcon "
                                              "layout) is not implemented by the runtime"));
      return x;
  }
  q = b_.Op("reshape", {q}, p + "q_heads", {{"shape", std::vector<int64_t>{T, nq, hd}}});
  k = b_.Op("reshape", {k}, p + "k_heads", {{"shape", std::vector<int64_t>{T, nkv, hd}}});
  v = b_.Op("reshape", {v}, p + "v_heads", {{"shape", std::vector<int64_t>{T, nkv, hd}}});
  if (a_.qk_norm) {
    q = Norm(q, "attn_q_norm", il, p + "q_normed");
    k = Norm(k, "attn_k_norm", il, p + "k_normed");
  }
  const bool sliding = c_.sliding_window > 0 && il < static_cast<int>(a_.sliding_layers.size()) && a_.sliding_layers[il];
  if (a_.rope) {
    // Gemma 3's sliding layers: their own base, no scaling (transformers rotary_emb_local).
    const bool local = sliding && c_.rope_local_base_freq > 0;
    std::map<std::string, ir::AttrValue> rope = {
        {"mode", std::string("neox")},
        {"n_dims", a_.rotary_dims},
        {"freq_base", local ? c_.rope_local_base_freq : c_.rope_theta},
        {"freq_scale", local ? 1.0 : rope_freq_scale_}};
    // LongRoPE's attention_factor multiplies cos and sin, so only the rotated dims.
    if (!local && attn_factor_ != 1.0) rope["attn_factor"] = attn_factor_;
    const std::string factors = local ? "" : rope_factors_;
    q = b_.Op("rope", {q, positions, factors}, p + "q_rope", rope);
    k = b_.Op("rope", {k, positions, factors}, p + "k_rope", rope);
  }
  std::map<std::string, ir::AttrValue> attn = {
      {"layer", int64_t{il}}, {"scale", static_cast<double>(static_cast<float>(a_.attention_scale))}};
  if (sliding) attn["window"] = c_.sliding_window;
  if (c_.attn_logit_softcapping > 0) attn["softcap"] = c_.attn_logit_softcapping;
  std::string o = b_.Op("attention", {q, k, v}, p + "attn", attn);
  return Linear(o, "attn_output", "attn_output", il, a_.qkv == hf::QkvLayout::kGpt2Conv1D, a_.o_bias, 0, -1,
                p + "attn_out");
}

std::string HfBuild::Ffn(int il, const std::string& x) {
  const std::string p = StrCat("blk.", il, ".");
  const int64_t I = a_.n_ff;
  const bool bias = a_.ffn_bias;
  switch (a_.ffn) {
    case hf::FfnKind::kGated: {
      std::string g = Linear(x, "ffn_gate", "ffn_gate", il, false, bias, 0, -1, p + "ffn_gate");
      std::string u = Linear(x, "ffn_up", "ffn_up", il, false, bias, 0, -1, p + "ffn_up");
      std::string h = b_.Op(gated_act_, {g, u}, p + "ffn_act");
      return Linear(h, "ffn_down", "ffn_down", il, false, bias, 0, -1, p + "ffn_out");
    }
    case hf::FfnKind::kGatedFused: {  // rows [gate: I | up: I]
      std::string g = Linear(x, "ffn_gate", "ffn_gate_up", il, false, bias, 0, I, p + "ffn_gate");
      std::string u = Linear(x, "ffn_up", "ffn_gate_up", il, false, bias, I, I, p + "ffn_up");
      std::string h = b_.Op(gated_act_, {g, u}, p + "ffn_act");
      return Linear(h, "ffn_down", "ffn_down", il, false, bias, 0, -1, p + "ffn_out");
    }
    case hf::FfnKind::kMlp: {  // GPT-2 Conv1D: transposed
      std::string u = Linear(x, "ffn_up", "ffn_up", il, true, bias, 0, -1, p + "ffn_up");
      std::string h = b_.Op(plain_act_, {u}, p + "ffn_act");
      return Linear(h, "ffn_down", "ffn_down", il, true, bias, 0, -1, p + "ffn_out");
    }
    case hf::FfnKind::kMoe: {
      // Layers without a router (Qwen2-MoE mlp_only_layers) are dense.
      if (!m_.FindRole("ffn_gate_inp", il)) {
        std::string g = Linear(x, "ffn_gate", "ffn_gate", il, false, bias, 0, -1, p + "ffn_gate");
        std::string u = Linear(x, "ffn_up", "ffn_up", il, false, bias, 0, -1, p + "ffn_up");
        std::string h = b_.Op(gated_act_, {g, u}, p + "ffn_act");
        return Linear(h, "ffn_down", "ffn_down", il, false, bias, 0, -1, p + "ffn_out");
      }
      if (gated_act_ != "swiglu" && st_.ok())
        st_ = absl::UnimplementedError(StrCat(m_.dir, "/config.json: MoE experts with activation \"",
                                              c_.activation_name, "\" (the runtime's experts are SiLU-gated)"));
      const int64_t n_expert = c_.num_experts;
      auto bank = [&](const std::string& role) -> std::string {
        HfWeightView v;
        for (int64_t e = 0; e < n_expert; ++e) {
          const HfTensor* t = m_.FindRole(role, il, static_cast<int>(e));
          if (!t || t->shape.size() != 2) {
            if (st_.ok()) st_ = absl::NotFoundError(StrCat(m_.dir, ": layer ", il, " lacks expert ", e, " ", role));
            return p + role + "_exps.weight";
          }
          v.experts.push_back(t);
        }
        const HfTensor* t0 = v.experts[0];
        const bool packed = !t0->promote_to_f32 && (t0->dtype == TensorType::F32 || t0->dtype == TensorType::F16 ||
                                                    t0->dtype == TensorType::BF16);
        v.to_f32 = !packed;
        v.dtype = packed ? t0->dtype : TensorType::F32;
        v.shape = {n_expert, t0->shape[0], t0->shape[1]};
        return Declare(p + role + "_exps.weight", std::move(v));
      };
      std::vector<std::string> in = {x, Matrix(p + "ffn_gate_inp.weight", Need("ffn_gate_inp", il)),
                                     bank("ffn_up"), bank("ffn_gate"), bank("ffn_down"), ""};
      if (m_.FindRole("ffn_up_shexp", il)) {  // Qwen2-MoE: + sigmoid(gate_inp_shexp . x) * ffn_shexp(x)
        in.push_back(Matrix(p + "ffn_up_shexp.weight", Need("ffn_up_shexp", il)));
        in.push_back(Matrix(p + "ffn_gate_shexp.weight", Need("ffn_gate_shexp", il)));
        in.push_back(Matrix(p + "ffn_down_shexp.weight", Need("ffn_down_shexp", il)));
        // HF shared_expert_gate [1, E] is read as the vector [E] the op takes.
        in.push_back(Matrix(p + "ffn_gate_inp_shexp.weight", Need("ffn_gate_inp_shexp", il), false, 0, -1,
                            std::vector<int64_t>{c_.hidden_size}));
      }
      // Softmax over all experts, top k; Mixtral always renormalises the k weights,
      // the Qwen MoEs when norm_topk_prob.
      const bool norm = a_.variant == "mixtral" || c_.norm_topk_prob;
      return b_.Op("moe_ffn", in, p + "ffn_out",
                   {{"n_expert_used", c_.num_experts_per_tok}, {"gating", std::string("softmax")},
                    {"norm_w", int64_t{norm ? 1 : 0}}});
    }
  }
  return x;
}

absl::StatusOr<ir::Graph> HfBuild::Run() {
  if (auto st = hf::CheckRunnable(m_); !st.ok()) return st;
  switch (c_.activation) {
    case hf::Activation::kSilu: gated_act_ = "swiglu"; plain_act_ = "silu"; break;
    case hf::Activation::kGeluTanh: gated_act_ = "geglu"; plain_act_ = "gelu"; break;
    default:
      return absl::UnimplementedError(StrCat(m_.dir, "/config.json: activation \"", c_.activation_name,
                                             "\" is not implemented by the runtime (supported: silu, gelu_new / "
                                             "gelu_pytorch_tanh)"));
  }
  if (a_.rope && (a_.rotary_dims <= 0 || a_.rotary_dims % 2 || a_.rotary_dims > c_.head_dim))
    return absl::InvalidArgumentError(StrCat(m_.dir, "/config.json: rotary dims ", a_.rotary_dims,
                                             " must be even and in (0, head_dim ", c_.head_dim, "]"));
  if (auto st = RopeSetup(); !st.ok()) return st;
  // GPT-2 options that change the attention math and that the graph does not model.
  for (const auto& [k, val] : c_.raw) {
    const bool on = val == "true";
    if ((k == "scale_attn_by_inverse_layer_idx" && on) || (k == "scale_attn_weights" && val == "false"))
      return absl::UnimplementedError(StrCat(m_.dir, "/config.json: ", k, " = ", val,
                                             " is not implemented by the runtime"));
  }

  std::string tokens = b_.Input("tokens", TensorType::I32, {ir::kDimTokens});
  std::string positions = b_.Input("positions", TensorType::I32, {ir::kDimTokens});
  std::string embd = Matrix("token_embd.weight", Need("token_embd", -1));
  std::string x = b_.Op("embed", {embd, tokens}, "inp_embd");
  if (a_.embed_scale_sqrt) {
    // transformers: hidden_size ** 0.5 as a tensor of the activation dtype (f32).
    const float s = static_cast<float>(std::sqrt(static_cast<double>(c_.hidden_size)));
    x = b_.Op("scale", {x}, "inp_scaled", {{"scale", static_cast<double>(s)}});
  }
  if (a_.learned_positions) {
    std::string wpe = Matrix("position_embd.weight", Need("position_embd", -1));
    std::string pe = b_.Op("embed", {wpe, positions}, "inp_pos");
    x = b_.Op("add", {x, pe}, "inp_sum");
  }
  for (int il = 0; il < c_.num_hidden_layers && st_.ok(); ++il) {
    const std::string p = StrCat("blk.", il, ".");
    std::string h = Norm(x, "attn_norm", il, p + "attn_in");
    h = Attention(il, h, positions);
    if (a_.sandwich_norms) h = Norm(h, "attn_post_norm", il, p + "attn_post");
    std::string x1 = b_.Op("add", {h, x}, p + "ffn_inp");
    h = Norm(x1, "ffn_norm", il, p + "ffn_in");
    h = Ffn(il, h);
    if (a_.sandwich_norms) h = Norm(h, "ffn_post_norm", il, p + "ffn_post");
    x = b_.Op("add", {h, x1}, p + "out");
  }
  std::string rows = b_.Op("output_rows", {x}, "result_rows");
  std::string h = Norm(rows, "output_norm", -1, "result_norm");
  std::string head = a_.tied_embeddings ? embd : Matrix("output.weight", Need("output", -1));
  if (c_.final_logit_softcapping > 0) {
    std::string raw = b_.Op("matmul", {h, head}, "logits_raw");
    b_.Op("softcap", {raw}, "logits", {{"cap", c_.final_logit_softcapping}});
  } else {
    b_.Op("matmul", {h, head}, "logits");
  }
  if (!st_.ok()) return st_;
  b_.Meta("architecture", out_.spec.arch);
  b_.Meta("source", "huggingface");
  auto g = b_.Finish({"logits"});
  if (!g.ok()) return g.status();
  // Weight references keep the graph's GGUF-style name (the storage planner reads the
  // layer and role from it) with the HF file and offset; graph metadata
  // "hf_tensor:<name>" says which HF tensor the view reads and how.
  for (auto& t : g->tensors) {
    auto it = out_.views.find(t.name);
    if (!t.weight || it == out_.views.end()) continue;
    const HfWeightView& v = it->second;
    if (!v.src) {
      t.weight = ir::TensorRef{"", t.name, 0, 0};
      g->metadata.emplace_back("hf_tensor:" + t.name, "(computed from config.json rope_scaling)");
      continue;
    }
    std::string how;
    if (v.plus_one) how += " (1 + w)";
    if (v.transpose) how += " (transposed)";
    if (v.rows >= 0) how += StrCat(" rows [", v.row_begin, ", ", v.row_begin + v.rows, ")");
    t.weight = ir::TensorRef{v.src->file, t.name, v.src->offset, v.src->bytes};
    g->metadata.emplace_back("hf_tensor:" + t.name, v.src->name + how);
  }
  return g;
}

}  // namespace

absl::StatusOr<HfGraph> BuildHfGraph(const hf::HfModel& m) {
  auto out = std::make_unique<HfGraph>();
  ModelSpec& s = out->spec;
  const hf::HfConfig& c = m.config;
  s.arch = m.arch.variant.empty() ? m.arch.family : m.arch.variant;
  s.file = m.dir;
  s.n_vocab = c.vocab_size;
  s.n_embd = c.hidden_size;
  s.n_layer = c.num_hidden_layers;
  s.n_ff = m.arch.n_ff;
  s.n_head = c.num_attention_heads;
  s.n_head_kv = c.num_key_value_heads;
  s.head_dim_k = s.head_dim_v = c.head_dim;
  s.n_rot = m.arch.rotary_dims;
  s.n_ctx_train = c.max_position_embeddings > 0 ? c.max_position_embeddings : 2048;
  s.rms_eps = c.norm_eps;
  s.rope_freq_base = c.rope_theta;
  s.sliding_window = c.sliding_window;
  s.final_logit_softcap = c.final_logit_softcapping;
  s.attn_logit_softcap = c.attn_logit_softcapping;
  s.attention_scale = m.arch.attention_scale;
  if (const HfTensor* e = m.FindRole("token_embd"); e && e->shape.size() == 2) s.n_vocab = e->shape[0];
  HfBuild build(m, *out);
  auto g = build.Run();
  if (!g.ok()) return g.status();
  out->graph = std::move(*g);
  return std::move(*out);
}

}  // namespace uaii::models
