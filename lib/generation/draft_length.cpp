#include "generation/draft_length.h"

#include <algorithm>

namespace uaii {

DraftLength::DraftLength(int min, int max, bool adaptive)
    : min_(min), max_(max), adaptive_(adaptive), cur_(std::clamp(kStartLength, std::max(min, 1), max)) {}

int DraftLength::Next() {
  if (!adaptive_) return max_;
  if (cur_ > 0) return cur_;
  if (cooldown_left_ > 0) {
    --cooldown_left_;
    return 0;
  }
  cur_ = 1;  // the cool-down is over: one proposal probes the drafter
  probing_ = true;
  return cur_;
}

void DraftLength::Observe(int asked, int proposed, int accepted) {
  if (!adaptive_ || asked <= 0) return;
  const bool probe = probing_;
  probing_ = false;
  if (proposed == 0 && !probe && ++empty_streak_ < kEmptyStreak) return;
  empty_streak_ = 0;
  const int floor = std::max(min_, 1);
  if (proposed > 0 && accepted == proposed) {
    cur_ = std::min(max_, std::max(cur_, 1) * 2);
    cooldown_ = kFirstCooldown;
  } else if (accepted > 0) {
    cur_ = std::clamp(accepted + 1, floor, max_);
    cooldown_ = kFirstCooldown;
  } else {
    cur_ /= 2;
    if (cur_ < floor) {
      if (min_ > 0) {
        cur_ = min_;
      } else {
        cur_ = 0;
        if (probe) cooldown_ = std::min(kMaxCooldown, cooldown_ * 2);
        cooldown_left_ = cooldown_;
      }
    }
  }
}

}  // namespace uaii
