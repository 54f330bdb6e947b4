// GPT-2's byte <-> unicode mapping: printable Latin-1 bytes map to themselves, the
// other 68 bytes to U+0100.. in order, so every byte string becomes printable text.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace uaii::tok {

// Appends the byte-level encoding of `bytes` to `out`.
void ByteLevelEncode(std::string_view bytes, std::string& out);
// Decodes byte-level text back to bytes; characters outside the map pass through.
std::string ByteLevelDecode(std::string_view text);

}  // namespace uaii::tok
