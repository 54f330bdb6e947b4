// String helpers of the tokenizers. Messages are built with uaii::StrCat
// (util/str_cat.h: Debian's Abseil StrCat rejects std::string_view).
#pragma once
#include <string>
#include <string_view>

#include "util/str_cat.h"

namespace uaii::tok {

// Replaces every occurrence of `from` in `s` by `to`; an empty `from` replaces nothing
// (it would match at every position, and this loop would never end).
inline std::string ReplaceAll(std::string_view s, std::string_view from, std::string_view to) {
  if (from.empty()) return std::string(s);
  std::string out;
  out.reserve(s.size());
  size_t pos = 0;
  while (true) {
    const size_t m = s.find(from, pos);
    if (m == std::string_view::npos) break;
    out.append(s, pos, m - pos);
    out.append(to);
    pos = m + from.size();
  }
  out.append(s, pos, std::string_view::npos);
  return out;
}

}  // namespace uaii::tok
