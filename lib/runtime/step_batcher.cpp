#include "runtime/step_batcher.h"

#include <algorithm>

#include "runtime/step_profile.h"

namespace uaii::runtime {

bool StepBatcher::ExpectedAllPending() const {
  for (const void* o : expected_)
    if (std::none_of(pending_.begin(), pending_.end(), [&](const Request* r) { return r->step.owner == o; }))
      return false;
  return true;
}

StepBatcher::Clock::duration StepBatcher::Wait() const {
  return std::clamp<Clock::duration>(last_pass_ / 4, kMinWait, kMaxWait);
}

void StepBatcher::TakePass() {
  pass_.clear();
  const Step& first = pending_.front()->step;
  Joined& joined = programs_[first.program];
  if (!joined.workspace) joined.workspace = first.program->NewWorkspace();
  pass_workspace_ = joined.workspace.get();
  int64_t tokens = 0;
  for (auto it = pending_.begin(); it != pending_.end();) {
    const Step& s = (*it)->step;
    const bool fits = pass_.empty() || tokens + s.seq.T <= std::max(kMaxPassTokens, first.seq.T);
    if (s.program == first.program && s.moe_top_k == first.moe_top_k && fits) {
      pass_.push_back(*it);
      tokens += s.seq.T;
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
}

void StepBatcher::RunPass() {
  const Step& first = pass_[0]->step;
  backends::RunContext ctx;
  ctx.pool = pool_;
  ctx.weights = first.weights;
  ctx.moe_top_k = first.moe_top_k;
  ctx.profile = StepProfile::Get();
  ctx.workspace = pass_workspace_;
  seqs_.clear();
  for (const Request* r : pass_) seqs_.push_back(r->step.seq);
  const absl::Status st = first.program->RunBatch(seqs_, ctx);
  if (st.ok() || pass_.size() == 1) {
    for (Request* r : pass_) r->status = st;
    return;
  }
  // One sequence's failure must not fail the others: each alone says whose it was
  // (a failed pass may have written K/V rows; a rerun writes the same positions again).
  for (size_t i = 0; i < pass_.size(); ++i) pass_[i]->status = first.program->RunBatch({&seqs_[i], 1}, ctx);
}

StepBatcher::StepBatcher(ThreadPool* pool) : pool_(pool), thread_([this] { Loop(); }) {}

StepBatcher::~StepBatcher() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

absl::Status StepBatcher::Run(const Step& step) {
  Request req{step, Clock::now(), absl::OkStatus()};
  std::unique_lock<std::mutex> lk(mu_);
  pending_.push_back(&req);
  cv_.notify_all();
  cv_.wait(lk, [&] { return req.done; });
  return req.status;
}

void StepBatcher::Loop() {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    cv_.wait(lk, [&] { return stopping_ || !pending_.empty(); });
    if (stopping_) return;  // ComputeThreads is going: no session is left to send a step
    const Clock::time_point deadline = pending_.front()->submitted + Wait();
    if (!ExpectedAllPending() && Clock::now() < deadline) {
      cv_.wait_until(lk, deadline);
      continue;
    }
    running_ = true;
    TakePass();
    lk.unlock();
    const Clock::time_point t0 = Clock::now();
    RunPass();
    const Clock::duration took = Clock::now() - t0;
    lk.lock();
    last_pass_ = took;
    expected_.clear();
    for (Request* r : pass_) {
      expected_.push_back(r->step.owner);
      r->done = true;
    }
    const auto n = static_cast<int64_t>(pass_.size());
    ++stats_.passes;
    stats_.steps += n;
    stats_.max_batch = std::max(stats_.max_batch, n);
    running_ = false;
    cv_.notify_all();
  }
}

absl::Status StepBatcher::Join(const backends::Program* program) {
  std::unique_lock<std::mutex> lk(mu_);
  Joined& joined = programs_[program];
  // Counted before the wait below: a Leave meanwhile must not erase the entry (and its
  // workspace) this thread holds while the lock is released.
  ++joined.sessions;
  if (!joined.workspace) joined.workspace = program->NewWorkspace();
  // Not while a pass runs in it: growing the arena would move it under the pass.
  cv_.wait(lk, [&] { return !running_ || pass_workspace_ != joined.workspace.get(); });
  if (auto st = program->ReserveWorkspace(*joined.workspace, kMaxPassTokens, joined.sessions); !st.ok()) {
    if (--joined.sessions <= 0) programs_.erase(program);
    return st;
  }
  return absl::OkStatus();
}

void StepBatcher::Leave(const void* owner, const backends::Program* program) {
  std::lock_guard<std::mutex> lk(mu_);
  expected_.erase(std::remove(expected_.begin(), expected_.end(), owner), expected_.end());
  // The session is not inside a pass (its thread is here), so no pass uses the workspace.
  if (auto it = programs_.find(program); it != programs_.end() && --it->second.sessions <= 0) programs_.erase(it);
  cv_.notify_all();
}

StepBatcher::Stats StepBatcher::stats() const {
  std::lock_guard<std::mutex> lk(mu_);
  return stats_;
}

}  // namespace uaii::runtime
