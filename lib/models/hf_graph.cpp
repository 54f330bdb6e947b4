// A Hugging Face directory as the model description every source gives: a ModelSpec in
// GGUF's vocabulary (the typed fields, `<arch>.*`-style hparams and GGUF tensor names)
// whose weights are declared views of the safetensors tensors, built by the same family
// builder as a GGUF file of that architecture (the family table row whose
// hf_model_types names config.json's model_type). What a checkpoint stores differently
// from its converted GGUF is said by views and keys, not by a second forward pass:
//   * q/k rows keep the rotate_half pairing (convert_hf_to_gguf permutes them for the
//     llama-style families): spec.rope_halves makes RoPE "norm" rotate halves;
//   * Gemma's RMSNorm weights are offsets: the view adds 1 (its GGUF stores 1 + w);
//   * GPT-2's Conv1D weights are [in, out]: the view transposes them;
//   * per-expert tensors are stacked into [n_expert, rows, cols] banks;
//   * rope_scaling: linear -> freq_scale; llama3 and yarn -> transformers' per-frequency
//     inv_freq factors as a synthetic rope_freqs.weight, and cos/sin times yarn's
//     attention factor; longrope -> its short factors (rope_factors_short.weight) and
//     attention factor (transformers switches to the long ones only past
//     original_max_position_embeddings, which these sessions do not model yet);
//   * what only one family reads (Gemma's norm offsets, hidden_activation, soft-caps
//     and query_pre_attn_scalar, each family's default sliding layers, Qwen-MoE's
//     norm_topk_prob) is the family's own reading of config.json (Family::hf_read, in
//     its builder file); config.json's layer_types, when given, name the sliding
//     layers for every family. For families whose llama.cpp graph has no sliding
//     window, the decoder applies the layers to non-GGUF sources.
#include "models/hf_graph.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "models/decoder.h"
#include "models/families.h"
#include "util/str_cat.h"

namespace uaii::models {
namespace {

using hf::HfTensor;

// The family's own reading of config.json, then config.json's layer_types (which name
// the sliding layers for every family). `s` holds the shared keys already.
absl::Status ReadFamilyKeys(const Family* family, const hf::HfConfig& c, ModelSpec& s, HfReading& r) {
  r.activation = c.activation;
  r.activation_name = c.activation_name.empty() ? StrCat(hf::ActivationName(c.activation), " (default)") : c.activation_name;
  if (family && family->hf_read)
    if (auto st = family->hf_read(c, s, r); !st.ok()) return st;
  // A RoPE base of the sliding layers only a family that rotates them apart may take.
  if (c.rope_local_base_freq > 0 && !r.reads_local_rope && c.rope_local_base_freq != c.rope_theta)
    return absl::UnimplementedError(StrCat("the sliding layers' RoPE base ", c.rope_local_base_freq,
                                           " (rope_local_base_freq / rope_parameters.sliding_attention) differs from ",
                                           "rope_theta ", c.rope_theta, ", which uaii's ",
                                           family ? family->arch : "(no)", " graph does not model"));
  if (c.sliding_window <= 0 || c.layer_types.empty()) return absl::OkStatus();
  if (static_cast<int64_t>(c.layer_types.size()) != s.n_layer)
    return absl::InvalidArgumentError(StrCat("layer_types has ", c.layer_types.size(), " entries for num_hidden_layers ",
                                             s.n_layer));
  std::vector<bool> layers;
  for (const auto& t : c.layer_types) layers.push_back(t == "sliding_attention");
  SetSwaPattern(s, layers);
  return absl::OkStatus();
}

// GGUF's tensor base name for an HF role (where the two differ).
std::string GgufBase(const std::string& role) {
  if (role == "attn_post_norm") return "post_attention_norm";
  if (role == "ffn_post_norm") return "post_ffw_norm";
  if (role == "ffn_gate_up") return "ffn_up";  // [gate | up] rows, phi3's GGUF layout
  return role;
}

bool IsNorm(const std::string& role) { return role.size() > 5 && role.compare(role.size() - 5, 5, "_norm") == 0; }

bool Packed(const HfTensor& t) {
  return !t.promote_to_f32 && (t.dtype == TensorType::F32 || t.dtype == TensorType::F16 || t.dtype == TensorType::BF16);
}

class HfSpecBuilder {
 public:
  HfSpecBuilder(const hf::HfModel& m, HfGraph& out) : m_(m), c_(m.config), a_(m.arch), out_(out) {}

  absl::Status Run(const Family& family);

 private:
  void Declare(const std::string& name, TensorType dtype, std::vector<int64_t> shape, ir::TensorRef ref) {
    SpecTensor t;
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.offset = ref.offset;
    t.bytes = ref.bytes;
    out_.spec.tensors[name] = t;
    out_.refs[name] = std::move(ref);
  }
  // A weight read by matmul / embed: kept in its file type when a kernel exists.
  void Matrix(const std::string& name, const HfTensor& t, bool transpose, std::vector<int64_t> reshape = {}) {
    ir::TensorRef r = Stored(t);
    r.view->transpose = transpose;
    r.view->widen_f32 = !Packed(t);
    std::vector<int64_t> shape = t.shape;
    if (transpose && shape.size() == 2) std::swap(shape[0], shape[1]);
    if (!reshape.empty()) shape = std::move(reshape);  // same bytes, another shape
    Declare(name, Packed(t) ? t.dtype : TensorType::F32, std::move(shape), std::move(r));
  }
  // A weight read element-wise (norms, biases): always f32.
  void Vector(const std::string& name, const HfTensor& t, bool plus_one) {
    ir::TensorRef r = Stored(t);
    r.view->widen_f32 = t.stored != safetensors::Dtype::F32;
    r.view->add_one = plus_one;
    Declare(name, TensorType::F32, t.shape, std::move(r));
  }
  void Synthetic(const std::string& name, std::vector<float> values) {
    ir::TensorRef r;
    const auto n = static_cast<int64_t>(values.size());
    r.view.emplace().values = std::move(values);
    Declare(name, TensorType::F32, {n}, std::move(r));
  }
  // The view of HF tensor `t` as stored in its safetensors file.
  static ir::TensorRef Stored(const HfTensor& t) {
    ir::TensorRef r{t.file, t.name, t.offset, t.bytes, ir::TensorView{}};
    r.view->source_dtype = std::string(safetensors::DtypeName(t.stored));
    r.view->source_shape = t.shape;
    return r;
  }
  absl::Status HyperParameters(const Family& family);
  absl::Status RopeScaling();
  absl::Status Tensors();

  const hf::HfModel& m_;
  const hf::HfConfig& c_;
  const hf::HfArchitecture& a_;
  HfGraph& out_;
  HfReading reading_;
};

absl::Status HfSpecBuilder::HyperParameters(const Family& family) {
  ModelSpec& s = out_.spec;
  s.arch = std::string(family.arch);
  s.file = m_.dir;
  s.source = "huggingface";
  s.rope_halves = true;
  s.hparams = HParams(StrCat(m_.dir, "/config.json (as GGUF key ", family.arch, "."));
  s.n_vocab = c_.vocab_size;
  if (const HfTensor* e = m_.FindRole("token_embd"); e && e->shape.size() == 2) s.n_vocab = e->shape[0];
  s.n_embd = c_.hidden_size;
  s.n_layer = c_.num_hidden_layers;
  s.n_ff = a_.n_ff;
  s.n_head = c_.num_attention_heads;
  s.n_head_kv = c_.num_key_value_heads;
  s.head_dim_k = s.head_dim_v = c_.head_dim;
  s.n_rot = a_.rope ? a_.rotary_dims : c_.head_dim;
  s.n_ctx_train = c_.max_position_embeddings > 0 ? c_.max_position_embeddings : 2048;
  s.n_ctx_orig = s.n_ctx_train;
  s.rms_eps = s.norm_eps = c_.norm_eps;
  s.rope_freq_base = c_.rope_theta;
  s.sliding_window = c_.sliding_window;
  s.n_expert = c_.num_experts;
  s.n_expert_used = c_.num_experts_per_tok;
  s.n_ff_exp = c_.moe_intermediate_size;
  s.n_ff_shexp = c_.shared_expert_intermediate_size;
  if (auto st = ReadFamilyKeys(&family, c_, s, reading_); !st.ok())
    return absl::Status(st.code(), StrCat(m_.dir, "/config.json: ", std::string(st.message())));

  // The activation the family's builder applies must be the config's.
  const bool gelu = family.hf_activation == "gelu_tanh";
  if ((gelu && reading_.activation != hf::Activation::kGeluTanh) ||
      (!gelu && reading_.activation != hf::Activation::kSilu))
    return absl::UnimplementedError(StrCat(m_.dir, "/config.json: activation \"", reading_.activation_name,
                                           "\" for model_type \"", c_.model_type, "\" (uaii's ", family.arch,
                                           " graph uses ", gelu ? "gelu_new / gelu_pytorch_tanh" : "silu", ")"));
  if (a_.rope && (a_.rotary_dims <= 0 || a_.rotary_dims % 2 || a_.rotary_dims > c_.head_dim))
    return absl::InvalidArgumentError(StrCat(m_.dir, "/config.json: rotary dims ", a_.rotary_dims,
                                             " must be even and in (0, head_dim ", c_.head_dim, "]"));
  // GPT-2 options that change the attention math and that the graph does not model.
  for (const auto& [k, val] : c_.raw) {
    const bool on = val == "true";
    if ((k == "scale_attn_by_inverse_layer_idx" && on) || (k == "scale_attn_weights" && val == "false"))
      return absl::UnimplementedError(StrCat(m_.dir, "/config.json: ", k, " = ", val,
                                             " is not implemented by the runtime"));
  }
  return RopeScaling();
}

absl::Status HfSpecBuilder::RopeScaling() {
  using K = hf::RopeScaling::Kind;
  ModelSpec& s = out_.spec;
  const auto& rs = c_.rope_scaling;
  const int64_t nd = a_.rotary_dims;
  auto original_context = [&] {
    double orig = static_cast<double>(rs.original_max_position_embeddings);
    for (const auto& [k, val] : c_.raw)
      if (orig <= 0 && k == "original_max_position_embeddings") orig = std::atof(val.c_str());
    return orig;
  };
  switch (rs.kind) {
    case K::kNone: return absl::OkStatus();
    case K::kLinear:
      if (rs.factor > 0) s.rope_freq_scale = 1.0 / rs.factor;
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
      double orig = original_context();
      if (orig <= 0) orig = static_cast<double>(c_.max_position_embeddings);
      const double f = rs.factor;
      auto mscale = [](double scale, double m) { return scale <= 1 ? 1.0 : 0.1 * m * std::log(scale) + 1.0; };
      s.yarn_attn_factor = rs.attention_factor ? *rs.attention_factor
                           : (rs.mscale != 0 && rs.mscale_all_dim != 0)
                               ? mscale(f, rs.mscale) / mscale(f, rs.mscale_all_dim)
                               : mscale(f, 1.0);
      auto corr = [&](double rot) {
        return nd * std::log(orig / (rot * 2 * std::numbers::pi)) / (2 * std::log(c_.rope_theta));
      };
      const double low = std::max(0.0, rs.truncate ? std::floor(corr(rs.beta_fast)) : corr(rs.beta_fast));
      double high = std::min(static_cast<double>(nd - 1), rs.truncate ? std::ceil(corr(rs.beta_slow)) : corr(rs.beta_slow));
      if (low == high) high += 0.001;
      std::vector<float> factors;
      for (int64_t i = 0; i < nd / 2; ++i) {
        const double extrap = std::pow(c_.rope_theta, -2.0 * i / nd), interp = extrap / f;
        const double ramp = std::clamp((i - low) / (high - low), 0.0, 1.0);
        const double e = 1 - ramp;  // extrapolation weight
        factors.push_back(static_cast<float>(extrap / (interp * (1 - e) + extrap * e)));
      }
      Synthetic("rope_freqs.weight", std::move(factors));
      return absl::OkStatus();
    }
    case K::kLlama3: {
      // transformers _compute_llama3_parameters: per frequency, divide by `factor`
      // below low_freq_wavelen, keep above high_freq_wavelen, blend in between.
      const double orig = static_cast<double>(rs.original_max_position_embeddings);
      if (orig <= 0)
        return absl::InvalidArgumentError(
            StrCat(m_.dir, "/config.json: rope_scaling llama3 lacks original_max_position_embeddings"));
      const double low_wl = orig / rs.low_freq_factor, high_wl = orig / rs.high_freq_factor;
      std::vector<float> factors;
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
        factors.push_back(static_cast<float>(inv / nf));
      }
      Synthetic("rope_freqs.weight", std::move(factors));
      return absl::OkStatus();
    }
    case K::kLongRope: {
      // transformers _compute_longrope_parameters: inv_freq / ext_factor with the short
      // factors, cos and sin times attention_factor = sqrt(1 + ln(s) / ln(orig)),
      // s = max_position / orig.
      if (static_cast<int64_t>(rs.short_factor.size()) != nd / 2)
        return absl::InvalidArgumentError(StrCat(m_.dir, "/config.json: rope_scaling short_factor has ",
                                                 rs.short_factor.size(), " values, rotary dims ", nd, " need ", nd / 2));
      const double orig = original_context();
      double af = 1.0;
      if (rs.attention_factor) {
        af = *rs.attention_factor;
      } else if (orig > 0) {
        const double scale = static_cast<double>(c_.max_position_embeddings) / orig;
        if (scale > 1) af = std::sqrt(1 + std::log(scale) / std::log(orig));
      }
      s.yarn_attn_factor = af;
      std::vector<float> factors;
      for (double f : rs.short_factor) factors.push_back(static_cast<float>(f));
      Synthetic("rope_factors_short.weight", std::move(factors));
      return absl::OkStatus();
    }
  }
  return absl::UnimplementedError(StrCat(m_.dir, "/config.json: rope_scaling type \"",
                                         std::string(hf::RopeScalingName(rs.kind)),
                                         "\" is not implemented by the runtime"));
}

absl::Status HfSpecBuilder::Tensors() {
  if (a_.qkv == hf::QkvLayout::kGroupedHeads)
    return absl::UnimplementedError(StrCat(m_.dir, ": fused grouped-head query_key_value (GPT-NeoX / Falcon "
                                           "layout) is not implemented by the runtime"));
  const bool conv1d = a_.qkv == hf::QkvLayout::kGpt2Conv1D;
  const bool plus_one = reading_.norm_plus_one && a_.norm == hf::NormKind::kRms;
  for (const HfTensor& t : m_.tensors) {
    if (t.role.empty() || t.expert >= 0) continue;
    const std::string name = StrCat(t.layer >= 0 ? StrCat("blk.", t.layer, ".") : std::string(), GgufBase(t.role),
                                    t.is_bias ? ".bias" : ".weight");
    if (t.is_bias || IsNorm(t.role)) {
      Vector(name, t, plus_one && !t.is_bias);
    } else if (t.role == "ffn_gate_inp_shexp") {
      Matrix(name, t, false, {c_.hidden_size});  // HF shared_expert_gate [1, E]: the vector [E] GGUF stores
    } else {
      const bool transposed = conv1d && (t.role == "attn_qkv" || t.role == "attn_output" || t.role == "ffn_up" ||
                                         t.role == "ffn_down");
      Matrix(name, t, transposed);
    }
  }
  // Expert banks: ffn_{gate,up,down} of experts 0..n-1 stacked (runtime/moe.h reads
  // expert e as the e-th equal byte slice).
  for (int il = 0; il < c_.num_hidden_layers && c_.num_experts > 0; ++il) {
    if (!m_.FindRole("ffn_gate", il, 0) && !m_.FindRole("ffn_up", il, 0)) continue;
    for (const char* role : {"ffn_gate", "ffn_up", "ffn_down"}) {
      const HfTensor* t0 = m_.FindRole(role, il, 0);
      ir::TensorRef bank;  // a concat of the experts' [rows, cols] tensors
      auto& parts = bank.view.emplace().parts;
      for (int64_t e = 0; e < c_.num_experts; ++e) {
        const HfTensor* t = m_.FindRole(role, il, static_cast<int>(e));
        if (!t || t->shape.size() != 2 || t->shape != t0->shape)
          return absl::InvalidArgumentError(StrCat(m_.dir, ": layer ", il, " expert ", e, " ", role,
                                                   " is missing or shaped unlike expert 0"));
        parts.push_back(Stored(*t));
        parts.back().view->widen_f32 = !Packed(*t0);
      }
      Declare(StrCat("blk.", il, ".", role, "_exps.weight"), Packed(*t0) ? t0->dtype : TensorType::F32,
              {c_.num_experts, t0->shape[0], t0->shape[1]}, std::move(bank));
    }
  }
  return absl::OkStatus();
}

absl::Status HfSpecBuilder::Run(const Family& family) {
  if (auto st = HyperParameters(family); !st.ok()) return st;
  return Tensors();
}

}  // namespace

absl::StatusOr<HfFamilyReading> ReadHfFamily(const hf::HfConfig& c) {
  HfFamilyReading out;
  out.family = FindHfFamily(c.model_type);
  ModelSpec s;
  s.source = "huggingface";
  s.n_layer = c.num_hidden_layers;
  s.n_embd = c.hidden_size;
  s.sliding_window = c.sliding_window;
  s.hparams = HParams(StrCat("config.json (as GGUF key ", out.family ? out.family->arch : "?", "."));
  if (auto st = ReadFamilyKeys(out.family, c, s, out.reading); !st.ok())
    return absl::Status(st.code(), StrCat("config.json: ", std::string(st.message())));
  if (s.sliding_window > 0 && s.hparams.IsArray("attention.sliding_window_pattern")) {
    auto layers = SwaPattern(s, 0, false);
    if (!layers.ok()) return layers.status();
    out.sliding_layers = std::move(*layers);
  }
  return out;
}

absl::StatusOr<HfGraph> BuildHfGraph(const hf::HfModel& m) {
  if (auto st = hf::CheckRunnable(m); !st.ok()) return st;
  if (std::string_view what = RefusedHfModelType(m.config.model_type); !what.empty())
    return absl::UnimplementedError(StrCat(m.dir, "/config.json: denied: ", what, " (model_type \"",
                                           m.config.model_type, "\")"));
  const Family* family = FindHfFamily(m.config.model_type);
  if (!family)
    return absl::UnimplementedError(StrCat(m.dir, "/config.json: model_type \"", m.config.model_type,
                                           "\" is not supported; supported: ", SupportedHfModelTypes()));
  auto out = std::make_unique<HfGraph>();
  HfSpecBuilder build(m, *out);
  if (auto st = build.Run(*family); !st.ok()) return st;
  auto g = BuildGraph(out->spec);
  if (!g.ok()) return g.status();
  // Weight references are the declared views (their `tensor` the HF name); graph
  // metadata "hf_tensor:<name>" says the same for a reader of the graph.
  for (auto& t : g->tensors) {
    auto it = out->refs.find(t.name);
    if (!t.weight || it == out->refs.end()) continue;
    const ir::TensorView& v = *it->second.view;
    std::string how = v.values.empty() ? it->second.tensor : "(computed from config.json rope_scaling)";
    if (!v.parts.empty()) how = StrCat(v.parts.size(), " experts stacked");
    if (v.add_one) how += " (1 + w)";
    if (v.transpose) how += " (transposed)";
    t.weight = it->second;
    g->metadata.emplace_back("hf_tensor:" + t.name, how);
  }
  g->metadata.emplace_back("source", "huggingface");
  out->graph = std::move(*g);
  return std::move(*out);
}

}  // namespace uaii::models
