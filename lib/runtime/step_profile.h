// Where a forward pass's time goes, by operator kind: opt-in with UAII_PROFILE_STEPS=1,
// printed to stderr when the process exits (decode steps of one token and prefill
// batches apart, as ms per token and share). The executor times each step with the
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

  // One executor run of `tokens` rows, and its steps' times.
  void AddRun(int64_t tokens);
  void AddStep(const std::string& kind, int64_t tokens, double seconds);

  // The table, as printed at exit: per phase, runs, tokens and ms per token in steps,
  // then one line per kind (ms per token, share, steps per run).
  std::string Report() const;

  StepProfile();  // an empty profile (tests); Get()'s prints itself at exit
  ~StepProfile();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  bool print_at_exit_ = false;
};

}  // namespace uaii::runtime
