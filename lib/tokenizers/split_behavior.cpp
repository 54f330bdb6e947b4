#include "tokenizers/split_behavior.h"

#include <algorithm>

namespace uaii::tok {

void PiecesFromMatches(std::span<const PatternMatch> matches, SplitBehavior behavior, bool invert,
                       std::vector<ByteRange>& out) {
  out.clear();
  std::vector<ByteRange> acc;
  acc.reserve(matches.size());
  bool prev = false;
  auto is_match = [&](const PatternMatch& m) { return m.is_match != invert; };
  switch (behavior) {
    case SplitBehavior::kIsolated:
      for (const PatternMatch& m : matches) acc.push_back({m.start, m.end});
      break;
    case SplitBehavior::kRemoved:
      for (const PatternMatch& m : matches)
        if (!is_match(m)) acc.push_back({m.start, m.end});
      break;
    case SplitBehavior::kContiguous:
      for (const PatternMatch& m : matches) {
        const bool cur = is_match(m);
        if (cur == prev && !acc.empty()) acc.back().second = m.end;
        else acc.push_back({m.start, m.end});
        prev = cur;
      }
      break;
    case SplitBehavior::kMergedWithPrevious:
      for (const PatternMatch& m : matches) {
        const bool cur = is_match(m);
        if (cur && !prev && !acc.empty()) acc.back().second = m.end;
        else acc.push_back({m.start, m.end});
        prev = cur;
      }
      break;
    case SplitBehavior::kMergedWithNext:
      for (auto it = matches.rbegin(); it != matches.rend(); ++it) {
        const bool cur = is_match(*it);
        if (cur && !prev && !acc.empty()) acc.back().first = it->start;
        else acc.push_back({it->start, it->end});
        prev = cur;
      }
      std::reverse(acc.begin(), acc.end());
      break;
  }
  for (const ByteRange& r : acc)
    if (r.second > r.first) out.push_back(r);
}

void FindLiteralMatches(std::string_view text, std::string_view needle,
                        std::vector<PatternMatch>& out) {
  out.clear();
  if (text.empty()) {
    out.push_back({0, 0, false});
    return;
  }
  size_t pos = 0;
  while (true) {
    const size_t m = text.find(needle, pos);
    if (m == std::string_view::npos) break;
    if (m > pos) out.push_back({uint32_t(pos), uint32_t(m), false});
    out.push_back({uint32_t(m), uint32_t(m + needle.size()), true});
    pos = m + needle.size();
  }
  if (pos < text.size()) out.push_back({uint32_t(pos), uint32_t(text.size()), false});
}

}  // namespace uaii::tok
