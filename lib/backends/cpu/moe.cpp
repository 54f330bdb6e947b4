#include "backends/cpu/moe.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>

#include "kernels/matmul.h"
#include "backends/cpu/cpu_ops.h"
#include "backends/cpu/linear.h"
#include "runtime/moe_cache.h"
#include "util/str_cat.h"

namespace uaii::backends::cpu {
// Expert and shared-expert matmuls on resident bytes (bank slices, cache slices).
constexpr auto Mm = ResidentLinear;

BoundWeight ExpertSlice(const BoundWeight& bank, int64_t e) {
  BoundWeight w = bank;
  const uint64_t stride = bank.bytes / static_cast<uint64_t>(bank.shape[0]);
  w.shape = {bank.shape[1], bank.shape[2]};
  w.data = bank.data ? bank.data + e * stride : nullptr;
  w.bytes = stride;
  w.offset = bank.offset + e * stride;
  w.interleaved_offset = bank.interleaved_offset + e * stride;
  return w;
}

absl::Status CheckMoeOp(const ir::Op& op, const std::vector<int>& in,
                        const std::vector<const BoundWeight*>& weights, MoeParams* p) {
  static const char* kRole[] = {"x", "router", "up_exps", "gate_exps", "down_exps", "exp_probs_b",
                                "up_shexp", "gate_shexp", "down_shexp", "gate_inp_shexp"};
  auto bound = [&](size_t k) { return k < in.size() && in[k] >= 0 ? weights[in[k]] : nullptr; };
  for (size_t k = 1; k < in.size() && k < 10; ++k) {
    if (in[k] < 0) continue;
    const BoundWeight* w = bound(k);
    if (!w)
      return absl::UnimplementedError(StrCat("op '", op.name, "' (moe_ffn): input ", kRole[k], " (", op.inputs[k],
                                             ") must be a weight"));
    if (k == 5) {
      if (w->type != TensorType::F32)
        return absl::UnimplementedError(StrCat("op '", op.name, "': selection bias ", op.inputs[k], " must be F32"));
      continue;
    }
    if (!HasMatMulKernel(w->type))
      return absl::UnimplementedError(StrCat("op '", op.name, "': weight ", op.inputs[k], " has type ",
                                             TensorTypeName(static_cast<uint32_t>(w->type)),
                                             ", which has no matmul kernel"));
    if (k >= 2 && k <= 4 && (w->shape.size() != 3 || w->shape[0] <= 0 || w->bytes % w->shape[0] != 0))
      return absl::InvalidArgumentError(StrCat("op '", op.name, "': expert bank ", op.inputs[k], " (", w->bytes,
                                               " bytes) does not split into ", w->shape.empty() ? 0 : w->shape[0],
                                               " equal expert slices"));
  }
  p->fused_gate_up = op.Int("fused_gate_up", 0) != 0;
  for (size_t k = 1; k <= 4; ++k) {
    if (k == 3 && p->fused_gate_up) {
      if (bound(k)) return absl::InvalidArgumentError(StrCat("op '", op.name, "': a fused gate|up bank takes no gate_exps"));
      continue;
    }
    if (!bound(k)) return absl::InvalidArgumentError(StrCat("op '", op.name, "': missing ", kRole[k]));
  }
  if (in.size() > 11 && in[11] >= 0 && (!bound(11) || bound(11)->type != TensorType::F32))
    return absl::UnimplementedError(StrCat("op '", op.name, "': down_scale ", op.inputs[11], " must be an F32 weight"));
  p->gelu = op.Str("act", "silu") == "gelu";
  p->n_expert = bound(1)->shape[0];
  p->n_expert_used = op.Int("n_expert_used");
  p->gating = op.Str("gating") == "sigmoid" ? MoeGating::kSigmoid : MoeGating::kSoftmax;
  p->norm_w = op.Int("norm_w", 0) != 0;
  p->w_scale = static_cast<float>(op.Float("w_scale", 0.0));
  if (p->n_expert_used < 1 || p->n_expert_used > p->n_expert)
    return absl::InvalidArgumentError(StrCat("op '", op.name, "': n_expert_used ", p->n_expert_used, " outside 1..",
                                             p->n_expert));
  return absl::OkStatus();
}

void MoeGate(MoeGating g, float* logits, int64_t T, int64_t n_expert) {
  for (int64_t t = 0; t < T; ++t) {
    float* v = logits + t * n_expert;
    if (g == MoeGating::kSoftmax) {
      SoftmaxGgml(v, n_expert);
    } else {
      for (int64_t i = 0; i < n_expert; ++i) v[i] = 1.0f / (1.0f + std::exp(-v[i]));
    }
  }
}

void MoeRoute(const MoeParams& p, const float* probs, const float* bias, int64_t T, int32_t* sel, float* w) {
  const int64_t n = p.n_expert, k = p.n_expert_used;
  std::vector<int32_t> idx(n);
  std::vector<float> score(n);
  for (int64_t t = 0; t < T; ++t) {
    const float* pr = probs + t * n;
    for (int64_t i = 0; i < n; ++i) score[i] = bias ? pr[i] + bias[i] : pr[i];
    // ggml_argsort (DESC) on the CPU: std::sort of 0..n-1 with this comparator. The
    // same call on the same input reproduces its order, ties included (libstdc++'s
    // insertion sort keeps ties in index order for n <= 16).
    std::iota(idx.begin(), idx.end(), 0);
    std::sort(idx.begin(), idx.end(), [&](int32_t a, int32_t b) { return score[a] > score[b]; });
    float* wt = w + t * k;
    for (int64_t j = 0; j < k; ++j) {
      sel[t * k + j] = idx[j];
      wt[j] = pr[idx[j]];
    }
    if (p.norm_w) {
      double sd = 0;  // ggml_sum_rows (ggml_vec_sum_f32): in order, in double
      for (int64_t j = 0; j < k; ++j) sd += static_cast<double>(wt[j]);
      float s = static_cast<float>(sd);
      s = std::max(s, 6.103515625e-5f);  // ggml_clamp to the smallest f16 normal
      for (int64_t j = 0; j < k; ++j) wt[j] = wt[j] / s;
    }
    if (p.w_scale != 0.0f && p.w_scale != 1.0f)
      for (int64_t j = 0; j < k; ++j) wt[j] *= p.w_scale;
  }
}

namespace {
// Decode-step prefetch: the next MoE layer's router applied to this layer's input
// (the residual stream changes little from one layer to the next) predicts its top-k
// experts; their slices are read in the background while this layer and the next
// attention compute. A wrong guess costs reads, never results: the next layer routes
// on its own input and acquires what it needs.
void PrefetchNextLayer(const MoeParams& p, const MoeWeights& w, const float* x) {
  if (w.router_x) x = w.router_x;
  ExpertCache& c = *w.cache;
  const uint64_t step = w.up_exps->offset;
  c.NoteStep(step, {*w.gate_inp, *w.up_exps, w.gate_exps ? *w.gate_exps : BoundWeight{}, *w.down_exps});
  auto next = c.NextStep(step);
  if (!next || !next->router.data || next->router.shape.size() != 2 || next->router.shape[1] != w.gate_inp->shape[1])
    return;
  const int64_t n = next->router.shape[0];
  std::vector<float> logits(static_cast<size_t>(n));
  if (!MatMul(next->router.type, next->router.data, n, next->router.shape[1], x, 1, logits.data(), nullptr).ok())
    return;
  std::vector<int32_t> idx(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  const int64_t k = std::min(p.n_expert_used, n);
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  std::sort(idx.begin(), idx.begin() + k);  // file-offset order
  std::vector<BoundWeight> slices;
  for (int64_t j = 0; j < k; ++j)
    for (const BoundWeight* bank : {&next->up, &next->gate, &next->down})
      if (!bank->shape.empty()) slices.push_back(ExpertSlice(*bank, idx[j]));  // no gate bank when fused
  c.Prefetch(std::move(slices));
}
}  // namespace

MoeParams WithTopK(const MoeParams& p, int64_t top_k) {
  MoeParams q = p;
  if (top_k > 0) q.n_expert_used = std::min(q.n_expert_used, top_k);  // lowers k, never raises it
  return q;
}

absl::Status MoeFfn(const MoeParams& p, const MoeWeights& w, const float* x, int64_t T, float* y,
                    ThreadPool* pool) {
  const int64_t n = p.n_expert, k = p.n_expert_used;
  // The banks each expert reads: up, gate, down; or gate|up, down.
  std::vector<const BoundWeight*> banks = {w.up_exps, w.gate_exps, w.down_exps};
  if (p.fused_gate_up) banks = {w.up_exps, w.down_exps};
  const int64_t nb = static_cast<int64_t>(banks.size());
  bool resident = true;
  for (const BoundWeight* b : banks) resident &= b->data != nullptr;
  if (!w.cache && !resident)
    return absl::FailedPreconditionError("moe: expert banks are neither resident nor served by an expert cache");
  const int64_t E = w.up_exps->shape[2], F = w.up_exps->shape[1] / (p.fused_gate_up ? 2 : 1);
  if (k <= 0 || k > n)
    return absl::InvalidArgumentError(StrCat("moe: expert_used_count ", k, " outside 1..", n));
  // Router: logits [T, n_expert] -> probabilities -> selection and weights.
  std::vector<float> probs(static_cast<size_t>(T * n));
  if (auto st = Mm(*w.gate_inp, w.router_x ? w.router_x : x, T, probs.data(), pool); !st.ok()) return st;
  MoeGate(p.gating, probs.data(), T, n);
  std::vector<int32_t> sel(static_cast<size_t>(T * k));
  std::vector<float> wt(static_cast<size_t>(T * k));
  MoeRoute(p, probs.data(), w.exp_probs_b, T, sel.data(), wt.data());

  // Experts in index order (= file-offset order): gather the rows routed to e, run
  // its three slices once, scatter into out[t, j, :].
  std::vector<float> out(static_cast<size_t>(T * k * E));
  std::vector<std::vector<int64_t>> rows(n);  // entries t * k + j routed to e
  for (int64_t i = 0; i < T * k; ++i) rows[sel[i]].push_back(i);
  std::vector<float> xs, up, gate, down, gate_up;
  std::vector<const uint8_t*> cached(nb * n, nullptr);  // banks[b] of expert e at nb * e + b
  // With a cache, the routed experts are acquired in groups that fit its capacity (a
  // prefill batch may route to more experts than it holds), each group's misses read
  // together in file-offset order; a decode step is one group.
  for (int64_t e0 = 0; e0 < n;) {
    int64_t e1 = n;
    if (w.cache) {
      std::vector<BoundWeight> want;
      std::vector<int64_t> at;
      uint64_t bytes = 0;
      const uint64_t cap = w.cache->stats().capacity_bytes;
      for (e1 = e0; e1 < n; ++e1) {
        if (rows[e1].empty()) continue;
        uint64_t b = 0;
        for (const BoundWeight* bank : banks) b += ExpertSlice(*bank, e1).bytes;
        if (!at.empty() && bytes + b > cap) break;
        bytes += b;
        for (const BoundWeight* bank : banks) want.push_back(ExpertSlice(*bank, e1));
        at.push_back(e1);
      }
      std::vector<const uint8_t*> got;
      if (auto st = w.cache->Acquire(want, &got); !st.ok()) return st;
      if (T == 1 && w.cache->prefetch_enabled()) PrefetchNextLayer(p, w, x);
      for (size_t i = 0; i < at.size(); ++i)
        for (int64_t b = 0; b < nb; ++b) cached[nb * at[i] + b] = got[nb * i + b];
    }
    for (int64_t e = e0; e < e1; ++e) {
      const auto& r = rows[e];
      if (r.empty()) continue;
      const int64_t m = static_cast<int64_t>(r.size());
      xs.resize(m * E);
      for (int64_t i = 0; i < m; ++i) std::copy_n(x + (r[i] / k) * E, E, xs.data() + i * E);
      up.resize(m * F);
      gate.resize(m * F);
      down.resize(m * E);
      std::array<BoundWeight, 3> slice;
      for (int64_t b = 0; b < nb; ++b) {
        slice[b] = ExpertSlice(*banks[b], e);
        if (w.cache) {  // the cache's row-major bytes, not a resident interleaved copy
          slice[b].data = cached[nb * e + b];
          slice[b].interleaved.reset();
        }
      }
      const BoundWeight& sd = slice[nb - 1];
      if (p.fused_gate_up) {
        // One product [m, 2F], split as llama.cpp views it: gate columns, then up.
        gate_up.resize(m * 2 * F);
        if (auto st = Mm(slice[0], xs.data(), m, gate_up.data(), pool); !st.ok()) return st;
        for (int64_t i = 0; i < m; ++i) {
          std::copy_n(gate_up.data() + i * 2 * F, F, gate.data() + i * F);
          std::copy_n(gate_up.data() + i * 2 * F + F, F, up.data() + i * F);
        }
      } else {
        if (auto st = Mm(slice[0], xs.data(), m, up.data(), pool); !st.ok()) return st;
        if (auto st = Mm(slice[1], xs.data(), m, gate.data(), pool); !st.ok()) return st;
      }
      (p.gelu ? Geglu : Swiglu)(gate.data(), up.data(), m * F, gate.data());
      if (auto st = Mm(sd, gate.data(), m, down.data(), pool); !st.ok()) return st;
      if (w.down_scale) {  // ggml_mul by the selected experts' scales, before the weights
        const float s = w.down_scale[e];
        for (float& v : down) v *= s;
      }
      for (int64_t i = 0; i < m; ++i) std::copy_n(down.data() + i * E, E, out.data() + r[i] * E);
    }
    e0 = e1;
  }
  // y[t] = sum over j in selection order of out[t, j] * w[t, j] (ggml_mul, then a
  // chain of ggml_add as build_moe_ffn aggregates).
  for (int64_t t = 0; t < T; ++t) {
    float* yt = y + t * E;
    for (int64_t j = 0; j < k; ++j) {
      const float* o = out.data() + (t * k + j) * E;
      const float s = wt[t * k + j];
      if (j == 0)
        for (int64_t c = 0; c < E; ++c) yt[c] = o[c] * s;
      else
        for (int64_t c = 0; c < E; ++c) yt[c] = yt[c] + o[c] * s;
    }
  }
  if (!w.up_shexp) return absl::OkStatus();
  // Shared expert: build_ffn (SwiGLU), optionally times a per-token sigmoid gate
  // computed as silu(g) / g (llama.cpp qwen2moe; scalar expf since the row has one
  // element), then added to the routed sum.
  const int64_t Fs = w.up_shexp->shape[0];
  std::vector<float> su(static_cast<size_t>(T * Fs)), sg(static_cast<size_t>(T * Fs)), sdn(static_cast<size_t>(T * E));
  if (auto st = Mm(*w.up_shexp, x, T, su.data(), pool); !st.ok()) return st;
  if (auto st = Mm(*w.gate_shexp, x, T, sg.data(), pool); !st.ok()) return st;
  Swiglu(sg.data(), su.data(), T * Fs, sg.data());
  if (auto st = Mm(*w.down_shexp, sg.data(), T, sdn.data(), pool); !st.ok()) return st;
  std::vector<float> g(static_cast<size_t>(T), 1.0f);
  if (w.gate_inp_shexp) {
    BoundWeight gw = *w.gate_inp_shexp;
    gw.shape = {1, E};
    if (auto st = Mm(gw, x, T, g.data(), pool); !st.ok()) return st;
    for (int64_t t = 0; t < T; ++t) {
      const float v = g[t];
      g[t] = (v / (1.0f + std::exp(-v))) / v;
    }
  }
  for (int64_t t = 0; t < T; ++t)
    for (int64_t c = 0; c < E; ++c) {
      const float s = w.gate_inp_shexp ? sdn[t * E + c] * g[t] : sdn[t * E + c];
      y[t * E + c] = y[t * E + c] + s;
    }
  return absl::OkStatus();
}

}  // namespace uaii::backends::cpu
