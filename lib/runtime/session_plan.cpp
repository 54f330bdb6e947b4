#include "runtime/session_plan.h"

#include "backends/registry.h"

#include <algorithm>

#include "planner/memory_plan.h"
#include "runtime/model_impl.h"
#include "runtime/streamed_weights.h"
#include "storage/expert_plan.h"
#include "util/str_cat.h"

namespace uaii::runtime {
namespace {
constexpr int64_t kStreamingPrefillChunk = 128;
absl::Status PlanWithChunk(const Model& model, SessionPlan* sp);
}  // namespace

absl::StatusOr<SessionPlan> PlanSession(const Model& model, const SessionOptions& options) {
  SessionPlan sp;
  auto preset = storage::ParsePreset(PresetName(options.preset));
  if (!preset.ok()) return preset.status();
  // The device must name a backend (backends/registry.h), for a dry run as for a session.
  if (auto backend = backends::SelectBackend(options.device); !backend.ok()) return backend.status();
  storage::PresetOverrides ov;
  if (options.ram_budget_bytes > 0) ov.ram_bytes = options.ram_budget_bytes;
  if (options.kv_window >= 0) ov.kv_window = options.kv_window;
  sp.preset = storage::ResolvePreset(*preset, storage::ReadMachineMemory(), ov);
  sp.use_storage = sp.preset.budget_bytes > 0;
  sp.moe_top_k = options.moe_top_k;
  sp.moe_prefetch = options.moe_prefetch;
  sp.threads = options.threads > 0 ? options.threads : sp.preset.threads;
  sp.kv_window = sp.preset.kv_window;
  sp.kv_sinks = sp.preset.kv_sinks;

  // Positions past the trained context are outside what the model was made for: asking
  // for them is an error, and the default never exceeds it.
  int64_t ctx = options.max_context > 0 ? options.max_context : kDefaultMaxContext;
  const int64_t model_max = model.info().n_ctx_train;
  if (model_max > 0 && options.max_context > model_max)
    return absl::InvalidArgumentError(
        StrCat("context_length ", options.max_context, " exceeds the model maximum ", model_max));
  if (model_max > 0) ctx = std::min(ctx, model_max);
  sp.max_context = ctx;
  sp.prefill_chunk = options.prefill_chunk > 0 ? options.prefill_chunk : 512;
  if (sp.kv_window > 0) sp.prefill_chunk = std::min(sp.prefill_chunk, sp.kv_window);
  auto status = PlanWithChunk(model, &sp);
  // When weights stream, a smaller prefill chunk keeps activations small next to the
  // budget (prefill is row-exact, so tokens do not change); a budget too small for
  // the first plan's activations gets the small-chunk plan too.
  if (sp.use_storage && (!status.ok() || sp.storage.streaming) && sp.prefill_chunk > kStreamingPrefillChunk) {
    sp.prefill_chunk = kStreamingPrefillChunk;
    status = PlanWithChunk(model, &sp);
  }
  if (!status.ok()) return status;
  return sp;
}

namespace {
absl::Status PlanWithChunk(const Model& model, SessionPlan* out) {
  SessionPlan& sp = *out;
  const ModelInternals::Impl& m = ModelInternals::Of(model);
  const int64_t ctx = sp.max_context;
  sp.kv_window = sp.preset.kv_window;
  sp.kv_sinks = sp.preset.kv_sinks;
  sp.kv_cells = KvCache::CellCount(ctx, sp.kv_window, sp.kv_sinks, sp.prefill_chunk);
  if (sp.kv_cells >= KvCache::CellCount(ctx, 0, 0, 0)) sp.kv_window = 0, sp.kv_sinks = 0;  // window >= context

  sp.inputs = PlanInputsFromGraph(m.graph, *m.weights);
  sp.tensor_types.clear();
  for (const auto& t : sp.inputs.tensors) {
    const BoundWeight* w = m.weights->Find(t.name);
    sp.tensor_types.push_back(w ? w->type : TensorType::F32);
  }
  storage::ApplyMoeTopK(&sp.inputs, sp.moe_top_k);
  sp.inputs.kv_bytes = 0;
  for (const auto& l : m.program->kv_layers())
    sp.inputs.kv_bytes += static_cast<uint64_t>(sp.kv_cells) * l.n_head_kv * (l.head_dim_k + l.head_dim_v) * 2;
  // Activations of one chunk: the CPU program's arena, which is the memory plan at
  // T = prefill_chunk with one output row (backends/cpu/program.h), plus attention's
  // per-row scores and the caller's logits row.
  auto arena = planner::PlanMemory(m.graph, sp.prefill_chunk, 1);
  if (!arena.ok()) return arena.status();
  sp.inputs.activation_bytes =
      arena->arena_bytes + static_cast<uint64_t>(model.info().n_vocab + 4 * sp.kv_cells) * sizeof(float);
  auto plan = storage::PlanStorage(sp.inputs, sp.preset);
  if (!plan.ok()) return plan.status();
  sp.storage = *std::move(plan);
  sp.storage.expert_prefetch = sp.moe_prefetch && sp.storage.expert_cache_bytes > 0;
  return absl::OkStatus();
}
}  // namespace

}  // namespace uaii::runtime
