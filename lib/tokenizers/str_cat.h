// Cat(): string concatenation for error messages that accepts std::string_view (the
// Debian Abseil build's absl::string_view is not std::string_view, so absl::StrCat
// rejects it).
#pragma once
#include <sstream>
#include <string>
#include <string_view>

namespace uaii::tok {

template <typename... A>
std::string Cat(const A&... a) {
  std::ostringstream os;
  (os << ... << a);
  return os.str();
}

}  // namespace uaii::tok

namespace uaii::tok {

// Replaces every occurrence of `from` (non-empty) in `s` by `to`.
inline std::string ReplaceAll(std::string_view s, std::string_view from, std::string_view to) {
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
