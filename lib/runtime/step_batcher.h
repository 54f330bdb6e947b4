// Batching the forward passes of sessions that share compute threads (a server's
// slots): each session's thread hands its step (a decode token or a prefill chunk) to
// the batcher and waits; the batcher's own thread runs every pending step of the
// same program as one Program::RunBatch pass, so the weights are read once for all
// of them instead of once per session. One thread runs every pass, so the kernels'
// per-thread scratch (sized by the batch) exists once, not once per session thread. Each session's logits are the bits its own
// Run gives (backend.h), so batching changes speed, never results.
//
// When to run: a session served by the last pass is expected back within its
// sampling time, so a pending step waits until every such session has one pending
// too, or until it has waited a quarter of the last pass (between kMinWait and
// kMaxWait). A lone session never waits: it is the only one expected. A session that
// stops generating costs the others one such wait; Leave (Session's destructor)
// removes it at once.
//
// Passes run in the batcher's workspace for their program, one per program its joined
// sessions use, laid out when a session joins for kMaxPassTokens tokens and a row per
// session: a batched session never lays out an arena of its own (N slots keep one
// arena, not N grown to the batch), and the memory does not creep as batches vary.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "backends/backend.h"
#include "kernels/thread_pool.h"
#include "runtime/weight_source.h"

namespace uaii::runtime {

class StepBatcher {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::microseconds kMinWait{500}, kMaxWait{5000};
  // Tokens one pass holds (a longer prefill chunk still goes whole, alone): the
  // sessions' default prefill chunk.
  static constexpr int64_t kMaxPassTokens = 512;

  explicit StepBatcher(ThreadPool* pool);
  ~StepBatcher();  // after every session has left

  // A session that will send steps of `program` (which must outlive its Leave). The
  // program's workspace is grown now for a full pass with a row per joined session.
  absl::Status Join(const backends::Program* program);
  // The session `owner` of `program` sends no more steps: nothing waits for it, and the
  // program's workspace goes with its last session.
  void Leave(const void* owner, const backends::Program* program);

  // One session's step, of a program it joined. `weights` is the session's weight
  // source, null for weights read in place; a batched session's holds every weight in
  // memory, so the first step's serves the whole pass. Steps with another program or
  // moe_top_k (RunContext's) go in another pass.
  struct Step {
    const backends::Program* program = nullptr;
    backends::SequenceRun seq;
    int64_t moe_top_k = 0;
    WeightSource* weights = nullptr;
    const void* owner = nullptr;  // the session: one step at a time each
  };
  // Runs `step` in the next pass with whatever else is pending, on the batcher's threads.
  absl::Status Run(const Step& step);

  struct Stats {
    int64_t passes = 0, steps = 0;  // steps / passes = the mean batch
    int64_t max_batch = 0;
  };
  Stats stats() const;

 private:
  struct Request {
    Step step;
    Clock::time_point submitted;
    absl::Status status;
    bool done = false;
  };
  bool ExpectedAllPending() const;  // under mu_
  Clock::duration Wait() const;     // under mu_
  void TakePass();  // under mu_, into pass_: the front's program and moe_top_k, FIFO, bounded
  void RunPass();   // pass_, on thread_ (running_)
  void Loop();      // thread_: waits for steps, runs passes

  ThreadPool* const pool_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Request*> pending_;
  bool running_ = false;
  // The pass being run and its sequences, reused so that a warm step allocates nothing;
  // only thread_ touches them.
  std::vector<Request*> pass_;
  std::vector<backends::SequenceRun> seqs_;
  backends::Workspace* pass_workspace_ = nullptr;
  struct Joined {
    int sessions = 0;
    std::unique_ptr<backends::Workspace> workspace;
  };
  std::map<const backends::Program*, Joined> programs_;
  bool stopping_ = false;
  std::thread thread_;  // last: started once the rest is constructed
  std::vector<const void*> expected_;  // the last pass's owners
  Clock::duration last_pass_{};
  Stats stats_;
};

}  // namespace uaii::runtime
