// Helpers shared by the tokenizer golden tests: paths, the packed id format and
// the deterministic big text of tests/oracles/tokenizer_corpus.py.
#pragma once
#include <simdjson.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace uaii::testing {

inline std::string SourcePath(const std::string& rel) { return std::string(UAII_SOURCE_DIR) + "/" + rel; }
inline std::string SharedDir() { return std::string(UAII_SOURCE_DIR) + "/../shared"; }
inline bool HaveShared() {
  return std::filesystem::exists(SharedDir() + "/data/tokenizers");
}

// Inverse of tokenizer_corpus.pack_ids: base64 of LEB128 varints.
inline std::vector<int32_t> UnpackIds(std::string_view b64) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
  };
  std::vector<uint8_t> bytes;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : b64) {
    const int v = val(c);
    if (v < 0) continue;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes.push_back(static_cast<uint8_t>(acc >> bits));
    }
  }
  std::vector<int32_t> ids;
  uint32_t cur = 0;
  int shift = 0;
  for (uint8_t b : bytes) {
    cur |= static_cast<uint32_t>(b & 0x7F) << shift;
    shift += 7;
    if (!(b & 0x80)) {
      ids.push_back(static_cast<int32_t>(cur));
      cur = 0;
      shift = 0;
    }
  }
  return ids;
}

// tokenizer_corpus.big_text(): a 31-bit LCG picks words until min_bytes is reached.
inline std::string BigText(simdjson::dom::element big) {
  int64_t seed = 0, min_bytes = 0;
  if (big["seed"].get(seed)) return {};
  if (big["min_bytes"].get(min_bytes)) return {};
  std::vector<std::string> words;
  for (auto w : big["words"].get_array()) words.emplace_back(std::string_view(w.get_string()));
  uint64_t x = static_cast<uint64_t>(seed);
  std::string out;
  while (static_cast<int64_t>(out.size()) < min_bytes) {
    x = (x * 1103515245ULL + 12345ULL) % (1ULL << 31);
    out += words[(x >> 16) % words.size()];
  }
  return out;
}

inline std::vector<int32_t> IdsOf(simdjson::dom::element arr) {
  std::vector<int32_t> ids;
  for (auto v : arr.get_array()) ids.push_back(static_cast<int32_t>(int64_t(v)));
  return ids;
}

}  // namespace uaii::testing
