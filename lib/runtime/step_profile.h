// Where a forward pass's time goes, by operator kind: opt-in with UAII_PROFILE_STEPS=1
// (UAII_PROFILE_STEPS=ops: by operator, each layer's alike ops together as blk.*),
// printed to stderr when the process exits (decode steps of one token and prefill
// batches apart, as ms per token and share). A program times each step with the
// steady clock only when it is on; off, a step costs one pointer test.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

namespace uaii::runtime {

class StepProfile {
 public:
  // The process's profile, or nullptr unless UAII_PROFILE_STEPS is set (read once).
  static StepProfile* Get();

  // One program run of `tokens` rows, and its steps' times.
  void AddRun(int64_t tokens);
  // A step of op `name` (kind `kind`) took `seconds` in a run of `tokens` rows.
  void AddStep(const std::string& kind, const std::string& name, int64_t tokens, double seconds);

  // The table, as printed at exit: per phase, runs, tokens and ms per token in steps,
  // then one line per kind (ms per token, share, steps per run).
  std::string Report() const;

  // An empty profile (tests); by_op: keyed by op name, not kind. Get()'s prints itself
  // at exit.
  explicit StepProfile(bool by_op = false);
  ~StepProfile();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  bool by_op_ = false;
  bool print_at_exit_ = false;
};

}  // namespace uaii::runtime
