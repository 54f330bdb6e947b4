// Unicode helpers for the tokenizers: UTF-8 decoding with validation, per-code-point
// class flags (general category groups and White_Space) and NFC normalization.
//
// Data source: ICU (Debian libicu-dev). We use ICU rather than a table generated from
// Python's unicodedata because it also provides NFC (needed by Qwen's tokenizer.json),
// it is a maintained Debian package, and its Unicode version (15 in bookworm) is
// newer than Python 3.11's (14). Hot loops call CpFlags(), which caches the whole
// Basic Multilingual Plane in a 64 KiB table built once.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace uaii::tok {

// Class bits of one code point; the regex classes the pre-tokenizers need.
enum CpClass : uint16_t {
  kLu = 1 << 0, kLl = 1 << 1, kLt = 1 << 2, kLm = 1 << 3, kLo = 1 << 4,
  kMark = 1 << 5,    // \p{M}
  kNumber = 1 << 6,  // \p{N}
  kPunct = 1 << 7,   // \p{P}
  kSymbol = 1 << 8,  // \p{S}
  kSpace = 1 << 9,   // \s (White_Space property)
  kLetter = kLu | kLl | kLt | kLm | kLo,  // \p{L}
};

uint16_t CpFlags(uint32_t cp);

// Decodes UTF-8 into code points. Invalid sequences (overlong, surrogates, truncated,
// > U+10FFFF) fail with InvalidArgument naming the byte offset.
absl::StatusOr<std::vector<uint32_t>> DecodeUtf8(std::string_view s);
// Same check without producing code points.
absl::Status ValidateUtf8(std::string_view s);
// Length of the UTF-8 sequence announced by lead byte `b` (1 for invalid leads).
inline size_t Utf8Len(uint8_t b) {
  return b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 1;
}
void AppendUtf8(uint32_t cp, std::string& out);
// Length of the longest prefix of `s` that is complete, valid UTF-8, and whether the
// rest could still become valid with more bytes (an incomplete tail).
size_t ValidUtf8Prefix(std::string_view s, bool* incomplete_tail);

// NFC normalization (ICU). Input must be valid UTF-8.
std::string Nfc(std::string_view s);

}  // namespace uaii::tok
