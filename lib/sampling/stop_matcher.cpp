#include "sampling/stop_matcher.h"

#include <algorithm>
#include <utility>

#include "util/str_cat.h"

namespace uaii::sampling {

namespace {

// Length of the incomplete UTF-8 sequence at the end of `s` (0 when `s` ends on
// a character boundary or with bytes that are not valid UTF-8 anyway: those are
// released as they are, so holding them back would gain nothing).
size_t IncompleteUtf8Tail(std::string_view s) {
  const size_t look = std::min<size_t>(3, s.size());
  for (size_t k = 1; k <= look; ++k) {
    const unsigned char c = static_cast<unsigned char>(s[s.size() - k]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking back
    size_t need = 0;
    if ((c & 0xE0) == 0xC0) need = 2;
    else if ((c & 0xF0) == 0xE0) need = 3;
    else if ((c & 0xF8) == 0xF0) need = 4;
    return need > k ? k : 0;  // a lead byte still waiting for continuations
  }
  return 0;
}

}  // namespace

absl::StatusOr<StopMatcher> StopMatcher::Create(std::vector<std::string> stops) {
  for (size_t i = 0; i < stops.size(); ++i) {
    if (stops[i].empty())
      return absl::InvalidArgumentError(StrCat("stop strings: entry ", i, " is empty (it would stop at once)"));
  }
  return StopMatcher(std::move(stops));
}

StopResult StopMatcher::Feed(std::string_view piece) {
  StopResult r;
  if (stopped_) {
    r.stopped = true;
    r.stop_index = stop_index_;
    r.cut_offset = released_;
    return r;
  }
  pending_.append(piece);

  // Earliest complete match. The released text never contained one, and the
  // held-back part is shorter than the longest stop string, so searching
  // pending_ is enough.
  size_t best_pos = std::string::npos;
  int best = -1;
  for (size_t i = 0; i < stops_.size(); ++i) {
    const size_t pos = pending_.find(stops_[i]);
    if (pos < best_pos) {
      best_pos = pos;
      best = static_cast<int>(i);
    }
  }
  if (best >= 0) {
    r.text = pending_.substr(0, best_pos);
    released_ += best_pos;
    pending_.clear();
    stopped_ = true;
    stop_index_ = best;
    r.stopped = true;
    r.stop_index = best;
    r.cut_offset = released_;
    return r;
  }

  // Hold back the longest suffix that is a proper prefix of some stop string.
  size_t hold = 0;
  for (const std::string& s : stops_) {
    for (size_t len = std::min(s.size() - 1, pending_.size()); len > hold; --len) {
      if (std::string_view(pending_).substr(pending_.size() - len) == std::string_view(s).substr(0, len)) {
        hold = len;
        break;
      }
    }
  }
  size_t emit = pending_.size() - hold;
  emit -= IncompleteUtf8Tail(std::string_view(pending_).substr(0, emit));
  r.text = pending_.substr(0, emit);
  pending_.erase(0, emit);
  released_ += emit;
  return r;
}

std::string StopMatcher::Flush() {
  if (stopped_) return {};
  std::string out = std::move(pending_);
  pending_.clear();
  released_ += out.size();
  return out;
}

void StopMatcher::Reset() {
  pending_.clear();
  released_ = 0;
  stopped_ = false;
  stop_index_ = -1;
}

}  // namespace uaii::sampling
