#include "chat/text.h"

#include <algorithm>

#include "chat/value.h"

namespace uaii::jinja {
namespace {

uint32_t Upper(uint32_t c) {
  if ((c >= 'a' && c <= 'z') || (c >= 0xe0 && c <= 0xfe && c != 0xf7)) return c - 32;
  return c;
}
uint32_t Lower(uint32_t c) {
  if ((c >= 'A' && c <= 'Z') || (c >= 0xc0 && c <= 0xde && c != 0xd7)) return c + 32;
  return c;
}
bool IsCased(uint32_t c) { return Upper(c) != c || Lower(c) != c; }

std::string Map(const std::string& s, uint32_t (*f)(uint32_t)) {
  std::string out;
  for (uint32_t c : DecodeUtf8(s)) AppendUtf8(out, f(c));
  return out;
}

}  // namespace

std::string PyStrip(const std::string& s, const std::optional<std::string>& chars, bool left, bool right) {
  std::vector<uint32_t> cps = DecodeUtf8(s);
  std::vector<uint32_t> set = chars ? DecodeUtf8(*chars) : std::vector<uint32_t>{};
  auto strip = [&](uint32_t c) { return chars ? std::find(set.begin(), set.end(), c) != set.end() : IsPySpace(c); };
  size_t b = 0, e = cps.size();
  if (left)
    while (b < e && strip(cps[b])) ++b;
  if (right)
    while (e > b && strip(cps[e - 1])) --e;
  return EncodeUtf8(cps, b, e);
}

std::vector<std::string> PySplitWhitespace(const std::string& s, int64_t maxsplit) {
  std::vector<uint32_t> cps = DecodeUtf8(s);
  std::vector<std::string> out;
  size_t i = 0, n = cps.size();
  while (true) {
    while (i < n && IsPySpace(cps[i])) ++i;
    if (i >= n) break;
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {
      size_t e = n;
      while (e > i && IsPySpace(cps[e - 1])) --e;
      out.push_back(EncodeUtf8(cps, i, e));
      break;
    }
    size_t j = i;
    while (j < n && !IsPySpace(cps[j])) ++j;
    out.push_back(EncodeUtf8(cps, i, j));
    i = j;
  }
  return out;
}

std::vector<std::string> PySplit(const std::string& s, const std::string& sep, int64_t maxsplit) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
    size_t k = s.find(sep, pos);
    if (k == std::string::npos) break;
    out.push_back(s.substr(pos, k - pos));
    pos = k + sep.size();
  }
  out.push_back(s.substr(pos));
  return out;
}

std::vector<std::string> PyRSplit(const std::string& s, const std::string& sep, int64_t maxsplit) {
  std::vector<std::string> out;
  size_t end = s.size();
  while (static_cast<int64_t>(out.size()) < maxsplit) {
    if (end < sep.size()) break;
    size_t k = s.rfind(sep, end - sep.size());
    if (k == std::string::npos) break;
    out.push_back(s.substr(k + sep.size(), end - k - sep.size()));
    end = k;
  }
  out.push_back(s.substr(0, end));
  std::reverse(out.begin(), out.end());
  return out;
}

std::string PyReplace(const std::string& s, const std::string& old, const std::string& repl, int64_t count) {
  std::string out;
  if (old.empty()) {
    std::vector<uint32_t> cps = DecodeUtf8(s);
    int64_t done = 0;
    for (size_t i = 0; i <= cps.size(); ++i) {
      if (count < 0 || done < count) {
        out += repl;
        ++done;
      }
      if (i < cps.size()) AppendUtf8(out, cps[i]);
    }
    return out;
  }
  size_t pos = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    size_t k = s.find(old, pos);
    if (k == std::string::npos) break;
    out.append(s, pos, k - pos);
    out += repl;
    pos = k + old.size();
    ++done;
  }
  out.append(s, pos, std::string::npos);
  return out;
}

std::string PyUpper(const std::string& s) { return Map(s, Upper); }
std::string PyLower(const std::string& s) { return Map(s, Lower); }

std::string PyTitle(const std::string& s) {
  std::string out;
  bool prev_cased = false;
  for (uint32_t c : DecodeUtf8(s)) {
    AppendUtf8(out, prev_cased ? Lower(c) : Upper(c));
    prev_cased = IsCased(c);
  }
  return out;
}

std::string PyCapitalize(const std::string& s) {
  std::vector<uint32_t> cps = DecodeUtf8(s);
  std::string out;
  for (size_t i = 0; i < cps.size(); ++i) AppendUtf8(out, i == 0 ? Upper(cps[i]) : Lower(cps[i]));
  return out;
}

bool PyIsUpper(const std::string& s) {
  bool any = false;
  for (uint32_t c : DecodeUtf8(s)) {
    if (Upper(c) != c) return false;
    any = any || IsCased(c);
  }
  return any;
}
bool PyIsLower(const std::string& s) {
  bool any = false;
  for (uint32_t c : DecodeUtf8(s)) {
    if (Lower(c) != c) return false;
    any = any || IsCased(c);
  }
  return any;
}

int64_t PyFind(const std::string& s, const std::string& sub, bool reverse) {
  size_t k = reverse ? s.rfind(sub) : s.find(sub);
  if (k == std::string::npos) return -1;
  return static_cast<int64_t>(CodePointLength(std::string_view(s).substr(0, k)));
}

int64_t PyCount(const std::string& s, const std::string& sub) {
  if (sub.empty()) return static_cast<int64_t>(CodePointLength(s)) + 1;
  int64_t n = 0;
  for (size_t k = s.find(sub); k != std::string::npos; k = s.find(sub, k + sub.size())) ++n;
  return n;
}

}  // namespace uaii::jinja
