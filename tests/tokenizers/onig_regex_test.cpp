// The general regex engine and the Split behaviours on cases whose answers the
// Hugging Face tokenizers documentation and test suite give
// (SplitDelimiterBehavior on "The-final--countdown", Whitespace, Replace), plus
// its bounds: bad patterns, invalid UTF-8 and catastrophic backtracking fail clearly.
#include <catch2/catch.hpp>

#include <chrono>

#include "tokenizers/onig_regex.h"
#include "tokenizers/split_behavior.h"

using namespace uaii::tok;

namespace {

std::vector<std::string> Split(const OnigRegex& re, std::string_view text, SplitBehavior b,
                               bool invert = false) {
  std::vector<PatternMatch> m;
  REQUIRE(re.FindMatches(text, m).ok());
  std::vector<ByteRange> r;
  PiecesFromMatches(m, b, invert, r);
  std::vector<std::string> out;
  for (auto [s, e] : r) out.emplace_back(text.substr(s, e - s));
  return out;
}

using V = std::vector<std::string>;

}  // namespace

TEST_CASE("Split behaviours cut like tokenizers' SplitDelimiterBehavior", "[tokenizers][regex]") {
  auto re = OnigRegex::Literal("-");
  REQUIRE(re.ok());
  const std::string t = "The-final--countdown";
  CHECK(Split(**re, t, SplitBehavior::kRemoved) == V{"The", "final", "countdown"});
  CHECK(Split(**re, t, SplitBehavior::kIsolated) == V{"The", "-", "final", "-", "-", "countdown"});
  CHECK(Split(**re, t, SplitBehavior::kMergedWithPrevious) == V{"The-", "final-", "-", "countdown"});
  CHECK(Split(**re, t, SplitBehavior::kMergedWithNext) == V{"The", "-final", "-", "-countdown"});
  CHECK(Split(**re, t, SplitBehavior::kContiguous) == V{"The", "-", "final", "--", "countdown"});
  // The literal path gives the engine's matches.
  std::vector<PatternMatch> lit, eng;
  FindLiteralMatches(t, "-", lit);
  REQUIRE((*re)->FindMatches(t, eng).ok());
  REQUIRE(lit.size() == eng.size());
  for (size_t i = 0; i < lit.size(); ++i)
    CHECK((lit[i].start == eng[i].start && lit[i].end == eng[i].end && lit[i].is_match == eng[i].is_match));
}

TEST_CASE("Whitespace is an inverted, removed \\w+|[^\\w\\s]+", "[tokenizers][regex]") {
  auto re = OnigRegex::Compile(R"(\w+|[^\w\s]+)");
  REQUIRE(re.ok());
  CHECK(Split(**re, "Hey man!", SplitBehavior::kRemoved, true) == V{"Hey", "man", "!"});
  CHECK(Split(**re, "How are you doing?", SplitBehavior::kRemoved, true) ==
        V{"How", "are", "you", "doing", "?"});
  CHECK(Split(**re, "\n", SplitBehavior::kRemoved, true).empty());
}

TEST_CASE("Oniguruma syntax: classes, case-insensitive groups, lookaround, atomic groups",
          "[tokenizers][regex]") {
  auto words = OnigRegex::Compile(R"((?i:ab)+|\p{Lu}\p{Ll}*|(?>\d+)(?=x)|(?<=#)\w+)");
  REQUIRE(words.ok());
  CHECK(Split(**words, "aBAbÉcole 12x#tag", SplitBehavior::kIsolated) ==
        V{"aBAb", "École", " ", "12", "x#", "tag"});
  // a++ never gives a character back, so a++a cannot match; a+a would take "aaa".
  auto possessive = OnigRegex::Compile(R"(a++a)");
  REQUIRE(possessive.ok());
  CHECK(Split(**possessive, "aaa", SplitBehavior::kRemoved) == V{"aaa"});
}

TEST_CASE("empty matches follow the onig crate's find_iter", "[tokenizers][regex]") {
  auto re = OnigRegex::Compile("x*");
  REQUIRE(re.ok());
  std::vector<PatternMatch> m;
  REQUIRE((*re)->FindMatches("axxb", m).ok());
  // (0,0) empty, "a" gap, (1,3) "xx", the empty match at 3 right after it is skipped,
  // "b" gap, then the empty match at the end.
  std::vector<std::tuple<uint32_t, uint32_t, bool>> got;
  for (auto x : m) got.emplace_back(x.start, x.end, x.is_match);
  CHECK(got == std::vector<std::tuple<uint32_t, uint32_t, bool>>{
                   {0, 0, true}, {0, 1, false}, {1, 3, true}, {3, 4, false}, {4, 4, true}});
  REQUIRE((*re)->FindMatches("", m).ok());
  CHECK((m.size() == 1 && !m[0].is_match && m[0].end == 0));
}

TEST_CASE("bad patterns, invalid UTF-8 and catastrophic backtracking fail clearly",
          "[tokenizers][regex]") {
  auto bad = OnigRegex::Compile("(ab");
  REQUIRE(!bad.ok());
  CHECK(std::string(bad.status().message()).find("invalid regex \"(ab\"") == 0);
  auto re = OnigRegex::Compile(R"(\p{L}+)");
  REQUIRE(re.ok());
  std::vector<PatternMatch> m;
  auto st = (*re)->FindMatches("ab\xC3(", m);
  REQUIRE(!st.ok());
  CHECK(st.code() == absl::StatusCode::kInvalidArgument);
  // Nested quantifiers over a long run with no final match: exponential without a bound.
  auto evil = OnigRegex::Compile("(a*)*[^a]");
  REQUIRE(evil.ok());
  const auto t0 = std::chrono::steady_clock::now();
  st = (*evil)->FindMatches(std::string(5000, 'a'), m);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE(!st.ok());
  CHECK(st.code() == absl::StatusCode::kResourceExhausted);
  CHECK(std::string(st.message()).find("catastrophic backtracking") != std::string::npos);
  CHECK(s < 20.0);
}
