// How a Split pre-tokenizer turns pattern matches into pieces: tokenizers'
// SplitDelimiterBehavior (NormalizedString::split) and the Split's `invert`.
// Shared by literal ({"String": ...}) and regex ({"Regex": ...}) patterns.
#pragma once
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizers/onig_regex.h"

namespace uaii::tok {

enum class SplitBehavior { kIsolated, kRemoved, kMergedWithPrevious, kMergedWithNext, kContiguous };

// Byte range [first, second) of a piece.
using ByteRange = std::pair<uint32_t, uint32_t>;

// Pieces of the text that `matches` cover (find_matches order), by `behavior`, the
// match flags flipped first when `invert`. Empty pieces are dropped, as
// tokenizers' PreTokenizedString::split drops them.
void PiecesFromMatches(std::span<const PatternMatch> matches, SplitBehavior behavior, bool invert,
                       std::vector<ByteRange>& out);

// find_matches for a non-empty literal: its leftmost non-overlapping occurrences
// and the text between them (what the escaped literal gives in the regex engine).
void FindLiteralMatches(std::string_view text, std::string_view needle,
                        std::vector<PatternMatch>& out);

}  // namespace uaii::tok
