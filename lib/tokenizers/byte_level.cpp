#include "tokenizers/byte_level.h"

#include <array>

#include "tokenizers/unicode.h"

namespace uaii::tok {
namespace {

struct Tables {
  std::array<uint32_t, 256> to_cp{};
  std::array<std::string, 256> to_utf8;
  std::array<int16_t, 0x144> from_cp{};  // code point -> byte, -1 if none
};

const Tables& GetTables() {
  static const Tables* t = [] {
    auto* t = new Tables;
    t->from_cp.fill(-1);
    uint32_t extra = 0;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      t->to_cp[b] = printable ? b : 0x100 + extra++;
      AppendUtf8(t->to_cp[b], t->to_utf8[b]);
      t->from_cp[t->to_cp[b]] = static_cast<int16_t>(b);
    }
    return t;
  }();
  return *t;
}

}  // namespace

void ByteLevelEncode(std::string_view bytes, std::string& out) {
  const Tables& t = GetTables();
  for (char c : bytes) out += t.to_utf8[static_cast<uint8_t>(c)];
}

std::string ByteLevelDecode(std::string_view text) {
  const Tables& t = GetTables();
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const size_t n = std::min(Utf8Len(static_cast<uint8_t>(text[i])), text.size() - i);
    uint32_t cp = static_cast<uint8_t>(text[i]);
    if (n == 2) cp = ((cp & 0x1F) << 6) | (static_cast<uint8_t>(text[i + 1]) & 0x3F);
    if (n <= 2 && cp < t.from_cp.size() && t.from_cp[cp] >= 0)
      out.push_back(static_cast<char>(t.from_cp[cp]));
    else
      out.append(text.substr(i, n));
    i += n;
  }
  return out;
}

}  // namespace uaii::tok
