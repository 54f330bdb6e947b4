#include "backends/reference/reference_backend.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <set>

#include "backends/kv_layers.h"
#include "backends/registry.h"
#include "formats/fp16.h"
#include "formats/quant_blocks.h"
#include "ir/validate.h"
#include "kernels/matmul.h"
#include "kernels/quantize_act.h"
#include "kernels/vec_dot.h"
#include "util/str_cat.h"

namespace uaii::backends::reference {
namespace {

using runtime::BoundWeight;
using runtime::KvCache;
using runtime::KvLayerShape;
using Vec = std::vector<float>;

const std::set<std::string>& Ops() {
  static const std::set<std::string> ops = {
      "embed", "rms_norm", "layer_norm", "matmul", "norm_linear", "add", "mul", "scale", "softcap", "silu",
      "gelu", "swiglu", "geglu", "swiglu_fused", "reshape", "rope", "attention", "output_rows", "slice", "concat",
      "moe_ffn", "masked_head"};
  return ops;
}

class VectorBuffer final : public DeviceBuffer {
 public:
  explicit VectorBuffer(uint64_t n) : bytes_(static_cast<size_t>(n), 0) {}
  uint64_t bytes() const override { return bytes_.size(); }
  void* host() override { return bytes_.data(); }

 private:
  std::vector<uint8_t> bytes_;
};

int64_t Numel(const ir::Shape& s, int64_t T, int64_t R) {
  int64_t n = 1;
  for (int64_t d : s) n *= d == ir::kDimTokens ? T : d == ir::kDimRows ? R : d;
  return n;
}

// ---- Weights: matmul through the scalar dot references, lookups by dequantizing.

// The activation row in the weight type's vec_dot_type (kernels/vec_dot.h's table).
absl::Status ConvertActivation(TensorType type, const float* x, int64_t n, std::vector<uint8_t>* act) {
  switch (type) {
    case TensorType::F32:
      act->resize(n * sizeof(float));
      std::memcpy(act->data(), x, n * sizeof(float));
      return absl::OkStatus();
    case TensorType::F16:
    case TensorType::BF16:
      act->resize(n * sizeof(uint16_t));
      (type == TensorType::F16 ? kernels::ConvertRowF16 : kernels::ConvertRowBF16)(
          x, reinterpret_cast<uint16_t*>(act->data()), n);
      return absl::OkStatus();
    case TensorType::Q4_0:
    case TensorType::Q5_0:
    case TensorType::Q8_0:
      act->resize(n / quant::kQK * sizeof(quant::BlockQ8_0));
      kernels::QuantizeRowQ8_0(x, reinterpret_cast<quant::BlockQ8_0*>(act->data()), n);
      return absl::OkStatus();
    case TensorType::Q4_1:
    case TensorType::Q5_1:
      act->resize(n / quant::kQK * sizeof(quant::BlockQ8_1));
      kernels::QuantizeRowQ8_1(x, reinterpret_cast<quant::BlockQ8_1*>(act->data()), n);
      return absl::OkStatus();
    case TensorType::Q2_K:
    case TensorType::Q3_K:
    case TensorType::Q4_K:
    case TensorType::Q5_K:
    case TensorType::Q6_K:
      act->resize(n / quant::kQK_K * sizeof(quant::BlockQ8_K));
      kernels::QuantizeRowQ8_K(x, reinterpret_cast<quant::BlockQ8_K*>(act->data()), n);
      return absl::OkStatus();
    default:
      return absl::UnimplementedError(StrCat("reference matmul: no scalar dot for ",
                                             TensorTypeName(static_cast<uint32_t>(type))));
  }
}

// y [batch, out] = x [batch, in] . W^T, W the row-major bytes of w (2-D view).
absl::Status MatMulRef(const BoundWeight& w, const float* x, int64_t batch, float* y) {
  if (w.data == nullptr) return absl::FailedPreconditionError("reference matmul: weight bytes are not resident");
  const kernels::VecDotFn dot = kernels::VecDotRef(w.type);
  if (dot == nullptr)
    return absl::UnimplementedError(StrCat("reference matmul: no scalar dot for ",
                                           TensorTypeName(static_cast<uint32_t>(w.type))));
  const int64_t out = w.shape[0], in = w.shape[1];
  std::vector<uint8_t> act;
  for (int64_t b = 0; b < batch; ++b) {
    if (auto st = ConvertActivation(w.type, x + b * in, in, &act); !st.ok()) return st;
    for (int64_t o = 0; o < out; ++o) y[b * out + o] = dot(w.data + o * w.row_bytes, act.data(), in);
  }
  return absl::OkStatus();
}

// The centroid-masked head (docs/ir.md masked_head), written plainly: the scores'
// clusters in stable descending order, each selected token's head row dequantized.
absl::Status MaskedHeadRef(const float* x, const float* scores, const int32_t* ordering, const BoundWeight& head,
                           int64_t rows, int64_t n_centroids, int64_t top_k, float* y) {
  const int64_t E = head.shape[1], V = head.shape[0], per = V / n_centroids;
  Vec w(static_cast<size_t>(E));
  for (int64_t r = 0; r < rows; ++r) {
    const float* s = scores + r * n_centroids;
    std::vector<int64_t> order(static_cast<size_t>(n_centroids));
    for (int64_t c = 0; c < n_centroids; ++c) {
      if (std::isnan(s[c])) return absl::InvalidArgumentError(StrCat("centroid score ", c, " is NaN"));
      order[c] = c;
    }
    std::stable_sort(order.begin(), order.end(), [s](int64_t a, int64_t b) { return s[a] > s[b]; });
    std::vector<std::pair<int32_t, float>> picked;
    for (int64_t k = 0; k < top_k; ++k)
      for (int64_t j = 0; j < per; ++j) {
        const int32_t id = ordering[order[k] * per + j];
        if (id < 0 || id >= V) return absl::OutOfRangeError(StrCat("ordering id ", id, " outside the head's ", V, " rows"));
        if (auto st = DequantizeRow(head.type, head.data + id * head.row_bytes, E, w.data()); !st.ok()) return st;
        double dot = 0;
        for (int64_t e = 0; e < E; ++e) dot += static_cast<double>(x[r * E + e]) * w[e];
        picked.emplace_back(id, static_cast<float>(dot));
      }
    float lowest = picked[0].second;
    for (const auto& p : picked) lowest = std::min(lowest, p.second);
    for (int64_t v = 0; v < V; ++v) y[r * V + v] = lowest - 1.0f;
    for (const auto& [id, logit] : picked) y[r * V + id] = logit;
  }
  return absl::OkStatus();
}

BoundWeight ExpertView(const BoundWeight& bank, int64_t e) {
  BoundWeight w = bank;
  const uint64_t stride = bank.bytes / static_cast<uint64_t>(bank.shape[0]);
  w.shape = {bank.shape[1], bank.shape[2]};
  w.data = bank.data + e * stride;
  w.bytes = stride;
  return w;
}

// ---- Element-wise and row operators, in double where a sum is taken.

void RmsNormRef(const float* x, const float* w, int64_t rows, int64_t n, double eps, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < n; ++i) ss += static_cast<double>(x[r * n + i]) * x[r * n + i];
    const double inv = 1.0 / std::sqrt(ss / n + eps);
    for (int64_t i = 0; i < n; ++i) y[r * n + i] = static_cast<float>(x[r * n + i] * inv * (w ? w[i] : 1.0));
  }
}

void LayerNormRef(const float* x, const float* w, const float* b, int64_t rows, int64_t n, double eps, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < n; ++i) mean += x[r * n + i];
    mean /= n;
    for (int64_t i = 0; i < n; ++i) var += (x[r * n + i] - mean) * (x[r * n + i] - mean);
    const double inv = 1.0 / std::sqrt(var / n + eps);
    for (int64_t i = 0; i < n; ++i)
      y[r * n + i] = static_cast<float>((x[r * n + i] - mean) * inv * (w ? w[i] : 1.0) + (b ? b[i] : 0.0));
  }
}

double SiluRef(double x) { return x / (1.0 + std::exp(-x)); }
double F16(double x) { return Fp16ToFp32(Fp32ToFp16(static_cast<float>(x))); }
// The tanh form on f16 input and output (the op's definition, ggml's GGML_GELU_FP16).
double GeluRef(double x) {
  constexpr double kC = 0.7978845608028654;  // sqrt(2 / pi)
  const double h = F16(x);
  return F16(0.5 * h * (1.0 + std::tanh(kC * (h + 0.044715 * h * h * h))));
}

void SoftmaxRef(std::vector<double>* v) {
  double mx = -INFINITY;
  for (double s : *v) mx = std::max(mx, s);
  double sum = 0;
  for (double& s : *v) sum += (s = std::isinf(s) && s < 0 ? 0.0 : std::exp(s - mx));
  for (double& s : *v) s /= sum;
}

// RoPE on x [T, heads, dim], the first n_dims of each head rotated by
// theta_i = pos * freq_scale * base^(-2i/n_dims) / factor_i, with YaRN's ramp between
// interpolated and extrapolated angles when ext_factor != 0 (ggml_rope_ext).
void RopeRef(const ir::Op& op, const float* x, const int32_t* pos, int64_t T, int64_t heads, int64_t dim,
             const float* factors, float* y) {
  const double base = op.Float("freq_base"), freq_scale = op.Float("freq_scale", 1.0);
  const int64_t n_dims = op.Int("n_dims");
  const bool neox = op.Str("mode") == "neox";
  const double ext = op.Float("ext_factor", 0.0), attn_factor = op.Float("attn_factor", 1.0);
  const double beta_fast = op.Float("beta_fast", 32.0), beta_slow = op.Float("beta_slow", 1.0);
  const double n_ctx_orig = static_cast<double>(op.Int("n_ctx_orig", 0));
  double corr0 = 0, corr1 = 0, mscale = attn_factor;
  if (ext != 0.0) {
    const double two_pi = 2 * 3.14159265358979323846;
    corr0 = std::max(0.0, std::floor(n_dims * std::log(n_ctx_orig / (beta_fast * two_pi)) / (2 * std::log(base))));
    corr1 = std::min(static_cast<double>(n_dims - 1),
                     std::ceil(n_dims * std::log(n_ctx_orig / (beta_slow * two_pi)) / (2 * std::log(base))));
    mscale *= 1.0 + 0.1 * std::log(1.0 / freq_scale);
  }
  std::memcpy(y, x, static_cast<size_t>(T * heads * dim) * sizeof(float));
  // The base angle as the op defines it (cpu_ops.h, ggml): pos * theta_scale^i with
  // the product taken step by step in float.
  const float theta_scale = std::pow(static_cast<float>(base), -2.0f / static_cast<float>(n_dims));
  for (int64_t t = 0; t < T; ++t) {
    float theta = static_cast<float>(pos[t]);
    for (int64_t i = 0; i < n_dims / 2; ++i, theta *= theta_scale) {
      const double extrap = theta / (factors ? factors[i] : 1.0);
      double th = freq_scale * extrap;
      if (ext != 0.0) {
        const double ramp = (1 - std::clamp((i - corr0) / std::max(0.001, corr1 - corr0), 0.0, 1.0)) * ext;
        th = th * (1 - ramp) + extrap * ramp;
      }
      const double c = std::cos(th) * mscale, s = std::sin(th) * mscale;
      for (int64_t h = 0; h < heads; ++h) {
        float* v = y + (t * heads + h) * dim;
        const int64_t a = neox ? i : 2 * i, b = neox ? i + n_dims / 2 : 2 * i + 1;
        const double x0 = v[a], x1 = v[b];
        v[a] = static_cast<float>(x0 * c - x1 * s);
        v[b] = static_cast<float>(x0 * s + x1 * c);
      }
    }
  }
}

// Causal attention as runtime's attention op defines it (backends/cpu/attention.h): K
// and V rounded to f16 into the cache at their positions' cells; per query and head,
// scores of the f16-rounded query against every cell the masks show (empty, future,
// outside the resident window or the sliding window: hidden), softmax, weights
// rounded to f16, the weighted sum of V. Sums in double, cells in plain order.
void AttentionRef(const ir::Op& op, KvCache& cache, const float* q, const float* k, const float* v,
                  const int32_t* pos, int64_t T, int64_t Hq, float* out) {
  const int layer = static_cast<int>(op.Int("layer"));
  const double scale = op.Float("scale"), softcap = op.Float("softcap", 0.0);
  const int64_t window = op.Int("window", 0);
  const KvLayerShape& s = cache.shape(layer);
  const int64_t Hkv = s.n_head_kv, D = s.head_dim_k, Dv = s.head_dim_v;
  for (int64_t t = 0; t < T && k != nullptr; ++t) {  // a shared-KV read (no k, v) stores nothing
    const int64_t c = cache.Cell(pos[t]);
    cache.SetCellPos(c, pos[t]);
    uint16_t* kc = cache.K(layer, c);
    for (int64_t i = 0; i < Hkv * D; ++i) kc[i] = Fp32ToFp16(k[t * Hkv * D + i]);
    for (int64_t h = 0; h < Hkv; ++h)
      for (int64_t d = 0; d < Dv; ++d) cache.Vt(layer, h, d)[c] = Fp32ToFp16(v[(t * Hkv + h) * Dv + d]);
  }
  const int64_t cells = cache.n_cells();
  std::vector<double> w(static_cast<size_t>(cells));
  for (int64_t t = 0; t < T; ++t) {
    const int64_t qp = pos[t];
    for (int64_t h = 0; h < Hq; ++h) {
      const int64_t hk = h / (Hq / Hkv);
      const float* qh = q + (t * Hq + h) * D;
      for (int64_t c = 0; c < cells; ++c) {
        const int64_t pj = cache.CellPos(c);
        if (pj < 0 || pj > qp || !cache.InWindow(qp, pj) || (window > 0 && qp - pj >= window)) {
          w[c] = -INFINITY;
          continue;
        }
        const uint16_t* kc = cache.K(layer, c) + hk * D;
        double dot = 0;
        for (int64_t d = 0; d < D; ++d) dot += F16(qh[d]) * Fp16ToFp32(kc[d]);
        double sc = dot * scale;
        if (softcap > 0) sc = softcap * std::tanh(sc / softcap);
        w[c] = sc;
      }
      SoftmaxRef(&w);
      for (double& wc : w) wc = F16(wc);
      for (int64_t d = 0; d < Dv; ++d) {
        const uint16_t* vt = cache.Vt(layer, hk, d);
        double acc = 0;
        for (int64_t c = 0; c < cells; ++c)
          if (w[c] != 0) acc += w[c] * Fp16ToFp32(vt[c]);
        out[(t * Hq + h) * Dv + d] = static_cast<float>(acc);
      }
    }
  }
}

// moe_ffn as docs/moe.md defines it: route each row to its top-k experts (ties to
// the lower index), y = sum_j w_j down_e(silu(gate_e x) * up_e x) (+ the shared expert).
absl::Status MoeRef(const ir::Op& op, const std::vector<const BoundWeight*>& w, const float* bias, int64_t top_k,
                    const float* x, const float* router_x, const float* down_scale, int64_t T, float* y) {
  const bool gelu = op.Str("act", "silu") == "gelu", fused = op.Int("fused_gate_up", 0) != 0;
  // Fused: w[2] is [n, 2F, E], each expert's gate rows then its up rows.
  const BoundWeight &router = *w[1], &up = *w[2], &gate = fused ? *w[2] : *w[3], &down = *w[4];
  const int64_t n = router.shape[0], E = up.shape[2], F = up.shape[1] / (fused ? 2 : 1);
  int64_t k = op.Int("n_expert_used");
  if (top_k > 0) k = std::min(k, top_k);
  const bool sigmoid = op.Str("gating") == "sigmoid", norm_w = op.Int("norm_w", 0) != 0;
  const double w_scale = op.Float("w_scale", 0.0);
  Vec logits(static_cast<size_t>(T * n)), hu(F), hg(F), hd(E);
  if (auto st = MatMulRef(router, router_x ? router_x : x, T, logits.data()); !st.ok()) return st;
  for (int64_t t = 0; t < T; ++t) {
    std::vector<double> p(logits.begin() + t * n, logits.begin() + (t + 1) * n);
    if (sigmoid) {
      for (double& v : p) v = 1.0 / (1.0 + std::exp(-v));
    } else {
      SoftmaxRef(&p);
    }
    std::vector<int64_t> idx(static_cast<size_t>(n));
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
      return p[a] + (bias ? bias[a] : 0.0) > p[b] + (bias ? bias[b] : 0.0);
    });
    double sum = 0;
    for (int64_t j = 0; j < k; ++j) sum += p[idx[j]];
    const float* xt = x + t * E;
    float* yt = y + t * E;
    std::fill(yt, yt + E, 0.0f);
    for (int64_t j = 0; j < k; ++j) {
      double wj = p[idx[j]];
      if (norm_w) wj /= std::max(sum, 6.103515625e-5);
      if (w_scale != 0.0) wj *= w_scale;
      BoundWeight eu = ExpertView(up, idx[j]), eg = ExpertView(gate, idx[j]);
      if (fused) {  // the expert's [2F, E] as two [F, E] halves
        const uint64_t half = eu.bytes / 2;
        eu.shape[0] = eg.shape[0] = F;
        eu.bytes = eg.bytes = half;
        eu.data += half;
        eu.offset += half;
      }
      if (auto st = MatMulRef(eu, xt, 1, hu.data()); !st.ok()) return st;
      if (auto st = MatMulRef(eg, xt, 1, hg.data()); !st.ok()) return st;
      for (int64_t i = 0; i < F; ++i) hg[i] = static_cast<float>((gelu ? GeluRef(hg[i]) : SiluRef(hg[i])) * hu[i]);
      if (auto st = MatMulRef(ExpertView(down, idx[j]), hg.data(), 1, hd.data()); !st.ok()) return st;
      const double s = down_scale ? down_scale[idx[j]] : 1.0;
      for (int64_t c = 0; c < E; ++c) yt[c] = static_cast<float>(yt[c] + wj * (s * hd[c]));
    }
    if (w.size() <= 8 || !w[6]) continue;
    const int64_t Fs = w[6]->shape[0];
    Vec su(Fs), sg(Fs), sd(E);
    if (auto st = MatMulRef(*w[6], xt, 1, su.data()); !st.ok()) return st;
    if (auto st = MatMulRef(*w[7], xt, 1, sg.data()); !st.ok()) return st;
    for (int64_t i = 0; i < Fs; ++i) sg[i] = static_cast<float>(SiluRef(sg[i]) * su[i]);
    if (auto st = MatMulRef(*w[8], sg.data(), 1, sd.data()); !st.ok()) return st;
    double g = 1.0;
    if (w.size() > 9 && w[9]) {
      BoundWeight gw = *w[9];
      gw.shape = {1, E};
      float gl = 0;
      if (auto st = MatMulRef(gw, xt, 1, &gl); !st.ok()) return st;
      g = 1.0 / (1.0 + std::exp(-static_cast<double>(gl)));
    }
    for (int64_t c = 0; c < E; ++c) yt[c] = static_cast<float>(yt[c] + sd[c] * g);
  }
  return absl::OkStatus();
}

class ReferenceProgram final : public Program {
 public:
  static absl::StatusOr<std::unique_ptr<Program>> Create(const ir::Graph& g, const runtime::WeightSet& weights);
  const std::vector<KvLayerShape>& kv_layers() const override { return kv_layers_; }
  int64_t n_outputs_per_row() const override { return out_cols_; }
  std::unique_ptr<Workspace> NewWorkspace() const override { return std::make_unique<Workspace>(); }  // none: vectors
  absl::Status Run(const int32_t* tokens, const int32_t* positions, int64_t T, const std::vector<int64_t>& rows,
                   KvCache& cache, const RunContext& ctx, std::vector<float>* out) const override;

 private:
  struct Step {
    const ir::Op* op;
    std::vector<int> in, outs;
  };
  absl::Status RunStep(const Step& s, std::vector<Vec>& buf, const int32_t* tokens, const int32_t* positions,
                       int64_t T, const std::vector<int64_t>& rows, KvCache& cache, const RunContext& ctx) const;

  ir::Graph graph_;  // the steps point into its ops
  std::vector<Step> steps_;
  std::vector<ir::Shape> shapes_;
  std::vector<const BoundWeight*> weight_;
  int positions_slot_ = -1, logits_slot_ = -1;
  int64_t out_cols_ = 0;
  std::vector<KvLayerShape> kv_layers_;
};

absl::StatusOr<std::unique_ptr<Program>> ReferenceProgram::Create(const ir::Graph& g,
                                                                  const runtime::WeightSet& weights) {
  auto order = ir::Validate(g);
  if (!order.ok()) return order.status();
  std::unique_ptr<ReferenceProgram> p(new ReferenceProgram());
  p->graph_ = g;
  std::map<std::string, int> slot;
  for (const auto& t : p->graph_.tensors) {
    slot[t.name] = static_cast<int>(p->shapes_.size());
    p->shapes_.push_back(t.shape);
    const BoundWeight* w = t.weight ? weights.Find(t.name) : nullptr;
    if (t.weight && !w) return absl::FailedPreconditionError(StrCat("weight ", t.name, " is not bound"));
    p->weight_.push_back(w);
  }
  for (const char* need : {"tokens", "positions", "logits"})
    if (!slot.count(need)) return absl::InvalidArgumentError(StrCat("graph lacks tensor '", need, "'"));
  p->positions_slot_ = slot["positions"];
  p->logits_slot_ = slot["logits"];
  p->out_cols_ = p->shapes_[p->logits_slot_].back();
  for (size_t oi : *order) {
    const ir::Op& op = p->graph_.ops[oi];
    if (!Ops().count(op.type))
      return absl::UnimplementedError(StrCat("op '", op.name, "' (", op.type, ") has no reference implementation"));
    Step s{&op, {}, {}};
    for (const auto& n : op.inputs) s.in.push_back(n.empty() ? -1 : slot[n]);
    for (const auto& n : op.outputs) s.outs.push_back(slot[n]);
    for (size_t k = 0; k < s.in.size(); ++k) {
      const BoundWeight* w = s.in[k] >= 0 ? p->weight_[s.in[k]] : nullptr;
      if (!w) continue;
      const bool packed = (op.type == "matmul" && k == 1) || (op.type == "embed" && k == 0) ||
                          (op.type == "norm_linear" && k >= 2) || (op.type == "moe_ffn" && k >= 1 && k != 5) ||
                          (op.type == "masked_head" && k == 3);
      if (op.type == "masked_head" && k == 2) {  // the vocabulary ordering: token ids
        if (w->type != TensorType::I32)
          return absl::InvalidArgumentError(StrCat("op '", op.name, "': the token ordering ", op.inputs[k],
                                                   " must be I32"));
        continue;
      }
      if (!packed && w->type != TensorType::F32)
        return absl::UnimplementedError(StrCat("op '", op.name, "' reads weight ", op.inputs[k],
                                               " element-wise; it must be F32"));
      if (packed && op.type != "embed" && kernels::VecDotRef(w->type) == nullptr)
        return absl::UnimplementedError(StrCat("op '", op.name, "': weight ", op.inputs[k], " has type ",
                                               TensorTypeName(static_cast<uint32_t>(w->type)),
                                               ", which has no scalar dot"));
    }
    if (op.type == "attention" && (s.in.size() < 3 || s.in[1] < 0)) {
      if (auto st = CheckSharedKvRead(op, p->kv_layers_, p->shapes_[s.in[0]]); !st.ok()) return st;
    } else if (op.type == "attention") {
      const ir::Shape& k = p->shapes_[s.in[1]];
      const ir::Shape& v = p->shapes_[s.in[2]];
      const auto layer = static_cast<size_t>(op.Int("layer"));
      if (p->kv_layers_.size() <= layer) p->kv_layers_.resize(layer + 1);
      p->kv_layers_[layer] = KvLayerShape{k[1], k[2], v[2]};
    }
    p->steps_.push_back(std::move(s));
  }
  for (const auto& kl : p->kv_layers_)
    if (!kl.n_head_kv) return absl::InvalidArgumentError("attention layers are not numbered 0..n-1");
  return std::unique_ptr<Program>(std::move(p));
}

absl::Status ReferenceProgram::Run(const int32_t* tokens, const int32_t* positions, int64_t T,
                                   const std::vector<int64_t>& rows, KvCache& cache, const RunContext& ctx,
                                   std::vector<float>* out) const {
  if (ctx.weights != nullptr)
    return absl::FailedPreconditionError("the reference backend reads weights from their bindings only (no storage plan)");
  for (int64_t r : rows)
    if (r < 0 || r >= T) return absl::OutOfRangeError(StrCat("output row ", r, " outside the batch of ", T));
  for (int64_t t = 0; t < T; ++t)
    if (positions[t] < 0 || positions[t] >= cache.n_ctx())
      return absl::OutOfRangeError(StrCat("position ", positions[t], " outside the context of ", cache.n_ctx()));
  std::vector<Vec> buf(shapes_.size());
  for (const Step& s : steps_) {
    if (auto st = RunStep(s, buf, tokens, positions, T, rows, cache, ctx); !st.ok())
      return absl::Status(st.code(), StrCat("op '", s.op->name, "': ", std::string(st.message())));
  }
  *out = std::move(buf[logits_slot_]);
  return absl::OkStatus();
}

absl::Status ReferenceProgram::RunStep(const Step& s, std::vector<Vec>& buf, const int32_t* tokens,
                                       const int32_t* positions, int64_t T, const std::vector<int64_t>& rows,
                                       KvCache& cache, const RunContext& ctx) const {
  const ir::Op& op = *s.op;
  const std::string& type = op.type;
  const int64_t R = static_cast<int64_t>(rows.size());
  auto F = [&](size_t k) -> const float* {
    if (k >= s.in.size() || s.in[k] < 0) return nullptr;
    const int sl = s.in[k];
    return weight_[sl] ? reinterpret_cast<const float*>(weight_[sl]->data) : buf[sl].data();
  };
  auto W = [&](size_t k) -> const BoundWeight* { return k < s.in.size() && s.in[k] >= 0 ? weight_[s.in[k]] : nullptr; };
  auto numel = [&](int sl) { return Numel(shapes_[sl], T, R); };
  auto cols_of = [&](int sl) { return shapes_[sl].empty() ? int64_t{1} : shapes_[sl].back(); };
  for (int o : s.outs) buf[o].assign(static_cast<size_t>(numel(o)), 0.0f);
  float* y = buf[s.outs[0]].data();
  const int64_t n = numel(s.outs[0]), cols = cols_of(s.outs[0]);
  if (type == "embed") {
    const BoundWeight& w = *W(0);
    const int32_t* ids = s.in[1] == positions_slot_ ? positions : tokens;
    for (int64_t t = 0; t < T; ++t) {
      if (ids[t] < 0 || ids[t] >= w.shape[0])
        return absl::OutOfRangeError(StrCat("id ", ids[t], " outside the table's ", w.shape[0], " rows"));
      if (auto st = DequantizeRow(w.type, w.data + ids[t] * w.row_bytes, w.shape[1], y + t * w.shape[1]); !st.ok())
        return st;
    }
  } else if (type == "rms_norm") {
    const int64_t c = cols_of(s.in[0]);
    RmsNormRef(F(0), F(1), n / c, c, op.Float("eps"), y);
  } else if (type == "layer_norm") {
    const int64_t c = cols_of(s.in[0]);
    LayerNormRef(F(0), F(1), F(2), n / c, c, op.Float("eps"), y);
  } else if (type == "matmul") {
    const int64_t k = cols_of(s.in[0]);
    return MatMulRef(*W(1), F(0), numel(s.in[0]) / k, y);
  } else if (type == "norm_linear") {
    const int64_t c = cols_of(s.in[0]), rows_n = numel(s.in[0]) / c;
    Vec h(static_cast<size_t>(rows_n * c));
    RmsNormRef(F(0), F(1), rows_n, c, op.Float("eps"), h.data());
    const std::string act = op.Str("act");
    if (act == "swiglu" || act == "geglu") {
      Vec up(static_cast<size_t>(n));
      if (auto st = MatMulRef(*W(2), h.data(), rows_n, y); !st.ok()) return st;
      if (auto st = MatMulRef(*W(3), h.data(), rows_n, up.data()); !st.ok()) return st;
      for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>((act == "swiglu" ? SiluRef(y[i]) : GeluRef(y[i])) * up[i]);
      return absl::OkStatus();
    }
    for (size_t k = 0; k < s.outs.size(); ++k)
      if (auto st = MatMulRef(*W(2 + k), h.data(), rows_n, buf[s.outs[k]].data()); !st.ok()) return st;
  } else if (type == "add" || type == "mul") {
    const float *a = F(0), *b = F(1);
    const int64_t nb = numel(s.in[1]);
    for (int64_t i = 0; i < n; ++i) y[i] = type == "add" ? a[i] + b[i % nb] : a[i] * b[i % nb];
  } else if (type == "scale") {
    const float* a = F(0);
    const auto f = static_cast<float>(op.Float("scale"));
    for (int64_t i = 0; i < n; ++i) y[i] = a[i] * f;
  } else if (type == "softcap") {
    const float* a = F(0);
    const double cap = op.Float("cap");
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(cap * std::tanh(a[i] / cap));
  } else if (type == "silu" || type == "gelu") {
    const float* a = F(0);
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(type == "silu" ? SiluRef(a[i]) : GeluRef(a[i]));
  } else if (type == "swiglu" || type == "geglu") {
    const float *g = F(0), *u = F(1);
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>((type == "swiglu" ? SiluRef(g[i]) : GeluRef(g[i])) * u[i]);
  } else if (type == "swiglu_fused") {
    const float* a = F(0);
    for (int64_t r = 0; r < n / cols; ++r)
      for (int64_t i = 0; i < cols; ++i)
        y[r * cols + i] = static_cast<float>(SiluRef(a[r * 2 * cols + i]) * a[r * 2 * cols + cols + i]);
  } else if (type == "reshape") {
    std::memcpy(y, F(0), static_cast<size_t>(n) * sizeof(float));
  } else if (type == "concat") {
    const int64_t ca = cols_of(s.in[0]), cb = cols_of(s.in[1]);
    for (int64_t r = 0; r < n / cols; ++r) {
      std::memcpy(y + r * cols, F(0) + r * ca, ca * sizeof(float));
      std::memcpy(y + r * cols + ca, F(1) + r * cb, cb * sizeof(float));
    }
  } else if (type == "slice") {
    const int64_t c = cols_of(s.in[0]), begin = op.Int("begin"), size = op.Int("size");
    for (int64_t r = 0; r < n / size; ++r) std::memcpy(y + r * size, F(0) + r * c + begin, size * sizeof(float));
  } else if (type == "rope") {
    const ir::Shape& xs = shapes_[s.in[0]];
    const float* factors = F(2);
    // LongRoPE: the long factors once the context exceeds long_factors_ctx (llama.cpp's get_rope_factors).
    if (F(3) && cache.n_ctx() > op.Int("long_factors_ctx", 0)) factors = F(3);
    RopeRef(op, F(0), positions, T, xs[1], xs[2], factors, y);
  } else if (type == "attention") {
    AttentionRef(op, cache, F(0), F(1), F(2), positions, T, shapes_[s.in[0]][1], y);
  } else if (type == "output_rows") {
    for (int64_t r = 0; r < R; ++r) std::memcpy(y + r * cols, F(0) + rows[r] * cols, cols * sizeof(float));
  } else if (type == "masked_head") {
    return MaskedHeadRef(F(0), F(1), reinterpret_cast<const int32_t*>(F(2)), *W(3), n / cols, cols_of(s.in[1]),
                         op.Int("top_k"), y);
  } else if (type == "moe_ffn") {
    std::vector<const BoundWeight*> w(10, nullptr);
    for (size_t k = 1; k < 10; ++k) w[k] = k == 5 ? nullptr : W(k);
    return MoeRef(op, w, F(5), ctx.moe_top_k, F(0), F(10), F(11), n / cols, y);
  } else {
    return absl::UnimplementedError(StrCat("no reference implementation of ", type));
  }
  return absl::OkStatus();
}

}  // namespace

Capabilities ReferenceBackend::capabilities() const {
  Capabilities c;
  c.gpu = false;
  c.real_device = false;  // an emulation for tests: "auto" never picks it
  c.host_memory = true;
  c.quantized_weights = true;
  return c;
}

bool ReferenceBackend::SupportsOp(const std::string& op_type) const { return Ops().count(op_type) > 0; }

absl::StatusOr<std::unique_ptr<DeviceBuffer>> ReferenceBackend::Allocate(uint64_t bytes) const {
  return std::unique_ptr<DeviceBuffer>(new VectorBuffer(bytes));
}

absl::StatusOr<std::unique_ptr<Program>> ReferenceBackend::Compile(const ir::Graph& g,
                                                                  const runtime::WeightSet& weights) const {
  return ReferenceProgram::Create(g, weights);
}

const ReferenceBackend& Registered() {
  static const ReferenceBackend backend;
  static const absl::Status registered = RegisterBackend(&backend);
  (void)registered;
  return backend;
}

}  // namespace uaii::backends::reference
