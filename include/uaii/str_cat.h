// uaii::StrCat: concatenates strings, string_views, chars and numbers.
// Why not absl::StrCat: Debian's Abseil (20220623) is built with
// ABSL_OPTION_USE_STD_STRING_VIEW=0, so absl::StrCat and absl's hash-map lookups do
// not accept std::string_view. Use this, and pass absl::Status messages as std::string.
#pragma once
#include <charconv>
#include <concepts>
#include <string>
#include <string_view>

namespace uaii {
namespace str_cat_internal {

inline void Append(std::string& out, std::string_view s) { out.append(s); }
inline void Append(std::string& out, const char* s) { out.append(s ? s : "(null)"); }
inline void Append(std::string& out, char c) { out.push_back(c); }
inline void Append(std::string& out, bool b) { out.append(b ? "true" : "false"); }
template <std::integral T>
  requires(!std::same_as<T, char> && !std::same_as<T, bool>)
void Append(std::string& out, T v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}
template <std::floating_point T>
void Append(std::string& out, T v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form
  out.append(buf, r.ptr);
}

}  // namespace str_cat_internal

template <typename... Args>
std::string StrCat(const Args&... args) {
  std::string out;
  (str_cat_internal::Append(out, args), ...);
  return out;
}

// Hex form of an unsigned value, zero-padded to `width` digits.
inline std::string Hex(uint64_t v, int width = 0) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v, 16);
  std::string s(buf, r.ptr);
  if (static_cast<int>(s.size()) < width) s.insert(0, width - s.size(), '0');
  return s;
}

}  // namespace uaii
