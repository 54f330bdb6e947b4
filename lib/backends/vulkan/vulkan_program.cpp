#include "backends/vulkan/vulkan_program.h"

#include "backends/kv_layers.h"
#include "backends/vulkan/vulkan_moe.h"
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <cstring>
#include <map>
#include <set>

#include "ir/validate.h"
#include "planner/memory_plan.h"
#include "runtime/kv_cache.h"
#include "util/str_cat.h"

namespace uaii::backends::vulkan {
namespace {

const std::set<std::string>& Ops() {
  static const std::set<std::string> ops = {"embed", "rms_norm", "layer_norm", "matmul", "norm_linear", "add",
                                            "mul", "scale", "softcap", "silu", "gelu", "swiglu", "geglu",
                                            "swiglu_fused", "reshape", "rope", "attention", "output_rows", "slice",
                                            "moe_ffn"};
  return ops;
}

int64_t Numel(const ir::Shape& s, int64_t T, int64_t R) {
  int64_t n = 1;
  for (int64_t d : s) n *= d == ir::kDimTokens ? T : d == ir::kDimRows ? R : d;
  return n;
}

uint64_t Padded(uint64_t bytes) { return (bytes + planner::kBufferAlign - 1) / planner::kBufferAlign * planner::kBufferAlign; }

uint32_t U32(int64_t v) { return static_cast<uint32_t>(v); }

constexpr int64_t kMaxHeadDim = 512;  // shaders/attention.comp's kMaxDim

// UAII_VULKAN_PROFILE's totals: seconds per op type, decode (T = 1) and prefill apart.
class OpProfile {
 public:
  static void Add(const std::string& type, int64_t T, std::chrono::steady_clock::duration d) {
    static OpProfile p;
    std::lock_guard<std::mutex> lk(p.mu_);
    auto& e = p.totals_[StrCat(T == 1 ? "decode " : "prefill ", type)];
    e.first += std::chrono::duration<double>(d).count();
    ++e.second;
  }
  ~OpProfile() {
    for (const auto& [k, v] : totals_) std::fprintf(stderr, "vulkan profile: %-24s %9.4f s in %lld runs\n", k.c_str(), v.first, static_cast<long long>(v.second));
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::pair<double, int64_t>> totals_;
};

}  // namespace

struct VulkanProgram::Step {
  const ir::Op* op = nullptr;
  std::vector<int> in, outs;
};

// The session's memory for this program: the activation arena (device-local), the
// pass's small inputs (host-visible), the logits' read-back buffer and the recorder.
class VulkanProgram::DeviceWorkspace final : public Workspace {
 public:
  int64_t tokens = 0, rows = 0, cells = 0;
  std::unique_ptr<Buffer> arena, meta, readback;
  std::vector<uint64_t> offset;   // per slot, bytes into the arena
  std::vector<uint64_t> scratch;  // per step (norm_linear)
  std::unique_ptr<Buffer> moe_scratch;  // moe_ffn's intermediates (vulkan_moe.h), grown as needed
  std::unique_ptr<Buffer> stage;        // staged host weights' chunks, copied in before each use
  int64_t moe_top_k = 0;                // the present pass's RunContext::moe_top_k
  std::unique_ptr<Recorder> recorder;
  // meta's layout for the present pass (ints): tokens, positions, rows, cells, each cell's position
  int64_t at_tokens = 0, at_positions = 0, at_rows = 0, at_cells = 0, at_cellpos = 0;
};

bool VulkanProgram::Supports(const std::string& op_type) { return Ops().count(op_type) > 0; }

namespace {

// Whether op input k is a matrix the kernels read in its device layout (else an
// element-wise F32 weight).
bool MatrixInput(const ir::Op& op, size_t k) {
  return (op.type == "matmul" && k == 1) || (op.type == "embed" && k == 0) || (op.type == "norm_linear" && k >= 2) ||
         (op.type == "moe_ffn" && k >= 1 && k <= 9 && k != 5);  // not the router's input nor down_scale
}

// Whether op input k, a weight in host memory, streams to the device through the
// staging buffer before each use: the products' weights, which a kernel reads whole
// (and a prefill once per token row). Lookup tables and expert banks are read in place:
// a pass touches only its tokens' rows and its routed experts.
bool StagedInput(const ir::Op& op, size_t k) {
  if (op.type == "moe_ffn") return k == 1 || (k >= 6 && k <= 9);  // the router and the shared expert
  return op.type == "matmul" || op.type == "norm_linear";
}

uint64_t Budget(const DeviceInfo& device, uint64_t asked) {
  return asked > 0 ? asked : device.device_local_bytes / 10 * 9;
}

// Every weight the graph's ops read, once, in execution order, with its device bytes
// and whether it is a matrix.
struct WeightUse {
  std::string name;
  const runtime::BoundWeight* w;
  bool matrix;
  bool stageable;  // StagedInput
  uint64_t bytes;
};

absl::StatusOr<std::vector<WeightUse>> WeightUses(const ir::Graph& g, const std::vector<size_t>& order,
                                                  const runtime::WeightSet& weights) {
  std::vector<WeightUse> uses;
  std::set<std::string> seen;
  for (size_t oi : order) {
    const ir::Op& op = g.ops[oi];
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const std::string& name = op.inputs[k];
      const auto* t = name.empty() ? nullptr : g.FindTensor(name);
      if (!t || !t->weight || !seen.insert(name).second) continue;
      const runtime::BoundWeight* w = weights.Find(name);
      if (!w) return absl::FailedPreconditionError(StrCat("weight ", name, " is not bound"));
      uint64_t bytes = w->bytes;
      if (MatrixInput(op, k)) {
        auto b = MatrixDeviceBytes(*w);
        if (!b.ok()) return absl::Status(b.status().code(), StrCat("weight ", name, ": ", std::string(b.status().message())));
        bytes = *b;
      }
      uses.push_back({name, w, MatrixInput(op, k), MatrixInput(op, k) && StagedInput(op, k), bytes});
    }
  }
  return uses;
}

// Greedy in execution order: each weight in device memory while `budget` lasts (the
// first layers, then the rest in host memory).
DevicePlacement Greedy(const std::vector<WeightUse>& uses, uint64_t budget, std::vector<bool>* on_host) {
  DevicePlacement p;
  on_host->clear();
  for (const WeightUse& u : uses) {
    const bool host = p.resident_bytes + u.bytes > budget;
    on_host->push_back(host);
    (host ? p.host_bytes : p.resident_bytes) += u.bytes;
    p.host_weights += host ? 1 : 0;
    p.requantized_weights += u.matrix && !HasMatrixKernel(u.w->type) ? 1 : 0;
  }
  return p;
}

// The placement under `budget`: where weights spill to host memory, a staging buffer
// as large as the largest stageable weight's chunk comes out of the budget first (a
// conservative size, so it never changes with the placement); where that would take
// more than half the budget, nothing is staged and host weights are read in place.
DevicePlacement PlaceUses(const std::vector<WeightUse>& uses, uint64_t budget, uint64_t chunk_limit,
                          std::vector<bool>* on_host) {
  DevicePlacement p = Greedy(uses, budget, on_host);
  if (p.host_weights > 0) {
    uint64_t stage = 0;
    for (const WeightUse& u : uses)
      if (u.stageable) stage = std::max(stage, std::min(u.bytes, chunk_limit));
    if (stage > 0 && stage <= budget / 2) {
      p = Greedy(uses, budget - stage, on_host);
      p.staging_bytes = stage;
    }
  }
  p.budget_bytes = budget;
  return p;
}

}  // namespace

absl::StatusOr<DevicePlacement> VulkanProgram::Place(const DeviceInfo& device, const ir::Graph& g,
                                                     const runtime::WeightSet& weights, uint64_t device_budget) {
  auto order = ir::Validate(g);
  if (!order.ok()) return order.status();
  auto uses = WeightUses(g, *order, weights);
  if (!uses.ok()) return uses.status();
  std::vector<bool> on_host;
  return PlaceUses(*uses, Budget(device, device_budget), ChunkLimit(device, uint64_t{1} << 30), &on_host);
}

VulkanProgram::~VulkanProgram() = default;

absl::StatusOr<std::unique_ptr<VulkanProgram>> VulkanProgram::Create(std::shared_ptr<Device> device,
                                                                     const ir::Graph& g,
                                                                     const runtime::WeightSet& weights,
                                                                     uint64_t max_chunk_bytes, uint64_t device_budget) {
  auto order = ir::Validate(g);
  if (!order.ok()) return order.status();
  auto uses = WeightUses(g, *order, weights);
  if (!uses.ok()) return uses.status();
  std::vector<bool> on_host;
  const DevicePlacement placement =
      PlaceUses(*uses, Budget(device->info(), device_budget), ChunkLimit(device->info(), max_chunk_bytes), &on_host);
  std::map<std::string, Buffer::Kind> kind_of;
  std::set<std::string> staged;
  for (size_t i = 0; i < uses->size(); ++i) {
    kind_of[(*uses)[i].name] = on_host[i] ? Buffer::Kind::kHost : Buffer::Kind::kDevice;
    if (on_host[i] && (*uses)[i].stageable && placement.staging_bytes > 0) staged.insert((*uses)[i].name);
  }
  std::unique_ptr<VulkanProgram> p(new VulkanProgram());
  p->device_ = device;
  auto kernels = Kernels::Get(device);
  if (!kernels.ok()) return kernels.status();
  p->kernels_ = *std::move(kernels);
  p->graph_ = g;
  std::map<std::string, int> slot;
  for (const auto& t : p->graph_.tensors) {
    slot[t.name] = static_cast<int>(p->shapes_.size());
    p->shapes_.push_back(t.shape);
  }
  p->weights_.resize(p->shapes_.size());
  for (const char* need : {"tokens", "positions", "logits"})
    if (!slot.count(need)) return absl::InvalidArgumentError(StrCat("graph lacks tensor '", need, "'"));
  p->tokens_slot_ = slot["tokens"];
  p->positions_slot_ = slot["positions"];
  p->logits_slot_ = slot["logits"];
  p->out_cols_ = p->shapes_[p->logits_slot_].back();
  for (size_t oi : *order) {
    const ir::Op& op = p->graph_.ops[oi];
    if (!Supports(op.type))
      return absl::UnimplementedError(
          StrCat("op '", op.name, "' (", op.type, ") is not implemented on the Vulkan backend yet"));
    Step s;
    s.op = &op;
    for (const auto& n : op.inputs) s.in.push_back(n.empty() ? -1 : slot[n]);
    for (const auto& n : op.outputs) s.outs.push_back(slot[n]);
    for (size_t k = 0; k < s.in.size(); ++k) {
      const int sl = s.in[k];
      if (sl < 0 || p->weights_[sl]) continue;
      const auto* t = p->graph_.FindTensor(op.inputs[k]);
      if (!t || !t->weight) continue;
      const runtime::BoundWeight* w = weights.Find(op.inputs[k]);
      if (!w) return absl::FailedPreconditionError(StrCat("weight ", op.inputs[k], " is not bound"));
      const Buffer::Kind kind = kind_of[op.inputs[k]];
      auto d = MatrixInput(op, k) ? UploadMatrix(device, *w, max_chunk_bytes, kind) : UploadF32(device, *w, kind);
      if (!d.ok())
        return absl::Status(d.status().code(), StrCat("op '", op.name, "': weight ", op.inputs[k], ": ",
                                                      std::string(d.status().message())));
      (*d)->staged = staged.count(op.inputs[k]) > 0;
      if ((*d)->staged)
        for (const auto& c : (*d)->chunks) p->stage_bytes_ = std::max(p->stage_bytes_, c.buffer->bytes());
      p->weight_bytes_ += (*d)->bytes();
      p->requantized_ += (*d)->requantized ? 1 : 0;
      p->weights_[sl] = *std::move(d);
    }
    for (size_t k = 0; k < s.in.size(); ++k) {
      if (MatrixInput(op, k) && s.in[k] >= 0 && !p->weights_[s.in[k]])
        return absl::UnimplementedError(StrCat("op '", op.name, "': input ", op.inputs[k], " must be a weight"));
    }
    if (op.type == "moe_ffn")
      if (auto st = CheckMoe(op, MoeInputs(s.in, p->weights_)); !st.ok())
        return absl::Status(st.code(), StrCat("op '", op.name, "': ", std::string(st.message())));
    if (op.type == "reshape" && p->weights_[s.in[0]])
      return absl::UnimplementedError(StrCat("op '", op.name, "' reshapes a weight"));
    if (op.type == "attention" && (s.in.size() < 3 || s.in[1] < 0)) {
      if (auto st = CheckSharedKvRead(op, p->kv_layers_, p->shapes_[s.in[0]]); !st.ok()) return st;
    } else if (op.type == "attention") {
      const ir::Shape& q = p->shapes_[s.in[0]];
      const ir::Shape& k = p->shapes_[s.in[1]];
      const ir::Shape& v = p->shapes_[s.in[2]];
      if (k[2] > kMaxHeadDim || v[2] > kMaxHeadDim || k[2] % 2 != 0)
        return absl::UnimplementedError(StrCat("op '", op.name, "': head size ", k[2], "/", v[2],
                                               " (the Vulkan attention kernel takes even sizes up to ",
                                               kMaxHeadDim, ")"));
      if (q[1] % k[1] != 0)
        return absl::InvalidArgumentError(StrCat("op '", op.name, "': ", q[1], " query heads over ", k[1], " KV heads"));
      const auto layer = static_cast<size_t>(op.Int("layer"));
      if (p->kv_layers_.size() <= layer) p->kv_layers_.resize(layer + 1);
      p->kv_layers_[layer] = runtime::KvLayerShape{k[1], k[2], v[2]};
    }
    p->steps_.push_back(std::move(s));
  }
  for (const auto& kl : p->kv_layers_)
    if (!kl.n_head_kv) return absl::InvalidArgumentError("attention layers are not numbered 0..n-1");
  p->placement_ = placement;
  return p;
}

std::unique_ptr<Workspace> VulkanProgram::NewWorkspace() const { return std::make_unique<DeviceWorkspace>(); }

absl::Status VulkanProgram::ReserveWorkspace(Workspace& ws, int64_t tokens, int64_t rows) const {
  auto* w = dynamic_cast<DeviceWorkspace*>(&ws);
  if (w == nullptr) return absl::InvalidArgumentError("Vulkan program: the workspace is another program's");
  return Reserve(*w, tokens, rows, w->cells);
}

absl::Status VulkanProgram::Reserve(DeviceWorkspace& ws, int64_t T, int64_t R, int64_t cells) const {
  if (!ws.recorder) {
    auto rec = Recorder::Create(kernels_);
    if (!rec.ok()) return rec.status();
    ws.recorder = *std::move(rec);
  }
  if (!ws.arena || T > ws.tokens || R > ws.rows) {
    const int64_t tokens = std::max(T, ws.tokens), rows = std::max(R, ws.rows);
    auto plan = planner::PlanMemory(graph_, tokens, rows);
    if (!plan.ok()) return plan.status();
    std::map<std::string, uint64_t> at;
    for (const auto& b : plan->buffers) at[b.tensor] = b.offset;
    std::vector<uint64_t> offset(shapes_.size(), 0), scratch(steps_.size(), 0);
    for (size_t i = 0; i < steps_.size(); ++i) {
      const Step& s = steps_[i];
      if (s.op->type == "reshape") {
        offset[s.outs[0]] = offset[s.in[0]];
        continue;
      }
      for (int o : s.outs) {
        auto it = at.find(graph_.tensors[o].name);
        if (it == at.end()) return absl::InternalError(StrCat("memory plan lacks ", graph_.tensors[o].name));
        offset[o] = it->second;
      }
      if (s.op->type == "norm_linear") {
        auto it = at.find(s.op->name + ":scratch");
        if (it == at.end()) return absl::InternalError(StrCat("memory plan lacks the scratch of ", s.op->name));
        scratch[i] = it->second;
      }
    }
    auto arena = Buffer::Create(device_, std::max<uint64_t>(plan->arena_bytes, 64), Buffer::Kind::kDevice);
    if (!arena.ok()) return arena.status();
    auto readback = Buffer::Create(device_, static_cast<uint64_t>(std::max<int64_t>(rows, 1)) * out_cols_ * 4,
                                   Buffer::Kind::kHost);
    if (!readback.ok()) return readback.status();
    ws.arena = *std::move(arena);
    ws.readback = *std::move(readback);
    ws.offset = std::move(offset);
    ws.scratch = std::move(scratch);
    ws.tokens = tokens;
    ws.rows = rows;
  }
  uint64_t moe_bytes = 0;
  for (const Step& st : steps_)
    if (st.op->type == "moe_ffn")
      moe_bytes = std::max(moe_bytes, MoeScratchBytes(*st.op, MoeInputs(st.in, weights_), std::max(ws.tokens, ws.rows)));
  if (moe_bytes > 0 && (!ws.moe_scratch || ws.moe_scratch->bytes() < moe_bytes)) {
    auto b = Buffer::Create(device_, moe_bytes, Buffer::Kind::kDevice);
    if (!b.ok()) return b.status();
    ws.moe_scratch = *std::move(b);
  }
  if (stage_bytes_ > 0 && !ws.stage) {
    auto b = Buffer::Create(device_, stage_bytes_, Buffer::Kind::kDevice);
    if (!b.ok()) return b.status();
    ws.stage = *std::move(b);
  }
  const int64_t cells_cap = std::max(cells, ws.cells);
  const uint64_t meta_bytes = static_cast<uint64_t>(4 * ws.tokens + ws.rows + cells_cap) * 4;
  if (!ws.meta || ws.meta->bytes() < meta_bytes) {
    auto meta = Buffer::Create(device_, meta_bytes, Buffer::Kind::kHost);
    if (!meta.ok()) return meta.status();
    ws.meta = *std::move(meta);
    ws.cells = cells_cap;
  }
  return absl::OkStatus();
}

absl::Status VulkanProgram::Run(const int32_t* tokens, const int32_t* positions, int64_t T,
                                const std::vector<int64_t>& rows, runtime::KvCache& cache, const RunContext& ctx,
                                std::vector<float>* out) const {
  const auto R = static_cast<int64_t>(rows.size());
  if (T <= 0) return absl::InvalidArgumentError("Vulkan program: no tokens");
  for (int64_t r : rows)
    if (r < 0 || r >= T) return absl::OutOfRangeError(StrCat("output row ", r, " outside the batch of ", T));
  int64_t max_pos = 0;
  for (int64_t t = 0; t < T; ++t) {
    if (positions[t] < 0 || positions[t] >= cache.n_ctx())
      return absl::OutOfRangeError(StrCat("position ", positions[t], " outside the context of ", cache.n_ctx()));
    max_pos = std::max<int64_t>(max_pos, positions[t]);
  }
  if (!kv_layers_.empty()) {
    auto* arena = dynamic_cast<VulkanDeviceBuffer*>(cache.arena());
    if (arena == nullptr || arena->buffer().mapped() == nullptr)
      return absl::FailedPreconditionError("the KV cache is not in the Vulkan device's memory (allocate its arena "
                                           "with the Vulkan backend)");
  }
  std::unique_ptr<Workspace> own;
  auto* ws = dynamic_cast<DeviceWorkspace*>(ctx.workspace);
  if (ws == nullptr) {
    own = NewWorkspace();
    ws = static_cast<DeviceWorkspace*>(own.get());
  }
  if (auto st = Reserve(*ws, T, R, cache.n_cells()); !st.ok()) return st;
  // The pass's inputs, and the cells its positions take (their positions recorded
  // first, as the CPU's attention does before it reads the cache).
  auto* meta = reinterpret_cast<int32_t*>(ws->meta->mapped());
  ws->at_tokens = 0;
  ws->at_positions = T;
  ws->at_rows = 2 * T;
  ws->at_cells = 2 * T + R;
  ws->at_cellpos = 3 * T + R;
  std::memcpy(meta + ws->at_tokens, tokens, T * 4);
  std::memcpy(meta + ws->at_positions, positions, T * 4);
  for (int64_t r = 0; r < R; ++r) meta[ws->at_rows + r] = static_cast<int32_t>(rows[r]);
  if (!kv_layers_.empty()) {
    for (int64_t t = 0; t < T; ++t) {
      const int64_t c = cache.Cell(positions[t]);
      cache.SetCellPos(c, positions[t]);
      meta[ws->at_cells + t] = static_cast<int32_t>(c);
    }
    for (int64_t c = 0; c < cache.n_cells(); ++c) meta[ws->at_cellpos + c] = cache.CellPos(c);
  }
  ws->moe_top_k = ctx.moe_top_k;
  if (auto st = ws->recorder->Begin(); !st.ok()) return st;
  // UAII_VULKAN_PROFILE: every op submitted and timed alone, the totals per op type
  // printed at exit (slow: for finding the kernel that costs the time).
  static const bool profile = std::getenv("UAII_VULKAN_PROFILE") != nullptr;
  for (const Step& s : steps_) {
    if (auto st = Record(*ws, s, T, R, cache, max_pos); !st.ok())
      return absl::Status(st.code(), StrCat("op '", s.op->name, "': ", std::string(st.message())));
    if (profile) {
      const auto t0 = std::chrono::steady_clock::now();
      if (auto st = ws->recorder->SubmitAndWait(); !st.ok()) return st;
      OpProfile::Add(s.op->type, T, std::chrono::steady_clock::now() - t0);
      if (auto st = ws->recorder->Begin(); !st.ok()) return st;
    }
  }
  const uint64_t logits_bytes = static_cast<uint64_t>(R) * out_cols_ * 4;
  if (logits_bytes > 0) ws->recorder->Copy(*ws->arena, ws->offset[logits_slot_], *ws->readback, 0, logits_bytes);
  if (auto st = ws->recorder->SubmitAndWait(); !st.ok()) return st;
  out->resize(static_cast<size_t>(R * out_cols_));
  std::memcpy(out->data(), ws->readback->mapped(), logits_bytes);
  return absl::OkStatus();
}

absl::Status VulkanProgram::Record(DeviceWorkspace& ws, const Step& s, int64_t T, int64_t R, runtime::KvCache& cache,
                                   int64_t max_pos) const {
  const ir::Op& op = *s.op;
  const std::string& type = op.type;
  Recorder& rec = *ws.recorder;
  const uint32_t max_x = std::min<uint32_t>(device_->info().max_workgroup_count[0], 65535);
  auto numel = [&](int sl) { return Numel(shapes_[sl], T, R); };
  auto cols_of = [&](int sl) { return shapes_[sl].empty() ? int64_t{1} : shapes_[sl].back(); };
  // A slot's range: a weight's (first) chunk, or the activation's bytes in the arena.
  auto at = [&](int sl) -> Range {
    if (sl < 0) return Range{};
    if (weights_[sl]) return Range{weights_[sl]->chunks[0].buffer.get(), 0, 0};
    return Range{ws.arena.get(), ws.offset[sl], Padded(static_cast<uint64_t>(numel(sl)) * 4)};
  };
  auto in = [&](size_t k) { return k < s.in.size() ? at(s.in[k]) : Range{}; };
  auto has = [&](size_t k) { return k < s.in.size() && s.in[k] >= 0 ? 1u : 0u; };
  auto meta = [&](int64_t ints_at, int64_t ints) {
    return Range{ws.meta.get(), static_cast<uint64_t>(ints_at) * 4, static_cast<uint64_t>(std::max<int64_t>(ints, 1)) * 4};
  };
  const Range y = at(s.outs[0]);
  const int64_t n = numel(s.outs[0]);
  // y[rows_x, w.rows] = x[rows_x, K] . w^T, one dispatch per chunk of w's rows.
  auto product = [&](const DeviceWeight& w, Range x, int64_t rows_x, Range out) -> absl::Status {
    for (const auto& c : w.chunks) {
      uint32_t gx, gy;
      // A GPU: a group of 64 a row; a CPU implementation: an invocation a row (matmul_rows.comp).
      const bool per_row = device_->info().cpu_implementation;
      Grid(static_cast<uint64_t>(c.rows), per_row ? 64 : 1, max_x, &gx, &gy);
      const Buffer& wb = ChunkForKernel(w, c, rec, ws.stage.get());
      if (auto st = rec.Dispatch((per_row ? "matmul_rows_" : "matmul_") + w.layout, {Range{&wb, 0, 0}, x, out},
                                 {U32(w.cols), U32(c.rows), U32(c.row_begin), U32(w.rows), U32(rows_x),
                                  static_cast<uint32_t>(w.row_words)},
                                 gx, gy, static_cast<uint32_t>(rows_x));
          !st.ok())
        return st;
    }
    return absl::OkStatus();
  };
  auto row_groups = [&](int64_t rows_n, uint32_t* gx, uint32_t* gy) { Grid(static_cast<uint64_t>(rows_n), 1, max_x, gx, gy); };

  if (type == "reshape") return absl::OkStatus();
  if (type == "moe_ffn")
    return RecordMoe(rec, device_->info(), op, MoeInputs(s.in, weights_), in(0), in(10), y,
                     numel(s.in[0]) / cols_of(s.in[0]), ws.moe_top_k, *ws.moe_scratch, ws.stage.get());
  if (type == "embed") {
    const DeviceWeight& w = *weights_[s.in[0]];
    const bool by_position = s.in[1] == positions_slot_;
    if (!by_position && s.in[1] != tokens_slot_)
      return absl::UnimplementedError("an embedding of ids other than the tokens or positions");
    const int64_t ids_at = by_position ? ws.at_positions : ws.at_tokens;
    const auto* ids = reinterpret_cast<const int32_t*>(ws.meta->mapped()) + ids_at;
    for (int64_t t = 0; t < T; ++t)
      if (ids[t] < 0 || ids[t] >= w.rows)
        return absl::OutOfRangeError(StrCat("id ", ids[t], " outside the table's ", w.rows, " rows"));
    uint32_t gx, gy;
    row_groups(T, &gx, &gy);
    for (const auto& c : w.chunks)
      if (auto st = rec.Dispatch("embed_" + w.layout, {Range{c.buffer.get(), 0, 0}, meta(ids_at, T), y},
                                 {U32(w.cols), U32(T), U32(c.row_begin), U32(c.rows), static_cast<uint32_t>(w.row_words)},
                                 gx, gy);
          !st.ok())
        return st;
    return absl::OkStatus();
  }
  if (type == "rms_norm" || type == "layer_norm") {
    const int64_t c = cols_of(s.in[0]), rows_n = numel(s.in[0]) / c;
    uint32_t gx, gy;
    row_groups(rows_n, &gx, &gy);
    const uint32_t eps = Word(static_cast<float>(op.Float("eps")));
    if (type == "rms_norm") return rec.Dispatch("rms_norm", {in(0), in(1), y}, {U32(c), U32(rows_n), eps, has(1)}, gx, gy);
    return rec.Dispatch("layer_norm", {in(0), in(1), in(2), y}, {U32(c), U32(rows_n), eps, has(1), has(2)}, gx, gy);
  }
  if (type == "matmul") {
    const int64_t K = cols_of(s.in[0]);
    const DeviceWeight& w = *weights_[s.in[1]];
    if (w.cols != K) return absl::InvalidArgumentError(StrCat("a product of ", K, " columns with a weight of ", w.cols));
    return product(w, in(0), numel(s.in[0]) / K, y);
  }
  if (type == "norm_linear") {
    const int64_t c = cols_of(s.in[0]), rows_n = numel(s.in[0]) / c;
    const uint64_t norm_bytes = static_cast<uint64_t>(rows_n * c) * 4;
    const Range h{ws.arena.get(), ws.scratch[&s - steps_.data()], Padded(norm_bytes)};
    uint32_t gx, gy;
    row_groups(rows_n, &gx, &gy);
    if (auto st = rec.Dispatch("rms_norm", {in(0), in(1), h}, {U32(c), U32(rows_n), Word(static_cast<float>(op.Float("eps"))), has(1)}, gx, gy);
        !st.ok())
      return st;
    const std::string act = op.Has("act") ? op.Str("act") : "";
    if (act == "swiglu" || act == "geglu") {
      const Range up{ws.arena.get(), h.offset + Padded(norm_bytes), Padded(static_cast<uint64_t>(n) * 4)};
      if (auto st = product(*weights_[s.in[2]], h, rows_n, y); !st.ok()) return st;
      if (auto st = product(*weights_[s.in[3]], h, rows_n, up); !st.ok()) return st;
      return rec.Dispatch1D(act, {y, up, y}, {U32(n), U32(n)}, static_cast<uint64_t>(n));
    }
    if (!act.empty()) return absl::UnimplementedError(StrCat("norm_linear activation '", act, "'"));
    for (size_t k = 0; k < s.outs.size(); ++k)
      if (auto st = product(*weights_[s.in[2 + k]], h, rows_n, at(s.outs[k])); !st.ok()) return st;
    return absl::OkStatus();
  }
  if (type == "add" || type == "mul" || type == "swiglu" || type == "geglu") {
    const int64_t nb = numel(s.in[1]);
    if (nb <= 0 || n % nb != 0) return absl::InvalidArgumentError(StrCat("operands of ", n, " and ", nb, " elements"));
    return rec.Dispatch1D(type, {in(0), in(1), y}, {U32(n), U32(nb)}, static_cast<uint64_t>(n));
  }
  if (type == "scale") return rec.Dispatch1D("scale", {in(0), y}, {U32(n), Word(static_cast<float>(op.Float("scale")))}, n);
  if (type == "softcap") return rec.Dispatch1D("softcap", {in(0), y}, {U32(n), Word(static_cast<float>(op.Float("cap")))}, n);
  if (type == "silu" || type == "gelu") return rec.Dispatch1D(type, {in(0), y}, {U32(n)}, static_cast<uint64_t>(n));
  if (type == "swiglu_fused") return rec.Dispatch1D("swiglu_fused", {in(0), y}, {U32(n), U32(cols_of(s.outs[0]))}, n);
  if (type == "slice")
    return rec.Dispatch1D("slice", {in(0), y},
                          {U32(n), U32(cols_of(s.in[0])), U32(op.Int("begin")), U32(op.Int("size"))}, n);
  if (type == "output_rows") {
    const int64_t cols = cols_of(s.outs[0]);
    return rec.Dispatch1D("output_rows", {in(0), meta(ws.at_rows, R), y}, {U32(R * cols), U32(cols)}, R * cols);
  }
  if (type == "rope") {
    const ir::Shape& xs = shapes_[s.in[0]];
    const int64_t H = xs[1], D = xs[2], n_dims = op.Int("n_dims");
    size_t factors = 2;
    if (has(3) && cache.n_ctx() > op.Int("long_factors_ctx", 0)) factors = 3;  // LongRoPE's long factors
    const double base = op.Float("freq_base"), freq_scale = op.Float("freq_scale", 1.0);
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
    const float theta_scale = std::pow(static_cast<float>(base), -2.0f / static_cast<float>(n_dims));
    return rec.Dispatch1D("rope", {in(0), meta(ws.at_positions, T), in(factors), y},
                          {U32(T), U32(H), U32(D), U32(n_dims), op.Str("mode") == "neox" ? 1u : 0u, Word(theta_scale),
                           Word(static_cast<float>(freq_scale)), Word(static_cast<float>(ext)),
                           Word(static_cast<float>(mscale)), Word(static_cast<float>(corr0)),
                           Word(static_cast<float>(corr1)), has(factors)},
                          static_cast<uint64_t>(T * H * (D / 2)));
  }
  if (type == "attention") {
    const int layer = static_cast<int>(op.Int("layer"));
    const runtime::KvLayerShape& kl = kv_layers_[layer];
    const int64_t Hq = shapes_[s.in[0]][1], Hkv = kl.n_head_kv, D = kl.head_dim_k, Dv = kl.head_dim_v;
    auto* arena = static_cast<VulkanDeviceBuffer*>(cache.arena());
    const auto* base = static_cast<const uint8_t*>(arena->host());
    const uint64_t k_off = reinterpret_cast<const uint8_t*>(cache.K(layer, 0)) - base;
    const uint64_t v_off = reinterpret_cast<const uint8_t*>(cache.Vt(layer, 0, 0)) - base;
    const int64_t cells = cache.n_cells();
    const Range kv{&arena->buffer(), k_off, (v_off - k_off) + static_cast<uint64_t>(cells * Hkv * Dv) * 2};
    const uint32_t v_base = static_cast<uint32_t>((v_off - k_off) / 2);
    // A shared-KV read (no K, V inputs) attends over what the layer's owner stored.
    if (has(1))
      if (auto st = rec.Dispatch1D("kv_store", {in(1), in(2), meta(0, ws.at_cellpos), kv},
                                   {U32(T), U32(Hkv), U32(D), U32(Dv), 0u, v_base, U32(cells), U32(ws.at_cells)},
                                   static_cast<uint64_t>(T * Hkv * (D + Dv)));
          !st.ok())
        return st;
    // Cells past the batch's last position hold nothing it may see until a ring wraps.
    const int64_t scan = cache.window() > 0 ? cells
                                            : std::min(cells, (max_pos + 1 + runtime::KvCache::kCellAlign - 1) /
                                                                  runtime::KvCache::kCellAlign * runtime::KvCache::kCellAlign);
    return rec.Dispatch("attention", {in(0), kv, meta(0, ws.at_cellpos + cells), y},
                        {U32(T), U32(Hq), U32(Hkv), U32(D), U32(Dv), U32(cells), 0u, v_base,
                         Word(static_cast<float>(op.Float("scale"))), Word(static_cast<float>(op.Float("softcap", 0.0))),
                         U32(op.Int("window", 0)), U32(cache.window()), U32(cache.sinks()), U32(ws.at_positions),
                         U32(ws.at_cellpos), U32(scan)},
                        static_cast<uint32_t>(Hq), static_cast<uint32_t>(T));
  }
  return absl::UnimplementedError(StrCat("no Vulkan kernel for ", type));
}

}  // namespace uaii::backends::vulkan
