// How many proposals to ask a drafter for next (speculative decoding's adaptive draft
// length, docs/speculative.md). A rejected proposal costs a drafter step and a wider
// verification batch, so a drafter that keeps failing must stop being asked:
//
//   * every proposal kept: the length doubles (up to max);
//   * some kept: the length becomes kept + 1 (what the drafter just managed, and one more);
//   * none kept (or none proposed): the length halves. Below max(min, 1) with min == 0,
//     drafting pauses for a cool-down of C tokens, then one proposal probes again; each
//     failed probe doubles C (4 .. 256), a kept one restarts growth and resets C.
//
// So a drafter that never agrees costs one probe per 256 tokens in the long run, and a
// good one is back at full length within a few steps.
#pragma once

namespace uaii {

class DraftLength {
 public:
  static constexpr int kFirstCooldown = 4;
  static constexpr int kMaxCooldown = 256;

  DraftLength(int min, int max, bool adaptive);
  // Proposals to ask for at this step (0: decode without drafting). Counts a step.
  int Next();
  // After asking for `asked`: the drafter proposed `proposed`, the rule kept `accepted`.
  void Observe(int asked, int proposed, int accepted);
  int current() const { return cur_; }

 private:
  int min_, max_;
  bool adaptive_;
  int cur_;
  int cooldown_left_ = 0;
  int cooldown_ = kFirstCooldown;
};

}  // namespace uaii
