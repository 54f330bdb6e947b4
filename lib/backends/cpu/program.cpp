#include "backends/cpu/program.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>

#include "backends/cpu/attention.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/cpu_ops.h"
#include "backends/cpu/linear.h"
#include "backends/cpu/masked_head.h"
#include "backends/cpu/moe.h"
#include "backends/cpu/stage_linear.h"
#include "backends/kv_layers.h"
#include "ir/validate.h"
#include "planner/memory_plan.h"
#include "runtime/step_profile.h"
#include "util/str_cat.h"

namespace uaii::backends::cpu {

enum class Kind {
  kEmbed, kRmsNorm, kMatMul, kAdd, kMul, kScale, kSoftcap, kSilu, kGelu, kSwiglu, kGeglu, kReshape, kRope,
  kAttention, kOutputRows, kLayerNorm, kSlice, kSwigluFused, kConcat,
  kMaskedHead, // masked_head.h
  kMoeFfn,     // moe.h
  kNormLinear  // planner fusion: rms_norm into one or more matmuls (+ gated activation)
};

struct CpuProgram::Step {
  Kind kind;
  const std::string* type = nullptr;  // the op type, for StepProfile
  std::string name;
  std::vector<int> in;       // slots, -1 = absent
  int out = -1;
  float f = 0;               // eps / scale / cap / freq_base
  float f2 = 1;              // freq_scale
  int64_t n_dims = 0;
  bool neox = false;
  int64_t begin = 0, size = 0;  // slice columns
  RopeYarn yarn;
  int64_t long_factors_ctx = 0;  // rope: long factors (input 3) when the context exceeds this
  AttentionParams attn;
  std::vector<int> outs;     // every output slot (outs[0] == out)
  int act = 0;               // norm_linear: 0 none, 1 swiglu, 2 geglu
  MoeParams moe;             // moe_ffn
};

CpuProgram::~CpuProgram() = default;

namespace {

const std::map<std::string, Kind>& Kinds() {
  static const std::map<std::string, Kind> k = {
      {"embed", Kind::kEmbed},     {"rms_norm", Kind::kRmsNorm}, {"matmul", Kind::kMatMul},
      {"add", Kind::kAdd},         {"mul", Kind::kMul},          {"scale", Kind::kScale},
      {"softcap", Kind::kSoftcap}, {"silu", Kind::kSilu},        {"gelu", Kind::kGelu},
      {"swiglu", Kind::kSwiglu},   {"geglu", Kind::kGeglu},      {"reshape", Kind::kReshape},
      {"rope", Kind::kRope}, {"concat", Kind::kConcat},       {"attention", Kind::kAttention}, {"output_rows", Kind::kOutputRows},
      {"layer_norm", Kind::kLayerNorm}, {"slice", Kind::kSlice}, {"swiglu_fused", Kind::kSwigluFused},
      {"norm_linear", Kind::kNormLinear}, {"moe_ffn", Kind::kMoeFfn},
      {"masked_head", Kind::kMaskedHead}};
  return k;
}

int64_t Numel(const ir::Shape& s, int64_t T, int64_t R) {
  int64_t n = 1;
  for (int64_t d : s) n *= d == ir::kDimTokens ? T : d == ir::kDimRows ? R : d;
  return n;
}

// Prefill's element-wise steps split their rows across the pool (decode's one row
// stays on this thread): each row's arithmetic is the same on any thread, so results
// are identical for any thread count. On one thread they are a noticeable share of a
// long prefill while the other thread waits (Gemma 3: norms, RoPE, residual adds,
// GeGLU; docs/performance.md). Below kParallelRows rows a job's hand-off costs about
// what it saves.
constexpr int64_t kParallelRows = 32;
template <typename Fn>
void ForRows(ThreadPool* pool, int64_t rows, const Fn& fn) {
  if (pool == nullptr || pool->num_threads() == 1 || rows < kParallelRows) return fn(int64_t{0}, rows);
  pool->ParallelFor(rows, fn, kParallelRows / 2);
}

// RmsNorm and a gated activation (Swiglu / Geglu) over `rows` rows of `cols`, by ForRows.
void RmsNormRows(ThreadPool* pool, const float* x, const float* w, int64_t rows, int64_t cols, float eps, float* y) {
  ForRows(pool, rows, [&](int64_t r0, int64_t r1) { RmsNorm(x + r0 * cols, w, r1 - r0, cols, eps, y + r0 * cols); });
}
void GatedRows(ThreadPool* pool, void (*act)(const float*, const float*, int64_t, float*), const float* gate,
               const float* up, int64_t rows, int64_t cols, float* y) {
  ForRows(pool, rows, [&](int64_t r0, int64_t r1) {
    act(gate + r0 * cols, up + r0 * cols, (r1 - r0) * cols, y + r0 * cols);
  });
}

}  // namespace

bool CpuProgram::Supports(const std::string& op_type) { return Kinds().count(op_type) > 0; }

absl::StatusOr<std::unique_ptr<CpuProgram>> CpuProgram::Create(const ir::Graph& g, const runtime::WeightSet& weights) {
  auto order = ir::Validate(g);
  if (!order.ok()) return order.status();
  std::unique_ptr<CpuProgram> ex(new CpuProgram());
  ex->graph_ = g;
  std::map<std::string, int> slot;
  for (const auto& t : g.tensors) {
    slot[t.name] = static_cast<int>(ex->shapes_.size());
    ex->shapes_.push_back(t.shape);
    const runtime::BoundWeight* w = nullptr;
    if (t.weight) {
      w = weights.Find(t.name);
      if (!w) return absl::FailedPreconditionError(StrCat("weight ", t.name, " is not bound"));
    }
    ex->weight_.push_back(w);
  }
  auto need = [&](const std::string& n) -> absl::StatusOr<int> {
    if (!slot.count(n)) return absl::InvalidArgumentError(StrCat("graph lacks tensor '", n, "'"));
    return slot[n];
  };
  auto tok = need("tokens");
  auto pos = need("positions");
  auto logits = need("logits");
  if (!tok.ok()) return tok.status();
  if (!pos.ok()) return pos.status();
  if (!logits.ok()) return logits.status();
  ex->tokens_slot_ = *tok;
  ex->positions_slot_ = *pos;
  ex->logits_slot_ = *logits;
  ex->out_cols_ = ex->shapes_[*logits].back();
  if (std::find(g.outputs.begin(), g.outputs.end(), "hidden") != g.outputs.end() && slot.count("hidden"))
    ex->hidden_slot_ = slot["hidden"];
  if (std::find(g.inputs.begin(), g.inputs.end(), "hidden_in") != g.inputs.end()) ex->hidden_in_slot_ = slot["hidden_in"];
  if (!ReadExternalKvLayers(g, &ex->kv_layers_))
    return absl::InvalidArgumentError("graph metadata kv_external is malformed");
  ex->external_kv_ = !ex->kv_layers_.empty();

  for (size_t oi : *order) {
    const ir::Op& op = g.ops[oi];
    auto kit = Kinds().find(op.type);
    if (kit == Kinds().end())
      return absl::UnimplementedError(StrCat("op '", op.name, "' (", op.type, ") has no CPU implementation"));
    Step s;
    s.kind = kit->second;
    s.type = &kit->first;
    s.name = op.name;
    for (const auto& n : op.inputs) s.in.push_back(n.empty() ? -1 : slot[n]);
    s.out = slot[op.outputs[0]];
    for (const auto& n : op.outputs) s.outs.push_back(slot[n]);
    // Weights read element-wise must be f32; matmul/embed weights may be packed.
    for (size_t k = 0; k < s.in.size(); ++k) {
      const BoundWeight* w = s.in[k] >= 0 ? ex->weight_[s.in[k]] : nullptr;
      const bool packed_ok = (s.kind == Kind::kMatMul && k == 1) || (s.kind == Kind::kEmbed && k == 0) ||
                             (s.kind == Kind::kNormLinear && k >= 2) ||
                             (s.kind == Kind::kMoeFfn && k >= 1 && k != 5) ||
                             (s.kind == Kind::kMaskedHead && k == 3);
      const bool ids = s.kind == Kind::kMaskedHead && k == 2;  // the vocabulary ordering
      if (ids && (!w || w->type != TensorType::I32))
        return absl::InvalidArgumentError(StrCat("op '", op.name, "' reads its token ordering ", op.inputs[k],
                                                 w ? StrCat(" as ", TensorTypeName(static_cast<uint32_t>(w->type)))
                                                   : std::string(" as an activation"),
                                                 "; it must be an I32 weight"));
      if (w && !packed_ok && !ids && w->type != TensorType::F32)
        return absl::UnimplementedError(StrCat("op '", op.name, "' reads weight ", op.inputs[k], " as ",
                                               TensorTypeName(static_cast<uint32_t>(w->type)),
                                               "; element-wise weights must be F32"));
      if (!w && packed_ok && s.kind != Kind::kMoeFfn)
        return absl::UnimplementedError(StrCat("op '", op.name, "' needs a weight as input ", k));
    }
    switch (s.kind) {
      case Kind::kRmsNorm:
      case Kind::kLayerNorm: s.f = static_cast<float>(op.Float("eps")); break;
      case Kind::kSlice:
        s.begin = op.Int("begin");
        s.size = op.Int("size");
        break;
      case Kind::kScale: s.f = static_cast<float>(op.Float("scale")); break;
      case Kind::kMaskedHead:
        s.size = op.Int("top_k");
        break;
      case Kind::kNormLinear:
        s.f = static_cast<float>(op.Float("eps"));
        s.act = op.Str("act") == "swiglu" ? 1 : op.Str("act") == "geglu" ? 2 : 0;
        break;
      case Kind::kSoftcap: s.f = static_cast<float>(op.Float("cap")); break;
      case Kind::kMoeFfn: {
        if (auto st = CheckMoeOp(op, s.in, ex->weight_, &s.moe); !st.ok()) return st;
        break;
      }
      case Kind::kRope:
        s.f = static_cast<float>(op.Float("freq_base"));
        s.f2 = static_cast<float>(op.Float("freq_scale", 1.0));
        s.n_dims = op.Int("n_dims");
        s.neox = op.Str("mode") == "neox";
        s.yarn.ext_factor = static_cast<float>(op.Float("ext_factor", 0.0));
        s.yarn.attn_factor = static_cast<float>(op.Float("attn_factor", 1.0));
        s.yarn.beta_fast = static_cast<float>(op.Float("beta_fast", 32.0));
        s.yarn.beta_slow = static_cast<float>(op.Float("beta_slow", 1.0));
        s.yarn.n_ctx_orig = op.Int("n_ctx_orig", 0);
        s.long_factors_ctx = op.Int("long_factors_ctx", 0);
        break;
      case Kind::kAttention: {
        const ir::Shape& q = ex->shapes_[s.in[0]];
        s.attn.layer = static_cast<int>(op.Int("layer"));
        s.attn.n_head = q[1];
        s.attn.scale = static_cast<float>(op.Float("scale"));
        s.attn.window = op.Int("window", 0);
        s.attn.softcap = static_cast<float>(op.Float("softcap", 0.0));
        if (s.in.size() < 3 || s.in[1] < 0) {  // a shared-KV read: the layer's writer came first
          if (auto st = CheckSharedKvRead(op, ex->kv_layers_, q); !st.ok()) return st;
          break;
        }
        const ir::Shape& k = ex->shapes_[s.in[1]];
        const ir::Shape& v = ex->shapes_[s.in[2]];
        if (ex->kv_layers_.size() <= static_cast<size_t>(s.attn.layer)) ex->kv_layers_.resize(s.attn.layer + 1);
        auto& kl = ex->kv_layers_[s.attn.layer];
        if (kl.n_head_kv && (kl.n_head_kv != k[1] || kl.head_dim_k != k[2] || kl.head_dim_v != v[2]))
          return absl::InvalidArgumentError(StrCat("attention layer ", s.attn.layer, " is used with two shapes"));
        kl = runtime::KvLayerShape{k[1], k[2], v[2]};
        break;
      }
      default: break;
    }
    ex->steps_.push_back(std::move(s));
  }
  for (const auto& kl : ex->kv_layers_)  // another model's cache may have layers this graph never reads
    if (!kl.n_head_kv && !ex->external_kv_) return absl::InvalidArgumentError("attention layers are not numbered 0..n-1");
  // The logits are computed straight into the caller's vector unless the slot is an
  // alias (a reshape's output shares its input's bytes) or another step reads it.
  ex->logits_direct_ = true;
  for (const Step& st : ex->steps_) {
    if (st.kind == Kind::kReshape && st.out == ex->logits_slot_) ex->logits_direct_ = false;
    for (int in : st.in) ex->logits_direct_ &= in != ex->logits_slot_;
  }
  return ex;
}

// The session's activation arena: slot -> byte offset, from the memory plan at the
// capacity (tokens, rows); scratch[step] is a norm_linear step's own scratch.
class CpuProgram::Arena final : public Workspace {
 public:
  int64_t tokens = 0, rows = 0;
  std::unique_ptr<DeviceBuffer> memory;
  std::vector<uint64_t> offset;   // per slot, activations only
  std::vector<uint64_t> scratch;  // per step
  // A batch of several sequences (RunBatch): their inputs end to end, the combined
  // logits, and where each sequence's tokens start. Kept so a warm step allocates nothing.
  struct Segment {
    int64_t begin = 0, T = 0;
    runtime::KvCache* cache = nullptr;
  };
  std::vector<Segment> segments;
  std::vector<int32_t> tokens_cat, positions_cat;
  std::vector<int64_t> rows_cat;
  std::vector<float> logits_cat;
  float* At(uint64_t off) const { return reinterpret_cast<float*>(static_cast<uint8_t*>(memory->host()) + off); }
};

std::unique_ptr<Workspace> CpuProgram::NewWorkspace() const { return std::make_unique<Arena>(); }

absl::Status CpuProgram::ReserveWorkspace(Workspace& ws, int64_t tokens, int64_t rows) const {
  auto* arena = dynamic_cast<Arena*>(&ws);
  if (arena == nullptr) return absl::InvalidArgumentError("CPU program: the workspace is another program's");
  if (auto st = Reserve(*arena, tokens, rows); !st.ok()) return st;
  // A batch's inputs end to end and its combined logits (RunSequences).
  arena->tokens_cat.reserve(static_cast<size_t>(tokens));
  arena->positions_cat.reserve(static_cast<size_t>(tokens));
  arena->rows_cat.reserve(static_cast<size_t>(rows));
  arena->logits_cat.reserve(static_cast<size_t>(rows * out_cols_));
  return absl::OkStatus();
}

absl::Status CpuProgram::Reserve(Arena& arena, int64_t T, int64_t R) const {
  if (arena.memory && T <= arena.tokens && R <= arena.rows) return absl::OkStatus();
  const int64_t tokens = std::max(T, arena.tokens), rows = std::max(R, arena.rows);
  auto plan = planner::PlanMemory(graph_, tokens, rows);
  if (!plan.ok()) return plan.status();
  std::map<std::string, uint64_t> at;
  for (const auto& b : plan->buffers) at[b.tensor] = b.offset;
  std::vector<uint64_t> offset(shapes_.size(), 0), scratch(steps_.size(), 0);
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = steps_[i];
    if (s.kind == Kind::kReshape) {
      offset[s.out] = offset[s.in[0]];
      continue;
    }
    for (size_t k = 0; k < s.outs.size(); ++k) {
      auto it = at.find(graph_.tensors[s.outs[k]].name);
      if (it == at.end())
        return absl::InternalError(StrCat("memory plan lacks ", graph_.tensors[s.outs[k]].name));
      offset[s.outs[k]] = it->second;
    }
    if (s.kind == Kind::kNormLinear) {
      auto it = at.find(s.name + ":scratch");
      if (it == at.end()) return absl::InternalError(StrCat("memory plan lacks the scratch of ", s.name));
      scratch[i] = it->second;
    }
  }
  auto memory = HostBuffer::Allocate(plan->arena_bytes);
  if (!memory.ok()) return memory.status();
  arena.memory = *std::move(memory);
  arena.offset = std::move(offset);
  arena.scratch = std::move(scratch);
  arena.tokens = tokens;
  arena.rows = rows;
  return absl::OkStatus();
}

absl::Status CpuProgram::Run(const int32_t* tokens, const int32_t* positions, int64_t T,
                             const std::vector<int64_t>& rows, runtime::KvCache& cache, const RunContext& ctx,
                             std::vector<float>* out) const {
  const SequenceRun one{tokens, positions, T, &rows, &cache, out};
  return RunSequences({&one, 1}, ctx);
}

absl::Status CpuProgram::RunBatch(std::span<const SequenceRun> seqs, const RunContext& ctx) const {
  return RunSequences(seqs, ctx);
}

absl::Status CpuProgram::RunSequences(std::span<const SequenceRun> seqs, const RunContext& ctx) const {
  ThreadPool* const pool = ctx.pool;
  runtime::WeightSource* const source = ctx.weights;
  if (seqs.empty()) return absl::InvalidArgumentError("CPU program: a batch of no sequences");
  if (ctx.hidden && (hidden_slot_ < 0 || seqs.size() > 1))
    return absl::FailedPreconditionError(hidden_slot_ < 0 ? "CPU program: the graph has no hidden-state output"
                                                          : "CPU program: hidden states of a batch of sequences");
  for (size_t i = 0; i < seqs.size(); ++i) {
    const SequenceRun& q = seqs[i];
    if (q.T <= 0 || q.tokens == nullptr || q.positions == nullptr || q.rows == nullptr || q.cache == nullptr ||
        q.out == nullptr)
      return absl::InvalidArgumentError(StrCat("CPU program: sequence ", i, " of the batch is incomplete"));
    for (size_t j = 0; j < i; ++j)
      if (seqs[j].cache == q.cache)
        return absl::InvalidArgumentError(StrCat("CPU program: sequences ", j, " and ", i, " share a KV cache"));
    for (int64_t r : *q.rows)
      if (r < 0 || r >= q.T) return absl::OutOfRangeError(StrCat("output row ", r, " outside the batch of ", q.T));
    for (int64_t t = 0; t < q.T; ++t)
      if (q.positions[t] < 0 || q.positions[t] >= q.cache->n_ctx())
        return absl::OutOfRangeError(
            StrCat("position ", q.positions[t], " outside the context of ", q.cache->n_ctx()));
  }
  std::unique_ptr<Workspace> own;
  Workspace* ws = ctx.workspace;
  if (ws == nullptr) ws = (own = NewWorkspace()).get();
  auto* arena = dynamic_cast<Arena*>(ws);
  if (arena == nullptr) return absl::InvalidArgumentError("CPU program: the workspace is another program's");
  // One sequence runs on the caller's arrays; several are laid end to end in the arena.
  auto& segments = arena->segments;
  segments.clear();
  const int32_t* tokens = seqs[0].tokens;
  const int32_t* positions = seqs[0].positions;
  const std::vector<int64_t>* rows_in = seqs[0].rows;
  std::vector<float>* out = seqs[0].out;
  int64_t T = 0;
  for (const SequenceRun& q : seqs) {
    segments.push_back({T, q.T, q.cache});
    T += q.T;
  }
  if (seqs.size() > 1) {
    arena->tokens_cat.clear();
    arena->positions_cat.clear();
    arena->rows_cat.clear();
    for (size_t i = 0; i < seqs.size(); ++i) {
      const SequenceRun& q = seqs[i];
      arena->tokens_cat.insert(arena->tokens_cat.end(), q.tokens, q.tokens + q.T);
      arena->positions_cat.insert(arena->positions_cat.end(), q.positions, q.positions + q.T);
      for (int64_t r : *q.rows) arena->rows_cat.push_back(segments[i].begin + r);
    }
    tokens = arena->tokens_cat.data();
    positions = arena->positions_cat.data();
    rows_in = &arena->rows_cat;
    out = &arena->logits_cat;
  }
  const std::vector<int64_t>& rows = *rows_in;
  const int64_t R = static_cast<int64_t>(rows.size());
  if (auto st = Reserve(*arena, T, R); !st.ok()) return st;
  auto numel = [&](int sl) { return Numel(shapes_[sl], T, R); };
  // A decode step's vector is reused every step, so it already has the size: no
  // allocation and no copy out of the arena.
  if (logits_direct_) out->resize(static_cast<size_t>(numel(logits_slot_)));
  auto A = [&](int sl) { return logits_direct_ && sl == logits_slot_ ? out->data() : arena->At(arena->offset[sl]); };
  if (hidden_in_slot_ >= 0 && ctx.hidden_in == nullptr)
    return absl::InvalidArgumentError("CPU program: the graph's hidden_in input was not given");
  auto F = [&](int sl) -> const float* {
    if (sl == hidden_in_slot_) return ctx.hidden_in;
    if (!weight_[sl]) return A(sl);
    return reinterpret_cast<const float*>(source ? source->Resident(*weight_[sl]) : weight_[sl]->data);
  };
  runtime::StepProfile* const profile = ctx.profile;
  if (profile) profile->AddRun(T);
  for (size_t si = 0; si < steps_.size(); ++si) {
    const Step& s = steps_[si];
    const auto t0 = profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    const int64_t n = numel(s.out);
    float* y = A(s.out);  // a reshape's is its input's
    const int64_t cols = shapes_[s.out].empty() ? 1 : shapes_[s.out].back();
    absl::Status st;
    switch (s.kind) {
      case Kind::kEmbed:  // ids are the tokens, or the positions (learned position embeddings)
        st = EmbedRows(ctx, *weight_[s.in[0]], s.in[1] == positions_slot_ ? positions : tokens, T, y);
        break;
      case Kind::kLayerNorm: {
        const int64_t c = shapes_[s.in[0]].back();
        auto opt = [&](size_t k) { return s.in.size() > k && s.in[k] >= 0 ? F(s.in[k]) : nullptr; };
        LayerNorm(F(s.in[0]), opt(1), opt(2), n / c, c, s.f, y);
        break;
      }
      case Kind::kSlice: {
        const int64_t c = shapes_[s.in[0]].back();
        const float* a = F(s.in[0]);
        for (int64_t r = 0; r < n / s.size; ++r)
          std::memcpy(y + r * s.size, a + r * c + s.begin, s.size * sizeof(float));
        break;
      }
      case Kind::kSwigluFused: SwigluFused(F(s.in[0]), n / cols, cols, y); break;
      case Kind::kConcat: {
        const int64_t ca = shapes_[s.in[0]].back(), cb = shapes_[s.in[1]].back();
        const float *a = F(s.in[0]), *b = F(s.in[1]);
        for (int64_t r = 0; r < n / cols; ++r) {
          std::memcpy(y + r * cols, a + r * ca, ca * sizeof(float));
          std::memcpy(y + r * cols + ca, b + r * cb, cb * sizeof(float));
        }
        break;
      }
      case Kind::kMaskedHead: {
        const MaskedHeadShape shape{n / cols, shapes_[s.in[0]].back(), shapes_[s.in[1]].back(), cols, s.size};
        st = MaskedHeadRows(ctx, F(s.in[0]), F(s.in[1]), reinterpret_cast<const int32_t*>(F(s.in[2])),
                            *weight_[s.in[3]], shape, y);
        break;
      }
      case Kind::kRmsNorm: {
        const int64_t c = shapes_[s.in[0]].back();
        RmsNormRows(pool, F(s.in[0]), s.in.size() > 1 && s.in[1] >= 0 ? F(s.in[1]) : nullptr, n / c, c, s.f, y);
        break;
      }
      case Kind::kMatMul: {
        const int64_t k = shapes_[s.in[0]].back();
        const StageMatmul one[1] = {{weight_[s.in[1]], y}};
        if (source == nullptr && numel(s.in[0]) == k && CanRunStage(one, 1)) {  // one row: grains balance the threads
          st = StageLinear(one, 1, F(s.in[0]), pool);
          break;
        }
        st = Linear(ctx, *weight_[s.in[1]], F(s.in[0]), numel(s.in[0]) / k, y);
        break;
      }
      case Kind::kAdd:
      case Kind::kMul: {
        const float* a = F(s.in[0]);
        const float* b = F(s.in[1]);
        const int64_t nb = numel(s.in[1]);
        const bool add = s.kind == Kind::kAdd;
        ForRows(pool, n / cols, [&](int64_t r0, int64_t r1) {
          if (add)
            for (int64_t i = r0 * cols; i < r1 * cols; ++i) y[i] = a[i] + b[i % nb];
          else
            for (int64_t i = r0 * cols; i < r1 * cols; ++i) y[i] = a[i] * b[i % nb];
        });
        break;
      }
      case Kind::kScale: {
        const float* a = F(s.in[0]);
        ForRows(pool, n / cols, [&](int64_t r0, int64_t r1) {
          for (int64_t i = r0 * cols; i < r1 * cols; ++i) y[i] = a[i] * s.f;
        });
        break;
      }
      case Kind::kSoftcap:
        std::memcpy(y, F(s.in[0]), n * sizeof(float));
        Softcap(y, n, s.f);
        break;
      case Kind::kSilu: {
        const float* a = F(s.in[0]);
        for (int64_t i = 0; i < n; ++i) y[i] = Silu(a[i]);
        break;
      }
      case Kind::kGelu: {
        const float* a = F(s.in[0]);
        for (int64_t i = 0; i < n; ++i) y[i] = GeluF16Table(a[i]);
        break;
      }
      case Kind::kNormLinear: {
        // The same calls, in the same order, as rms_norm -> matmul(s) [-> swiglu/geglu],
        // so results are bit-identical; the normalized rows and the gate/up pair live
        // only inside this step (see docs/ir.md, "Planner fusions").
        // Decoding one row with resident weights, the stage's matmuls (and the
        // activation) run as one pool job (stage_linear.h), same results.
        const int64_t c = shapes_[s.in[0]].back();
        const int64_t rows_n = numel(s.in[0]) / c;
        // The step's scratch (memory plan): the normalized rows, then `up`, each padded
        // to the plan's alignment.
        float* const h = arena->At(arena->scratch[si]);
        float* const up = h + (rows_n * c * int64_t{sizeof(float)} + planner::kBufferAlign - 1) /
                                  planner::kBufferAlign * planner::kBufferAlign / int64_t{sizeof(float)};
        RmsNormRows(pool, F(s.in[0]), F(s.in[1]), rows_n, c, s.f, h);
        if (s.act) {
          const StageMatmul pair[2] = {{weight_[s.in[2]], y}, {weight_[s.in[3]], up}};
          if (source == nullptr && rows_n == 1 && CanRunStage(pair, 2)) {
            st = StageGated(*pair[0].w, *pair[1].w, s.act == 1 ? StageAct::kSwiglu : StageAct::kGeglu, h, y, up,
                            pool);
            break;
          }
          st = Linear(ctx, *weight_[s.in[2]], h, rows_n, y);  // gate, written over by the activation
          if (st.ok()) st = Linear(ctx, *weight_[s.in[3]], h, rows_n, up);
          // Element-wise: y may alias gate.
          if (st.ok()) GatedRows(pool, s.act == 1 ? Swiglu : Geglu, y, up, rows_n, cols, y);
          break;
        }
        constexpr size_t kMaxStage = 8;
        StageMatmul parts[kMaxStage];
        for (size_t k = 0; k < s.outs.size(); ++k) {
          if (k < kMaxStage) parts[k] = {weight_[s.in[2 + k]], A(s.outs[k])};
        }
        const int n_parts = static_cast<int>(s.outs.size());
        if (source == nullptr && rows_n == 1 && s.outs.size() <= kMaxStage && CanRunStage(parts, n_parts)) {
          st = StageLinear(parts, n_parts, h, pool);
          break;
        }
        for (size_t k = 0; k < s.outs.size() && st.ok(); ++k)
          st = Linear(ctx, *weight_[s.in[2 + k]], h, rows_n, A(s.outs[k]));
        break;
      }
      case Kind::kMoeFfn: {
        // Expert banks are read in place when resident; under a storage plan they are
        // not (Resident gives null) and the routed slices come through its expert LRU.
        std::vector<BoundWeight> ws(s.in.size());
        auto W = [&](size_t k) -> const BoundWeight* {
          if (k >= s.in.size() || s.in[k] < 0) return nullptr;
          ws[k] = *weight_[s.in[k]];
          if (source) ws[k].data = source->Resident(*weight_[s.in[k]]);
          return &ws[k];
        };
        auto opt = [&](size_t k) { return s.in.size() > k && s.in[k] >= 0 ? F(s.in[k]) : nullptr; };
        MoeWeights mw{W(1), W(2), W(3), W(4), opt(5), W(6), W(7), W(8), W(9)};
        mw.router_x = opt(10);
        mw.down_scale = opt(11);
        if (source && !(mw.up_exps->data && (!mw.gate_exps || mw.gate_exps->data) && mw.down_exps->data))
          mw.cache = source->Experts();
        st = MoeFfn(WithTopK(s.moe, ctx.moe_top_k), mw, F(s.in[0]), n / cols, y, pool);
        break;
      }
      case Kind::kSwiglu:
      case Kind::kGeglu:
        GatedRows(pool, s.kind == Kind::kSwiglu ? Swiglu : Geglu, F(s.in[0]), F(s.in[1]), n / cols, cols, y);
        break;
      case Kind::kReshape: break;
      case Kind::kRope: {
        const ir::Shape& xs = shapes_[s.in[0]];
        const float* a = F(s.in[0]);
        const float* factors = s.in.size() > 2 && s.in[2] >= 0 ? F(s.in[2]) : nullptr;
        const int64_t row = xs[1] * xs[2];  // one token's heads
        for (const Arena::Segment& g : segments) {
          // LongRoPE picks its factors by the context, as llama.cpp's get_rope_factors.
          const float* f = s.in.size() > 3 && s.in[3] >= 0 && g.cache->n_ctx() > s.long_factors_ctx ? F(s.in[3])
                                                                                                  : factors;
          ForRows(pool, g.T, [&](int64_t t0, int64_t t1) {
            t0 += g.begin;
            t1 += g.begin;
            std::memcpy(y + t0 * row, a + t0 * row, (t1 - t0) * row * sizeof(float));
            Rope(y + t0 * row, positions + t0, t1 - t0, xs[1], xs[2], s.n_dims, s.f, s.f2, f, s.neox, s.yarn);
          });
        }
        break;
      }
      case Kind::kAttention: {
        // Each sequence attends over its own cache: one token's q, k, v and output rows.
        // A shared-KV read (no K, V) only attends.
        const bool writes = s.in.size() > 2 && s.in[1] >= 0;
        const int64_t qr = Numel(shapes_[s.in[0]], 1, 1), kr = writes ? Numel(shapes_[s.in[1]], 1, 1) : 0,
                      vr = writes ? Numel(shapes_[s.in[2]], 1, 1) : 0, yr = n / T;
        const float *q = F(s.in[0]), *k = writes ? F(s.in[1]) : nullptr, *v = writes ? F(s.in[2]) : nullptr;
        for (const Arena::Segment& g : segments)
          Attention(*g.cache, s.attn, q + g.begin * qr, k ? k + g.begin * kr : nullptr, v ? v + g.begin * vr : nullptr,
                    positions + g.begin, g.T, y + g.begin * yr, pool);
        break;
      }
      case Kind::kOutputRows: {
        const float* a = F(s.in[0]);
        for (int64_t r = 0; r < R; ++r) std::memcpy(y + r * cols, a + rows[r] * cols, cols * sizeof(float));
        break;
      }
    }
    if (!st.ok()) return absl::Status(st.code(), StrCat("op '", s.name, "': ", std::string(st.message())));
    if (profile)
      profile->AddStep(*s.type, s.name, T, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  if (!logits_direct_) {  // an aliased logits slot: copied out of the arena
    const float* logits = A(logits_slot_);
    out->assign(logits, logits + numel(logits_slot_));
  }
  if (ctx.hidden) {
    const float* h = A(hidden_slot_);
    ctx.hidden->assign(h, h + numel(hidden_slot_));
  }
  if (seqs.size() > 1) {  // each sequence's rows, in order, from the combined logits
    const float* logits = out->data();
    for (const SequenceRun& q : seqs) {
      const size_t n = q.rows->size() * static_cast<size_t>(out_cols_);
      q.out->assign(logits, logits + n);
      logits += n;
    }
  }
  return absl::OkStatus();
}

}  // namespace uaii::backends::cpu
