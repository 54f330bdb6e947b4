#include "backends/vulkan/vulkan_moe.h"

#include <algorithm>

#include "util/str_cat.h"

namespace uaii::backends::vulkan {
namespace {

// Input indices (docs/ir.md's moe_ffn row).
// kUp holds the gate|up bank when fused_gate_up (kGate then empty); kRouterX, the
// router's own input, is an activation (passed to RecordMoe), not a weight.
enum : size_t {
  kRouter = 1, kUp = 2, kGate = 3, kDown = 4, kBias = 5, kUpS = 6, kGateS = 7, kDownS = 8, kGateInpS = 9,
  kRouterX = 10, kDownScale = 11, kInputs = 12
};

constexpr uint64_t kAlign = 256;  // each scratch region's start, in bytes

uint64_t Aligned(uint64_t b) { return (b + kAlign - 1) / kAlign * kAlign; }
uint32_t U32(int64_t v) { return static_cast<uint32_t>(v); }

const DeviceWeight* At(const std::vector<const DeviceWeight*>& w, size_t k) { return k < w.size() ? w[k] : nullptr; }

bool Fused(const ir::Op& op) { return op.Int("fused_gate_up", 0) != 0; }

struct Dims {
  int64_t n = 0, E = 0, F = 0, Fs = 0;
  bool fused = false;  // one gate|up bank: 2F rows per expert
};

Dims DimsOf(const ir::Op& op, const std::vector<const DeviceWeight*>& w) {
  Dims d;
  d.fused = Fused(op);
  d.n = w[kRouter]->rows;
  d.E = w[kRouter]->cols;
  d.F = d.n > 0 ? w[kUp]->rows / d.n / (d.fused ? 2 : 1) : 0;
  d.Fs = At(w, kUpS) ? At(w, kUpS)->rows : 0;
  return d;
}

// The scratch's regions (byte offsets) for T rows of k experts each.
struct Layout {
  uint64_t logits, route, up, gate, down, s_up, s_gate, s_down, gate_up, total;
};

Layout Lay(const Dims& d, int64_t T, int64_t k) {
  Layout l{};
  uint64_t at = 0;
  auto take = [&](int64_t floats) {
    const uint64_t here = at;
    at += Aligned(static_cast<uint64_t>(std::max<int64_t>(floats, 1)) * 4);
    return here;
  };
  l.logits = take(T * d.n);
  l.route = take(2 * T * k + T);  // ids [T, k], weights [T, k], the shared expert's gate logits [T]
  l.up = take(T * k * d.F);
  l.gate = take(T * k * d.F);
  l.down = take(T * k * d.E);
  l.s_up = take(T * d.Fs);
  l.s_gate = take(T * d.Fs);
  l.s_down = take(T * d.E);
  l.gate_up = take(d.fused ? T * k * 2 * d.F : 0);  // the fused bank's products, split into up and gate
  l.total = at;
  return l;
}

int64_t ExpertsUsed(const ir::Op& op, int64_t top_k) {
  int64_t k = op.Int("n_expert_used");
  if (top_k > 0) k = std::min(k, top_k);  // lowers k, never raises it
  return k;
}

}  // namespace

std::vector<const DeviceWeight*> MoeInputs(const std::vector<int>& in,
                                           const std::vector<std::unique_ptr<DeviceWeight>>& slots) {
  std::vector<const DeviceWeight*> w(kInputs, nullptr);
  for (size_t k = 1; k < in.size() && k < w.size(); ++k)
    if (k != kRouterX && in[k] >= 0 && static_cast<size_t>(in[k]) < slots.size()) w[k] = slots[in[k]].get();
  return w;
}

absl::Status CheckMoe(const ir::Op& op, const std::vector<const DeviceWeight*>& w) {
  static const char* kRole[] = {"x", "router", "up_exps", "gate_exps", "down_exps", "exp_probs_b",
                                "up_shexp", "gate_shexp", "down_shexp", "gate_inp_shexp"};
  const bool fused = Fused(op);
  for (size_t k = kRouter; k <= kDown; ++k)
    if (!At(w, k) && !(fused && k == kGate))
      return absl::InvalidArgumentError(StrCat("moe_ffn without a weight for ", kRole[k]));
  if (fused && At(w, kGate)) return absl::InvalidArgumentError("a fused gate|up bank takes no gate_exps");
  const DeviceWeight &router = *w[kRouter], &up = *w[kUp], &gate = fused ? *w[kUp] : *w[kGate], &down = *w[kDown];
  const int64_t n = router.rows, E = router.cols, per = fused ? 2 : 1;
  if (n <= 0 || up.rows % (n * per) != 0)
    return absl::InvalidArgumentError(StrCat("expert banks of ", up.rows, " rows over ", n, " experts"));
  const int64_t F = up.rows / n / per;
  if (up.cols != E || gate.rows != up.rows || gate.cols != E || down.rows != n * E || down.cols != F)
    return absl::InvalidArgumentError(StrCat("expert banks ", fused ? "gate|up [" : "up [", up.rows, ", ", up.cols,
                                             "], gate [", gate.rows, ", ", gate.cols, "], down [", down.rows, ", ",
                                             down.cols, "] for ", n, " experts of ", E, " columns"));
  if (const DeviceWeight* s = At(w, kDownScale); s && s->cols != n)
    return absl::InvalidArgumentError(StrCat("down_scale of ", s->cols, " elements for ", n, " experts"));
  const std::string act = op.Str("act", "silu");
  if (act != "silu" && act != "gelu") return absl::InvalidArgumentError(StrCat("expert activation '", act, "'"));
  if (const DeviceWeight* b = At(w, kBias); b && b->cols != n)
    return absl::InvalidArgumentError(StrCat("a selection bias of ", b->cols, " elements for ", n, " experts"));
  if (const DeviceWeight* us = At(w, kUpS)) {
    const DeviceWeight *gs = At(w, kGateS), *ds = At(w, kDownS);
    if (!gs || !ds || us->cols != E || gs->rows != us->rows || gs->cols != E || ds->rows != E || ds->cols != us->rows)
      return absl::InvalidArgumentError("the shared expert's up / gate [Fs, E] and down [E, Fs] do not match");
  }
  if (const DeviceWeight* g = At(w, kGateInpS); g && (g->rows != 1 || g->cols != E || !At(w, kUpS)))
    return absl::InvalidArgumentError("the shared expert's gate is not [E] or has no shared expert");
  const int64_t k = op.Int("n_expert_used");
  if (k < 1 || k > n) return absl::InvalidArgumentError(StrCat("n_expert_used ", k, " outside 1..", n));
  const std::string gating = op.Str("gating");
  if (gating != "softmax" && gating != "sigmoid") return absl::InvalidArgumentError(StrCat("gating '", gating, "'"));
  return absl::OkStatus();
}

uint64_t MoeScratchBytes(const ir::Op& op, const std::vector<const DeviceWeight*>& w, int64_t rows) {
  if (!At(w, kRouter) || !At(w, kUp)) return 0;
  return Lay(DimsOf(op, w), std::max<int64_t>(rows, 1), ExpertsUsed(op, 0)).total;
}

absl::Status RecordMoe(Recorder& rec, const DeviceInfo& info, const ir::Op& op,
                       const std::vector<const DeviceWeight*>& w, Range x, Range router_x, Range y, int64_t rows,
                       int64_t top_k, const Buffer& scratch, const Buffer* stage) {
  if (rows <= 0) return absl::OkStatus();
  const Dims d = DimsOf(op, w);
  const int64_t T = rows, k = ExpertsUsed(op, top_k);
  if (k < 1 || k > d.n) return absl::InvalidArgumentError(StrCat("moe_ffn: ", k, " experts per row of ", d.n));
  const Layout l = Lay(d, T, k);
  if (l.total > scratch.bytes())
    return absl::InternalError(StrCat("moe_ffn: scratch of ", scratch.bytes(), " bytes, ", l.total, " needed"));
  auto region = [&](uint64_t at, int64_t floats) {
    return Range{&scratch, at, static_cast<uint64_t>(std::max<int64_t>(floats, 1)) * 4};
  };
  const bool per_row = info.cpu_implementation;  // matmul_rows.comp's reasoning
  const uint32_t max_x = std::min<uint32_t>(info.max_workgroup_count[0], 65535);
  const int64_t max_z = std::max<int64_t>(1, std::min<uint32_t>(info.max_workgroup_count[2], 65535));

  // out[rows_x, w.rows] = x[rows_x, w.cols] . w^T (the matmul kernels, per chunk, in
  // batches of at most max_z rows).
  auto product = [&](const DeviceWeight& m, Range in, int64_t rows_x, Range out) -> absl::Status {
    for (int64_t t0 = 0; t0 < rows_x; t0 += max_z) {
      const int64_t nt = std::min(max_z, rows_x - t0);
      const Range xi{in.buffer, in.offset + static_cast<uint64_t>(t0 * m.cols) * 4, static_cast<uint64_t>(nt * m.cols) * 4};
      const Range yo{out.buffer, out.offset + static_cast<uint64_t>(t0 * m.rows) * 4, static_cast<uint64_t>(nt * m.rows) * 4};
      for (const auto& c : m.chunks) {
        uint32_t gx, gy;
        Grid(static_cast<uint64_t>(c.rows), per_row ? 64 : 1, max_x, &gx, &gy);
        const Buffer& wb = ChunkForKernel(m, c, rec, stage);
        if (auto st = rec.Dispatch((per_row ? "matmul_rows_" : "matmul_") + m.layout, {Range{&wb, 0, 0}, xi, yo},
                                   {U32(m.cols), U32(c.rows), U32(c.row_begin), U32(m.rows), U32(nt),
                                    static_cast<uint32_t>(m.row_words)},
                                   gx, gy, static_cast<uint32_t>(nt));
            !st.ok())
          return st;
      }
    }
    return absl::OkStatus();
  };
  const Range ids = region(l.route, T * k);
  // out[s, N] = expert ids[s]'s N rows of bank . in[s / x_div] for the T * k slots.
  auto experts = [&](const DeviceWeight& bank, Range in, int64_t x_div, Range out) -> absl::Status {
    const int64_t N = bank.rows / d.n, slots = T * k;
    uint32_t gx, gy;
    Grid(static_cast<uint64_t>(N), per_row ? 64 : 1, max_x, &gx, &gy);
    for (int64_t s0 = 0; s0 < slots; s0 += max_z) {
      const int64_t ns = std::min(max_z, slots - s0);
      for (const auto& c : bank.chunks)
        if (auto st = rec.Dispatch((per_row ? "moe_matmul_rows_" : "moe_matmul_") + bank.layout,
                                   {Range{c.buffer.get(), 0, 0}, in, out, ids},
                                   {U32(bank.cols), U32(c.rows), U32(c.row_begin), U32(N), U32(slots),
                                    static_cast<uint32_t>(bank.row_words), U32(x_div), U32(s0)},
                                   gx, gy, static_cast<uint32_t>(ns));
            !st.ok())
          return st;
    }
    return absl::OkStatus();
  };

  const Range logits = region(l.logits, T * d.n), route = region(l.route, 2 * T * k + T);
  // Gemma 4: the router reads its own input, and each expert's output is scaled by
  // down_scale[e] (applied to its routing weight: the same sum up to rounding).
  if (auto st = product(*w[kRouter], router_x.buffer ? router_x : x, T, logits); !st.ok()) return st;
  const DeviceWeight *bias = At(w, kBias), *scale = At(w, kDownScale);
  const double w_scale = op.Float("w_scale", 0.0);
  if (auto st = rec.Dispatch1D("moe_route",
                               {logits, bias ? Range{bias->chunks[0].buffer.get(), 0, 0} : Range{}, route,
                                scale ? Range{scale->chunks[0].buffer.get(), 0, 0} : Range{}},
                               {U32(T), U32(d.n), U32(k), op.Str("gating") == "sigmoid" ? 1u : 0u, bias ? 1u : 0u,
                                op.Int("norm_w", 0) != 0 ? 1u : 0u, Word(static_cast<float>(w_scale)),
                                scale ? 1u : 0u},
                               static_cast<uint64_t>(T));
      !st.ok())
    return st;
  const int64_t nf = T * k * d.F;
  const Range up = region(l.up, nf), gate = region(l.gate, nf), down = region(l.down, T * k * d.E);
  if (d.fused) {
    // One product [T * k, 2F] per selected expert, split as llama.cpp views it.
    const Range gu = region(l.gate_up, 2 * nf);
    if (auto st = experts(*w[kUp], x, k, gu); !st.ok()) return st;
    for (const auto& [half, begin] : {std::pair{gate, int64_t{0}}, std::pair{up, d.F}})
      if (auto st = rec.Dispatch1D("slice", {gu, half}, {U32(nf), U32(2 * d.F), U32(begin), U32(d.F)},
                                   static_cast<uint64_t>(nf));
          !st.ok())
        return st;
  } else {
    if (auto st = experts(*w[kUp], x, k, up); !st.ok()) return st;
    if (auto st = experts(*w[kGate], x, k, gate); !st.ok()) return st;
  }
  const char* act = op.Str("act", "silu") == "gelu" ? "geglu" : "swiglu";
  if (auto st = rec.Dispatch1D(act, {gate, up, gate}, {U32(nf), U32(nf)}, static_cast<uint64_t>(nf)); !st.ok())
    return st;
  if (auto st = experts(*w[kDown], gate, 1, down); !st.ok()) return st;

  const bool shared = At(w, kUpS) != nullptr, gated = shared && At(w, kGateInpS) != nullptr;
  const Range s_down = region(l.s_down, T * d.E);
  if (shared) {
    const int64_t ns = T * d.Fs;
    const Range s_up = region(l.s_up, ns), s_gate = region(l.s_gate, ns);
    if (auto st = product(*w[kUpS], x, T, s_up); !st.ok()) return st;
    if (auto st = product(*w[kGateS], x, T, s_gate); !st.ok()) return st;
    if (auto st = rec.Dispatch1D("swiglu", {s_gate, s_up, s_gate}, {U32(ns), U32(ns)}, static_cast<uint64_t>(ns)); !st.ok())
      return st;
    if (auto st = product(*w[kDownS], s_gate, T, s_down); !st.ok()) return st;
    if (gated)
      if (auto st = product(*w[kGateInpS], x, T, region(l.route + static_cast<uint64_t>(2 * T * k) * 4, T)); !st.ok())
        return st;
  }
  const int64_t n = T * d.E;
  return rec.Dispatch1D("moe_combine", {down, route, shared ? s_down : Range{}, y},
                        {U32(n), U32(d.E), U32(k), U32(T * k), shared ? 1u : 0u, gated ? 1u : 0u, U32(2 * T * k)},
                        static_cast<uint64_t>(n));
}

}  // namespace uaii::backends::vulkan
