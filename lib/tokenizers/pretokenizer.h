// Named pre-tokenizers: hand-written splitters equivalent to the published regexes
// (llama.cpp's llm_tokenizer_bpe table and the Split regexes of tokenizer.json files).
// They are fast paths: any other regex runs in Oniguruma (onig_regex.h).
// Each splitter is a linear scan: at every position it computes the length of the
// regex's leftmost match directly from code point classes, with no backtracking
// engine, so the cost is linear in the text. Unmatched text stays as its own pieces
// (llama.cpp's unicode_regex_split and HF's Split(Isolated) both keep it).
#pragma once
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace uaii::tok {

// One regex of a pre-tokenizer; the comment gives the regex it reproduces.
enum class Pattern : uint8_t {
  kGpt2,          // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  kLlama3,        // (?i:'s|..)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  kQwen2,         // as kLlama3 with \p{N} instead of \p{N}{1,3}
  kQwen35,        // as kQwen2 with [\p{L}\p{M}]+ words and \p{M} excluded from symbols
  kGpt4o,         // [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|..)?|...
  kDeepseek3,     // [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  kDeepseek3Cjk,  // [一-龥぀-ゟ゠-ヿ]+
  kDigit,         // \p{N}
  kDigits3,       // \p{N}{1,3}
  kDigitsRun,     // \p{N}+
  kPunctRun,      // [\p{P}\$\+<=>\^~\|]+
  kAscii3Digits,  // [0-9][0-9][0-9]
  kNewlines,      // [^\n]+|[\n]+
};

struct NamedPreTokenizer {
  std::string_view name;           // canonical name (tokenizer.ggml.pre)
  std::vector<Pattern> patterns;   // applied in order, each to the previous pieces
  bool ignore_merges = false;      // whole words found in the vocabulary skip BPE
  bool byte_level = true;          // GPT-2 byte-to-unicode mapping after splitting
};

// Looks up a tokenizer.ggml.pre name (aliases included). Fails with
// "unsupported pre-tokenizer NAME".
absl::StatusOr<const NamedPreTokenizer*> FindNamedPreTokenizer(std::string_view name);
// Every canonical name (tests, docs).
std::vector<std::string_view> NamedPreTokenizerNames();

// Splits code points [0, n) by `patterns` in sequence. Returns piece boundaries in
// code points: {0, e1, e2, ..., n}; empty for n == 0.
std::vector<uint32_t> SplitCodepoints(std::span<const Pattern> patterns, const uint32_t* cps,
                                      size_t n);

// The regexes the splitters reproduce, spelled as tokenizer.json files and
// llama.cpp write them. tests/tokenizers/regex_fast_path_test.cpp proves each
// splitter equal to Oniguruma (onig_regex.h) running its regex.
struct FastPathRegex {
  std::string_view regex;
  Pattern pattern;
};
std::span<const FastPathRegex> FastPathRegexes();

// Maps a tokenizer.json Split regex onto its hand-written splitter (the fast
// path), or NotFound: the loader then runs the regex in Oniguruma.
absl::StatusOr<std::vector<Pattern>> PatternsForRegex(std::string_view regex);

}  // namespace uaii::tok
