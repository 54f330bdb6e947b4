#include "loaders/hf_json.h"

namespace uaii::hf {

std::string WidenBigIntegers(std::string_view json) {
  std::string out;
  out.reserve(json.size() + 8);
  bool in_string = false;
  size_t i = 0;
  while (i < json.size()) {
    const char c = json[i];
    if (in_string) {
      out.push_back(c);
      if (c == '\\' && i + 1 < json.size()) out.push_back(json[++i]);
      else if (c == '"') in_string = false;
      ++i;
      continue;
    }
    if (c == '"') {
      in_string = true;
      out.push_back(c);
      ++i;
      continue;
    }
    if (c >= '0' && c <= '9') {
      size_t j = i;
      while (j < json.size() && json[j] >= '0' && json[j] <= '9') ++j;
      out.append(json.substr(i, j - i));
      const bool fraction = j < json.size() && (json[j] == '.' || json[j] == 'e' || json[j] == 'E');
      if (j - i > 19 && !fraction) out.append(".0");
      i = j;
      continue;
    }
    out.push_back(c);
    ++i;
  }
  return out;
}

}  // namespace uaii::hf
