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

std::vector<StepBatcher::Request*> StepBatcher::TakePass() {
  std::vector<Request*> pass;
  const Step& first = pending_.front()->step;
  int64_t tokens = 0;
  for (auto it = pending_.begin(); it != pending_.end();) {
    Request* r = *it;
    const Step& s = r->step;
    const bool fits = pass.empty() || tokens + s.seq.T <= std::max(kMaxPassTokens, first.seq.T);
    if (s.program == first.program && s.moe_top_k == first.moe_top_k && fits) {
      pass.push_back(r);
      tokens += s.seq.T;
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
  return pass;
}

void StepBatcher::RunPass(const std::vector<Request*>& pass) {
  const Step& first = pass[0]->step;
  backends::RunContext ctx;
  ctx.pool = pool_;
  ctx.weights = first.weights;
  ctx.moe_top_k = first.moe_top_k;
  ctx.profile = StepProfile::Get();
  ctx.workspace = first.workspace;
  std::vector<backends::SequenceRun> seqs;
  seqs.reserve(pass.size());
  for (const Request* r : pass) seqs.push_back(r->step.seq);
  absl::Status st = first.program->RunBatch(seqs, ctx);
  if (st.ok() || pass.size() == 1) {
    for (Request* r : pass) r->status = st;
    return;
  }
  // One sequence's failure must not fail the others: each alone says whose it was
  // (a failed pass may have written K/V rows; a rerun writes the same positions again).
  for (Request* r : pass) {
    const backends::SequenceRun& q = r->step.seq;
    r->status = first.program->Run(q.tokens, q.positions, q.T, *q.rows, *q.cache, ctx, q.out);
  }
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
    std::vector<Request*> pass = TakePass();
    lk.unlock();
    const Clock::time_point t0 = Clock::now();
    RunPass(pass);
    const Clock::duration took = Clock::now() - t0;
    lk.lock();
    last_pass_ = took;
    expected_.clear();
    for (Request* r : pass) {
      expected_.push_back(r->step.owner);
      r->done = true;
    }
    ++stats_.passes;
    stats_.steps += static_cast<int64_t>(pass.size());
    stats_.max_batch = std::max<int64_t>(stats_.max_batch, static_cast<int64_t>(pass.size()));
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
