#include "uaii/session.h"

#include <algorithm>
#include <chrono>

#include "kernels/thread_pool.h"
#include "runtime/kv_cache.h"
#include "runtime/model_impl.h"
#include "util/str_cat.h"

namespace uaii {

struct Session::Impl {
  std::shared_ptr<const Model> model;
  SessionOptions opts;
  std::unique_ptr<ThreadPool> pool;
  std::unique_ptr<runtime::KvCache> cache;
  int64_t n_past = 0;
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

absl::StatusOr<std::unique_ptr<Session>> Session::Create(std::shared_ptr<const Model> model,
                                                         const SessionOptions& options) {
  if (!model) return absl::InvalidArgumentError("Session::Create: null model");
  auto impl = std::make_unique<Impl>();
  impl->opts = options;
  int64_t ctx = options.max_context > 0 ? options.max_context : model->info().n_ctx_train;
  if (model->info().n_ctx_train > 0) ctx = std::min(ctx, model->info().n_ctx_train);
  impl->opts.max_context = ctx;
  if (impl->opts.prefill_chunk <= 0) impl->opts.prefill_chunk = 512;
  impl->pool = std::make_unique<ThreadPool>(options.threads);
  impl->cache = std::make_unique<runtime::KvCache>(model->impl().executor->kv_layers(), ctx);
  impl->model = std::move(model);
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

int64_t Session::n_past() const { return impl_->n_past; }
int64_t Session::max_context() const { return impl_->opts.max_context; }
const Model& Session::model() const { return *impl_->model; }

void Session::Truncate(int64_t n) {
  n = std::clamp<int64_t>(n, 0, impl_->n_past);
  impl_->cache->Clear(n);
  impl_->n_past = n;
}

absl::StatusOr<std::vector<float>> Session::Eval(std::span<const TokenId> tokens, bool all_logits) {
  Impl& s = *impl_;
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n == 0) return absl::InvalidArgumentError("Session::Eval: no tokens");
  if (s.n_past + n > s.opts.max_context)
    return absl::OutOfRangeError(StrCat("context full: ", s.n_past, " + ", n, " tokens exceed max_context ",
                                        s.opts.max_context));
  const int64_t vocab = s.model->impl().executor->n_outputs_per_row();
  const int64_t start = s.n_past;
  std::vector<float> result;
  result.reserve(static_cast<size_t>((all_logits ? n : 1) * vocab));
  for (int64_t off = 0; off < n; off += s.opts.prefill_chunk) {
    const int64_t T = std::min(s.opts.prefill_chunk, n - off);
    std::vector<int32_t> pos(T);
    for (int64_t t = 0; t < T; ++t) pos[t] = static_cast<int32_t>(start + off + t);
    std::vector<int64_t> rows;
    if (all_logits)
      for (int64_t t = 0; t < T; ++t) rows.push_back(t);
    else if (off + T == n)
      rows.push_back(T - 1);
    std::vector<float> out;
    absl::Status st;
    if (rows.empty()) {
      // Rows are still needed to run the graph's head; ask for the last one and drop it.
      st = s.model->impl().executor->Run(tokens.data() + off, pos.data(), T, {T - 1}, *s.cache, s.pool.get(), &out);
    } else {
      st = s.model->impl().executor->Run(tokens.data() + off, pos.data(), T, rows, *s.cache, s.pool.get(), &out);
      result.insert(result.end(), out.begin(), out.end());
    }
    if (!st.ok()) {
      s.cache->Clear(start);
      return st;
    }
  }
  s.n_past = start + n;
  return result;
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
