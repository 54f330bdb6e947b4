#include "uaii/session.h"

#include <algorithm>
#include <chrono>

#include "backends/registry.h"
#include "kernels/thread_pool.h"
#include "runtime/session_internals.h"
#include "runtime/kv_cache.h"
#include "runtime/model_impl.h"
#include "runtime/step_profile.h"
#include "runtime/session_plan.h"
#include "runtime/step_batcher.h"
#include "runtime/streamed_weights.h"
#include "util/str_cat.h"

namespace uaii {

struct ComputeThreads::Impl {
  std::shared_ptr<ThreadPool> pool;
  std::unique_ptr<runtime::StepBatcher> batcher;  // StepBatching::kAcrossSessions
};

ComputeThreads::ComputeThreads(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ComputeThreads::~ComputeThreads() = default;
int ComputeThreads::size() const { return impl_->pool->num_threads(); }

ComputeThreads::BatchStats ComputeThreads::batch_stats() const {
  if (!impl_->batcher) return {};
  const auto st = impl_->batcher->stats();
  return {st.passes, st.steps, st.max_batch};
}

std::shared_ptr<ComputeThreads> ComputeThreads::Create(int threads, StepBatching batching) {
  auto impl = std::make_unique<Impl>();
  impl->pool = std::make_shared<ThreadPool>(threads);
  if (batching == StepBatching::kAcrossSessions) impl->batcher = std::make_unique<runtime::StepBatcher>(impl->pool.get());
  return std::shared_ptr<ComputeThreads>(new ComputeThreads(std::move(impl)));
}

struct Session::Impl {
  std::shared_ptr<const Model> model;
  SessionOptions opts;
  std::shared_ptr<ThreadPool> pool;  // its own, or ComputeThreads' (shared)
  const backends::Backend* backend = nullptr;       // SessionOptions::device
  std::string device_note;                          // Session::device_note()
  backends::DevicePlacement placement;              // a device backend's weights (device_stats)
  std::unique_ptr<backends::Program> own_program;   // compiled for a backend other than the CPU
  const backends::Program* program = nullptr;       // the model's CPU program, or own_program
  std::unique_ptr<backends::Workspace> workspace;   // the program's memory for this session's runs
  std::unique_ptr<runtime::KvCache> cache;
  runtime::StepBatcher* batcher = nullptr;  // ComputeThreads' when its steps may join others'
  int64_t n_past = 0;
  runtime::SessionPlan plan;
  std::unique_ptr<runtime::StreamedWeights> storage;  // null: weights through the mapping
  double eval_seconds = 0;
  uint64_t expert_decode_bytes = 0;  // expert LRU reads during single-token steps
  int64_t decode_tokens = 0;
  // EvalInto's per-chunk positions and output rows, kept so that a decode step
  // allocates nothing.
  std::vector<int32_t> pos;
  std::vector<int64_t> rows;
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

runtime::KvCache& SessionInternals::Cache(const Session& s) { return *s.impl_->cache; }
ThreadPool* SessionInternals::Pool(const Session& s) { return s.impl_->pool.get(); }
Session::~Session() {
  if (impl_->batcher) impl_->batcher->Leave(this, impl_->program);
}

absl::StatusOr<std::unique_ptr<Session>> Session::Create(std::shared_ptr<const Model> model,
                                                         const SessionOptions& options) {
  if (!model) return absl::InvalidArgumentError("Session::Create: null model");
  auto impl = std::make_unique<Impl>();
  impl->opts = options;
  // Shared threads: the plan counts them as the session's.
  if (options.compute_threads) impl->opts.threads = options.compute_threads->size();
  auto backend = backends::SelectBackend(options.device);
  if (!backend.ok()) return backend.status();
  impl->backend = *backend;
  if (impl->backend != &backends::Cpu()) {
    backends::CompileOptions copts;
    copts.device_memory_bytes = options.device_memory_bytes;
    const auto& internals = ModelInternals::Of(*model);
    auto program = impl->backend->Compile(internals.graph, *internals.weights, copts);
    if (program.ok()) {
      if (auto placed = impl->backend->PlanPlacement(internals.graph, *internals.weights, copts); placed.ok())
        impl->placement = *placed;
      impl->own_program = std::move(*program);
      impl->program = impl->own_program.get();
    } else if (options.device == "auto") {
      // "auto" runs what it can: the model on the CPU, saying why.
      impl->device_note = StrCat(impl->backend->device(), " cannot run this model (",
                                 std::string(program.status().message()), "); running on the CPU");
      impl->backend = &backends::Cpu();
    } else {
      return program.status();
    }
  } else if (options.device == "auto") {
    impl->device_note = StrCat(backends::AutoCpuReason(), "; running on the CPU");
  }
  if (impl->backend == &backends::Cpu()) impl->program = ModelInternals::Of(*model).program.get();
  // The preset, KV window and storage plan (runtime/session_plan.h): the plan is what runs.
  auto plan = runtime::PlanSession(*model, impl->opts);
  if (!plan.ok()) return plan.status();
  impl->plan = *std::move(plan);
  const int64_t ctx = impl->plan.max_context;
  impl->opts.max_context = ctx;
  impl->opts.prefill_chunk = impl->plan.prefill_chunk;
  impl->opts.threads = impl->plan.threads;
  // The storage engine streams host weights to the CPU's kernels; a device backend's
  // program holds its own copy of the weights (uploaded at compile).
  if (impl->plan.use_storage && impl->backend == &backends::Cpu()) {
    auto sw = runtime::StreamedWeights::Create(ModelInternals::Of(*model).graph, *ModelInternals::Of(*model).weights, impl->plan.inputs,
                                               impl->plan.storage, options.on_load_progress);
    if (!sw.ok()) return sw.status();
    impl->storage = *std::move(sw);
  }
  impl->pool = options.compute_threads ? options.compute_threads->impl_->pool
                                       : std::make_shared<ThreadPool>(impl->opts.threads);
  // Weights through the mapping on the CPU: interleaved copies for its group kernels.
  if (!impl->plan.use_storage && impl->backend == &backends::Cpu()) {
    if (auto st = ModelInternals::Of(*model).weights->PrepareInterleaved(ModelInternals::Of(*model).graph, impl->pool.get(),
                                                                    options.on_load_progress);
        !st.ok())
      return st;
  }
  impl->workspace = impl->program->NewWorkspace();
  // The KV cache lives in the backend's memory; its cell policy (window, sinks) is ours.
  const auto& layers = impl->program->kv_layers();
  const int64_t cells = runtime::KvCache::CellCount(ctx, impl->plan.kv_window, impl->plan.kv_sinks,
                                                    impl->plan.prefill_chunk);
  auto kv = impl->backend->Allocate(runtime::KvCache::ArenaBytes(layers, cells));
  if (!kv.ok()) return kv.status();
  if ((*kv)->host() == nullptr)
    return absl::UnimplementedError(StrCat("backend '", impl->backend->name(),
                                           "' keeps its buffers off the host; its KV cache is not supported yet"));
  impl->cache = std::make_unique<runtime::KvCache>(layers, ctx, impl->plan.kv_window, impl->plan.kv_sinks,
                                                   impl->plan.prefill_chunk, *std::move(kv));
  // Batched with other sessions' steps only where a pass can hold them: the CPU program
  // with every weight in memory (in place, or all pinned by a budget the model fits in).
  // Streamed layers and expert LRUs are each session's own reads.
  const bool all_in_memory =
      !impl->plan.use_storage || (!impl->plan.storage.streaming && impl->plan.storage.expert_bytes == 0);
  if (options.compute_threads && options.compute_threads->impl_->batcher && all_in_memory &&
      impl->backend == &backends::Cpu()) {
    if (auto st = options.compute_threads->impl_->batcher->Join(impl->program); !st.ok()) return st;
    impl->batcher = options.compute_threads->impl_->batcher.get();
  }
  impl->model = std::move(model);
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

int64_t Session::n_past() const { return impl_->n_past; }
std::string Session::device() const { return impl_->backend->device(); }
const std::string& Session::device_note() const { return impl_->device_note; }

DeviceStats Session::device_stats() const {
  DeviceStats d;
  d.device = impl_->backend->device();
  d.budget_bytes = impl_->placement.budget_bytes;
  d.resident_bytes = impl_->placement.resident_bytes;
  d.host_bytes = impl_->placement.host_bytes;
  d.staging_bytes = impl_->placement.staging_bytes;
  d.requantized_weights = impl_->placement.requantized_weights;
  return d;
}
int64_t Session::max_context() const { return impl_->opts.max_context; }
const Model& Session::model() const { return *impl_->model; }

StorageStats Session::storage_stats() const {
  const Impl& s = *impl_;
  StorageStats st;
  const auto& p = s.plan.storage;
  st.budget_bytes = p.budget_bytes;
  st.pinned_bytes = p.pinned_bytes;
  st.streamed_bytes = p.streamed_bytes;
  st.staging_bytes = p.staging_bytes * p.staging_buffers;
  st.kv_bytes = s.cache->bytes();
  st.kv_window = s.cache->window();
  if (s.storage) {
    const auto io = s.storage->stats();
    st.bytes_read = io.bytes_read;
    st.io_wait_seconds = io.io_wait_seconds;
    st.staging_hits = io.hits;
    st.staging_misses = io.misses;
    st.read_seconds = io.read_seconds;
    const auto files = s.storage->file_counters();
    st.direct_bytes = files.direct_bytes;
    st.cached_bytes = files.cached_bytes;
    const auto ex = s.storage->expert_stats();
    st.expert_cache_bytes = ex.capacity_bytes;
    st.expert_hits = ex.hits;
    st.expert_misses = ex.misses;
    st.expert_bytes_read = ex.bytes_read;
    st.expert_io_wait_seconds = ex.io_wait_s;
    st.expert_io_uring = ex.io_uring;
    st.expert_prefetch = ex.prefetch;
    st.expert_prefetch_reads = ex.prefetch_reads;
    st.expert_prefetch_hits = ex.prefetch_hits;
    st.expert_prefetch_wasted = ex.prefetch_wasted;
    st.expert_decode_bytes_read = s.expert_decode_bytes;
    st.decode_tokens = s.decode_tokens;
  }
  st.compute_seconds = std::max(0.0, s.eval_seconds - st.io_wait_seconds);
  return st;
}

void Session::Truncate(int64_t n) {
  n = std::clamp<int64_t>(n, 0, impl_->n_past);
  impl_->cache->Clear(n);
  impl_->n_past = n;
}

absl::StatusOr<std::vector<float>> Session::Eval(std::span<const TokenId> tokens, bool all_logits) {
  std::vector<float> logits;
  if (absl::Status st = EvalInto(tokens, &logits, all_logits); !st.ok()) return st;
  return logits;
}

absl::Status Session::EvalInto(std::span<const TokenId> tokens, std::vector<float>* logits, bool all_logits) {
  return EvalWithHidden(tokens, logits, nullptr, all_logits);
}

absl::Status Session::EvalWithHidden(std::span<const TokenId> tokens, std::vector<float>* logits,
                                     std::vector<float>* hidden, bool all_logits) {
  Impl& s = *impl_;
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (logits == nullptr) return absl::InvalidArgumentError("Session::EvalInto: null logits vector");
  if (n == 0) return absl::InvalidArgumentError("Session::Eval: no tokens");
  if (s.n_past + n > s.opts.max_context)
    return absl::OutOfRangeError(StrCat("context full: ", s.n_past, " + ", n, " tokens exceed max_context ",
                                        s.opts.max_context));
  const int64_t start = s.n_past;
  const auto eval_start = std::chrono::steady_clock::now();
  backends::RunContext ctx;
  ctx.pool = s.pool.get();
  ctx.weights = s.storage.get();
  ctx.moe_top_k = s.opts.moe_top_k;  // 0: the file's (exact)
  ctx.profile = runtime::StepProfile::Get();
  ctx.workspace = s.workspace.get();
  const uint64_t expert_bytes0 = s.storage ? s.storage->expert_stats().bytes_read : 0;
  bool first_rows = true;  // the first chunk with output rows writes *logits itself
  std::vector<float> hidden_rows;  // one chunk's (RunContext::hidden)
  if (hidden) hidden->clear();
  for (int64_t off = 0; off < n; off += s.opts.prefill_chunk) {
    const int64_t T = std::min(s.opts.prefill_chunk, n - off);
    std::vector<int32_t>& pos = s.pos;
    pos.resize(static_cast<size_t>(T));
    for (int64_t t = 0; t < T; ++t) pos[t] = static_cast<int32_t>(start + off + t);
    std::vector<int64_t>& rows = s.rows;
    rows.clear();
    if (all_logits)
      for (int64_t t = 0; t < T; ++t) rows.push_back(t);
    else if (off + T == n)
      rows.push_back(T - 1);
    std::vector<float> out;
    auto run = [&](const std::vector<int64_t>& want, std::vector<float>* into) {
      // Hidden states only for the rows asked for (not a chunk's dropped last row);
      // the step batcher, which merges sessions' passes, returns none: run alone.
      ctx.hidden = hidden && !rows.empty() ? &hidden_rows : nullptr;
      if (s.batcher && !ctx.hidden)
        return s.batcher->Run({s.program, {tokens.data() + off, pos.data(), T, &want, s.cache.get(), into},
                               ctx.moe_top_k, ctx.weights, this});
      return s.program->Run(tokens.data() + off, pos.data(), T, want, *s.cache, ctx, into);
    };
    absl::Status st;
    if (rows.empty()) {
      // Rows are still needed to run the graph's head; ask for the last one and drop it.
      st = run({T - 1}, &out);
    } else {
      // One chunk (every decode step) goes straight into *logits: no second copy.
      st = run(rows, first_rows ? logits : &out);
      if (!first_rows) logits->insert(logits->end(), out.begin(), out.end());
      first_rows = false;
      if (st.ok() && hidden) {
        if (hidden_rows.empty())
          st = absl::FailedPreconditionError(StrCat("Session::EvalWithHidden: the ", device(),
                                                    " backend returns no hidden state for this model"));
        hidden->insert(hidden->end(), hidden_rows.begin(), hidden_rows.end());
        hidden_rows.clear();
      }
    }
    if (!st.ok()) {
      s.cache->Clear(start);
      return st;
    }
  }
  s.n_past = start + n;
  if (n == 1 && s.storage) {
    s.expert_decode_bytes += s.storage->expert_stats().bytes_read - expert_bytes0;
    ++s.decode_tokens;
  }
  s.eval_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - eval_start).count();
  return absl::OkStatus();
}

TokenId ArgMax(std::span<const float> logits) {
  TokenId best = 0;
  for (size_t i = 1; i < logits.size(); ++i)
    if (logits[i] > logits[best]) best = static_cast<TokenId>(i);
  return best;
}

absl::StatusOr<GenerateResult> GenerateGreedy(Session& session, std::span<const TokenId> prompt,
                                              const GenerateOptions& options,
                                              const std::function<bool(TokenId)>& on_token) {
  using Clock = std::chrono::steady_clock;
  GenerateResult r;
  r.prompt_tokens = static_cast<int64_t>(prompt.size());
  auto t0 = Clock::now();
  auto logits = session.Eval(prompt);
  if (!logits.ok()) return logits.status();
  auto t1 = Clock::now();
  r.prefill_seconds = std::chrono::duration<double>(t1 - t0).count();
  const Model& model = session.model();
  r.stop = StopReason::kMaxTokens;
  while (static_cast<int64_t>(r.tokens.size()) < options.max_tokens) {
    TokenId next = ArgMax(*logits);
    if (model.IsEndOfGeneration(next)) {
      r.stop = StopReason::kEndOfGeneration;
      break;
    }
    r.tokens.push_back(next);
    if (on_token && !on_token(next)) break;
    if (static_cast<int64_t>(r.tokens.size()) >= options.max_tokens) break;
    if (session.n_past() >= session.max_context()) {
      r.stop = StopReason::kContextFull;
      break;
    }
    logits = session.Decode(next);
    if (!logits.ok()) return logits.status();
  }
  r.decode_seconds = std::chrono::duration<double>(Clock::now() - t1).count();
  return r;
}

}  // namespace uaii
