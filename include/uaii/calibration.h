// uaii::LearnFromGeneration: what a finished generation teaches the storage cost model
// (docs/storage.md, "Observed figures"): the figure the run exercised, fitted to its
// measured decode time through the cost model's pipeline simulation, folded into the
// calibration cache ($UAII_HOME/calibration.json). `uaii generate` and `uaii chat` call
// it after every run; the C ABI when a session opts in
// (uaii_session_options.learn_calibration). Later dry runs (uaii/plan.h) predict from it.
#pragma once
#include <cstdint>
#include <string>

#include "uaii/model.h"
#include "uaii/session.h"

namespace uaii {

// Decode timings of one run or of several calls of one session added together.
struct DecodeTimings {
  int64_t steps = 0;           // decode steps (tokens after each call's first)
  double seconds = 0;          // their wall time
  double io_wait_seconds = 0;  // of that, waiting for streamed weights
  void Add(int64_t s, double secs, double wait) {
    steps += s;
    seconds += secs;
    io_wait_seconds += wait;
  }
};

// Fits the figures `decode` exercised under the plan `so` gives for `model` (cold
// streaming: the streamed compute rate to the time not waiting, then the disk rate to
// the decode time; warm streaming: the warm streaming rate; nothing streamed: the
// resident rate) and folds them into `cache_dir`/calibration.json under the model file
// `model_path`. `st`: the session's storage figures at the end (which bytes came from
// the device, which from the page cache). Never fails the caller: returns a note when
// the cache could not be written, "" otherwise (also when there was nothing to learn:
// fewer than one decode step, a MoE model, a plan that differs from the run's).
std::string LearnFromGeneration(const std::string& cache_dir, const std::string& model_path, const Model& model,
                                const SessionOptions& so, const StorageStats& st, const DecodeTimings& decode);

}  // namespace uaii
