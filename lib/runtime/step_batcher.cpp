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
  ctx.workspace = first.workspace;
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

absl::Status StepBatcher::Run(const Step& step) {
  Request req{step, Clock::now(), absl::OkStatus()};
  std::unique_lock<std::mutex> lk(mu_);
  pending_.push_back(&req);
  cv_.notify_all();
  while (!req.done) {
    if (running_) {
      cv_.wait(lk);
      continue;
    }
    const Clock::time_point deadline = pending_.front()->submitted + Wait();
    if (!ExpectedAllPending() && Clock::now() < deadline) {
      cv_.wait_until(lk, deadline);
      continue;
    }
    // This thread runs the next pass (which may not hold its own step: then it waits
    // for a later one like the others).
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
  return req.status;
}

void StepBatcher::Forget(const void* owner) {
  std::lock_guard<std::mutex> lk(mu_);
  expected_.erase(std::remove(expected_.begin(), expected_.end(), owner), expected_.end());
  cv_.notify_all();
}

StepBatcher::Stats StepBatcher::stats() const {
  std::lock_guard<std::mutex> lk(mu_);
  return stats_;
}

}  // namespace uaii::runtime
