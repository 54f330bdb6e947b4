// The general regex engine of the tokenizers: Oniguruma (Debian libonig-dev), the
// engine Hugging Face `tokenizers` compiles every Split / Replace pattern with
// (its SysRegex is the onig crate's Regex::new: UTF-8, ONIG_OPTION_NONE and
// Oniguruma's default syntax). Patterns the hand-written splitters of
// pretokenizer.h know keep those fast paths; every other pattern runs here.
//
// Matching follows tokenizers' `find_matches` on the onig crate's find_iter: byte
// offsets into the UTF-8 text, each search starting where the previous match
// ended (lookbehind and \A see the whole piece), an empty match right after the
// previous match skipped by one code point, and the text between matches
// reported as non-matches, so the pieces always cover the text.
//
// Bounds: every search runs under a retry limit (backtracking steps) and a
// match-stack limit; a pattern that exceeds them on some text fails that encode
// with a clear error instead of running unbounded (HF tokenizers panics there).
// Text that is not valid UTF-8 fails with the byte offset, never reaches the engine.
//
// Threads: a compiled OnigRegex is immutable; FindMatches keeps its region and
// match parameters per call, so one tokenizer encodes from many threads (as HF's
// shared SysRegex does under rayon).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace uaii::tok {

// One element of find_matches: bytes [start, end) of the text and whether the
// pattern matched them (false: text between matches).
struct PatternMatch {
  uint32_t start, end;
  bool is_match;
};

// Oniguruma's limits per search call (the defaults of OnigRegex are unbounded
// for the stack and for a whole search).
struct RegexLimits {
  unsigned long retry_in_match = 10'000'000;   // Oniguruma's own default
  unsigned long retry_in_search = 50'000'000;  // ~0.2 s of backtracking
  unsigned int match_stack = 4'000'000;        // entries (~100 MB at worst)
};

class OnigRegex {
 public:
  // Compiles a tokenizer.json {"Regex": ...} pattern; fails naming the pattern
  // and Oniguruma's message.
  static absl::StatusOr<std::shared_ptr<const OnigRegex>> Compile(std::string_view pattern,
                                                                RegexLimits limits = {});
  // A {"String": ...} pattern: the literal, escaped as tokenizers' regex::escape does.
  static absl::StatusOr<std::shared_ptr<const OnigRegex>> Literal(std::string_view text);
  ~OnigRegex();
  OnigRegex(const OnigRegex&) = delete;
  OnigRegex& operator=(const OnigRegex&) = delete;

  const std::string& pattern() const { return pattern_; }
  // tokenizers' find_matches over `text`, appended to `out` (cleared first).
  // Empty text gives one empty non-match, as tokenizers does.
  absl::Status FindMatches(std::string_view text, std::vector<PatternMatch>& out) const;

 private:
  OnigRegex() = default;
  struct Compiled;
  std::unique_ptr<Compiled> re_;
  std::string pattern_;
  RegexLimits limits_;
};

// Escapes a literal for an Oniguruma pattern (every non-alphanumeric ASCII byte).
std::string EscapeRegexLiteral(std::string_view text);

}  // namespace uaii::tok
