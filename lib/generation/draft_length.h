// How many proposals to ask a drafter for next (speculative decoding's adaptive draft
// length, docs/speculative.md). A rejected proposal costs a drafter step and a wider
// verification batch, so a drafter that keeps failing must stop being asked:
//
//   * it starts at min(max, 4): a drafter is trusted with a long batch once it earned it;
//   * every proposal kept: the length doubles (up to max);
//   * some kept: the length becomes kept + 1 (what the drafter just managed, and one more);
//   * none kept: the length halves. Below max(min, 1) with min == 0, drafting pauses for
//     a cool-down of C tokens, then one proposal probes again; each failed probe doubles
//     C (4 .. 256), a kept one restarts growth and resets C;
//   * none proposed (the drafter was below p_min): nothing was verified, so nothing was
//     wasted but the drafter's own step; only kEmptyStreak such steps in a row count as
//     one failure (a drafter that is never sure stops being asked), or one probe's.
//
// So a drafter that never agrees costs one probe per 256 tokens in the long run, and a
// good one is at full length within three steps.
#pragma once

namespace uaii {

class DraftLength {
 public:
  static constexpr int kStartLength = 4;
  static constexpr int kFirstCooldown = 4;
  static constexpr int kMaxCooldown = 256;
  static constexpr int kEmptyStreak = 4;

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
  int empty_streak_ = 0;
  bool probing_ = false;  // the step after a cool-down
};

}  // namespace uaii
