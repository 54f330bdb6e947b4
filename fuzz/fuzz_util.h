// Helpers shared by the libFuzzer targets (fuzz/CMakeLists.txt, docs/reliability.md).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace uaii::fuzz {

// The fuzzer's bytes as text (any bytes, invalid UTF-8 included).
inline std::string_view AsText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Writes `bytes` to a scratch file of this process named `name` (in $TMPDIR, else /tmp)
// and returns its path: for the loaders that take a path (GGUF, tokenizer.json).
// The same path is rewritten on every call.
std::string WriteScratch(std::string_view name, std::string_view bytes);

// A file the target loads once at start-up: fixtures (the main build's generated
// ones, $UAII_FUZZ_FIXTURES, default <source>/build/fixtures) and the real tokenizers
// (<source>/../shared/data/tokenizers).
std::string FixturePath(std::string_view relative);
std::string SharedDataPath(std::string_view relative);

}  // namespace uaii::fuzz
