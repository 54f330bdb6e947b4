// StopMatcher: finds stop strings in streamed text that arrives piece by piece
// (one detokenized token at a time), even when a stop string is split across
// pieces, and says how much text is safe to show now.
//
// Rule: text is held back while it could still be the beginning of a stop
// string; everything before that is released. When a stop string completes,
// the text before its first byte is released and the stop string and anything
// after it are dropped. Matching is on bytes, so multibyte UTF-8 stop strings
// work whatever the token boundaries; in addition, released text never ends
// inside an incomplete UTF-8 sequence (the partial character waits for its
// continuation bytes, or for Flush).
//
// With several stop strings the one that starts first in the text wins; among
// those starting at the same byte, the first in the list.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace uaii::sampling {

struct StopResult {
  std::string text;          // safe to emit now (may be empty)
  bool stopped = false;      // a stop string completed: end generation
  int stop_index = -1;       // which stop string (index into the list), or -1
  // Byte offset, in the whole text fed so far, where the kept output ends (=
  // where the stop string begins). Set when stopped; a caller that keeps the
  // full generated text truncates it here.
  size_t cut_offset = 0;
};

class StopMatcher {
 public:
  // Fails on an empty stop string (it would match at once), naming its index.
  // An empty list is fine: nothing ever stops, text is held back only for
  // incomplete UTF-8.
  static absl::StatusOr<StopMatcher> Create(std::vector<std::string> stops);

  // Feeds the next piece. After a stop, further calls return empty results with
  // stopped = true.
  StopResult Feed(std::string_view piece);

  // End of generation without a stop: releases whatever is held back.
  std::string Flush();

  // Forgets all fed text (the stop list stays).
  void Reset();

  bool stopped() const { return stopped_; }
  // Bytes currently held back.
  size_t pending_size() const { return pending_.size(); }
  const std::vector<std::string>& stops() const { return stops_; }

 private:
  explicit StopMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {}

  std::vector<std::string> stops_;
  std::string pending_;    // fed but not released
  size_t released_ = 0;    // bytes released so far (offset of pending_ in the whole text)
  bool stopped_ = false;
  int stop_index_ = -1;
};

}  // namespace uaii::sampling
