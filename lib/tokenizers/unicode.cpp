#include "tokenizers/unicode.h"

#include <array>
#include <memory>

#include "absl/strings/str_format.h"
#include "unicode/normalizer2.h"
#include "unicode/uchar.h"
#include "unicode/unistr.h"

namespace uaii::tok {
namespace {

uint16_t ComputeFlags(uint32_t cp) {
  uint16_t f = 0;
  switch (u_charType(static_cast<UChar32>(cp))) {
    case U_UPPERCASE_LETTER: f |= kLu; break;
    case U_LOWERCASE_LETTER: f |= kLl; break;
    case U_TITLECASE_LETTER: f |= kLt; break;
    case U_MODIFIER_LETTER: f |= kLm; break;
    case U_OTHER_LETTER: f |= kLo; break;
    case U_NON_SPACING_MARK: case U_ENCLOSING_MARK: case U_COMBINING_SPACING_MARK:
      f |= kMark; break;
    case U_DECIMAL_DIGIT_NUMBER: case U_LETTER_NUMBER: case U_OTHER_NUMBER:
      f |= kNumber; break;
    case U_DASH_PUNCTUATION: case U_START_PUNCTUATION: case U_END_PUNCTUATION:
    case U_CONNECTOR_PUNCTUATION: case U_OTHER_PUNCTUATION: case U_INITIAL_PUNCTUATION:
    case U_FINAL_PUNCTUATION:
      f |= kPunct; break;
    case U_MATH_SYMBOL: case U_CURRENCY_SYMBOL: case U_MODIFIER_SYMBOL: case U_OTHER_SYMBOL:
      f |= kSymbol; break;
    default: break;
  }
  if (u_hasBinaryProperty(static_cast<UChar32>(cp), UCHAR_WHITE_SPACE)) f |= kSpace;
  return f;
}

const std::array<uint16_t, 0x10000>& BmpTable() {
  static const auto* table = [] {
    auto* t = new std::array<uint16_t, 0x10000>();
    for (uint32_t c = 0; c < 0x10000; ++c) (*t)[c] = ComputeFlags(c);
    return t;
  }();
  return *table;
}

// Decodes one code point at s[i]; returns its length or 0 when invalid.
size_t DecodeOne(std::string_view s, size_t i, uint32_t* cp) {
  const auto b0 = static_cast<uint8_t>(s[i]);
  if (b0 < 0x80) { *cp = b0; return 1; }
  size_t len = Utf8Len(b0);
  if (len == 1 || i + len > s.size()) return 0;
  uint32_t c = b0 & (0x7F >> len);
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<uint8_t>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    c = (c << 6) | (b & 0x3F);
  }
  static constexpr uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (c < kMin[len] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
  *cp = c;
  return len;
}

}  // namespace

uint16_t CpFlags(uint32_t cp) {
  if (cp < 0x10000) return BmpTable()[cp];
  return ComputeFlags(cp);
}

absl::StatusOr<std::vector<uint32_t>> DecodeUtf8(std::string_view s) {
  std::vector<uint32_t> out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    uint32_t cp;
    size_t n = DecodeOne(s, i, &cp);
    if (n == 0)
      return absl::InvalidArgumentError(absl::StrFormat(
          "invalid UTF-8 at byte %d (0x%02X): the tokenizer takes UTF-8 text", i,
          static_cast<uint8_t>(s[i])));
    out.push_back(cp);
    i += n;
  }
  return out;
}

absl::Status ValidateUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (static_cast<uint8_t>(s[i]) < 0x80) { ++i; continue; }
    uint32_t cp;
    size_t n = DecodeOne(s, i, &cp);
    if (n == 0)
      return absl::InvalidArgumentError(absl::StrFormat(
          "invalid UTF-8 at byte %d (0x%02X): the tokenizer takes UTF-8 text", i,
          static_cast<uint8_t>(s[i])));
    i += n;
  }
  return absl::OkStatus();
}

void AppendUtf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

size_t ValidUtf8Prefix(std::string_view s, bool* incomplete_tail) {
  size_t i = 0;
  *incomplete_tail = false;
  while (i < s.size()) {
    uint32_t cp;
    size_t n = DecodeOne(s, i, &cp);
    if (n == 0) {
      // A valid lead byte whose sequence runs past the end may still complete.
      const auto b0 = static_cast<uint8_t>(s[i]);
      size_t len = Utf8Len(b0);
      if (len > 1 && i + len > s.size()) {
        bool ok = true;
        for (size_t k = i + 1; k < s.size(); ++k)
          ok = ok && (static_cast<uint8_t>(s[k]) & 0xC0) == 0x80;
        *incomplete_tail = ok;
      }
      return i;
    }
    i += n;
  }
  return i;
}

std::string Nfc(std::string_view s) {
  bool ascii = true;
  for (char c : s) ascii = ascii && static_cast<uint8_t>(c) < 0x80;
  if (ascii) return std::string(s);
  UErrorCode err = U_ZERO_ERROR;
  const icu::Normalizer2* nfc = icu::Normalizer2::getNFCInstance(err);
  if (U_FAILURE(err)) return std::string(s);
  icu::UnicodeString in = icu::UnicodeString::fromUTF8(
      icu::StringPiece(s.data(), static_cast<int32_t>(s.size())));
  if (nfc->isNormalized(in, err) && U_SUCCESS(err)) return std::string(s);
  err = U_ZERO_ERROR;
  icu::UnicodeString outu = nfc->normalize(in, err);
  if (U_FAILURE(err)) return std::string(s);
  std::string out;
  outu.toUTF8String(out);
  return out;
}

}  // namespace uaii::tok
