// Every hand-written splitter (pretokenizer.h) against Oniguruma running the regex it
// reproduces (onig_regex.h), on the tokenizer corpus of pretok_splits.json: the
// fast paths and the general engine must cut every text at the same bytes.
#include <catch2/catch.hpp>

#include "golden_util.h"
#include "tokenizers/onig_regex.h"
#include "tokenizers/pretokenizer.h"
#include "tokenizers/split_behavior.h"
#include "tokenizers/unicode.h"

using namespace uaii::tok;

namespace {

std::vector<std::string> CorpusTexts() {
  simdjson::dom::parser parser;
  auto doc = parser.load(uaii::testing::SourcePath("tests/golden/tokenizers/pretok_splits.json"));
  std::vector<std::string> texts;
  if (doc.error()) return texts;
  for (auto t : doc["texts"].get_array()) texts.emplace_back(std::string_view(t.get_string()));
  return texts;
}

// Piece ends in bytes from the hand-written splitter.
std::vector<uint32_t> FastEnds(Pattern p, const std::string& text) {
  auto cps = DecodeUtf8(text);
  std::vector<uint32_t> offs{0};
  for (uint32_t c : *cps) offs.push_back(offs.back() + (c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4));
  const Pattern one[] = {p};
  std::vector<uint32_t> ends;
  const auto bounds = SplitCodepoints(one, cps->data(), cps->size());
  for (size_t i = 1; i < bounds.size(); ++i) ends.push_back(offs[bounds[i]]);
  return ends;
}

// Piece ends in bytes from Oniguruma with tokenizers' Isolated behaviour.
std::vector<uint32_t> EngineEnds(const OnigRegex& re, const std::string& text) {
  std::vector<PatternMatch> m;
  REQUIRE(re.FindMatches(text, m).ok());
  std::vector<ByteRange> pieces;
  PiecesFromMatches(m, SplitBehavior::kIsolated, false, pieces);
  std::vector<uint32_t> ends;
  for (const ByteRange& r : pieces) ends.push_back(r.second);
  return ends;
}

}  // namespace

TEST_CASE("each hand-written splitter equals Oniguruma on the corpus", "[tokenizers][regex]") {
  const auto texts = CorpusTexts();
  REQUIRE(texts.size() > 400);
  size_t regexes = 0;
  for (const FastPathRegex& k : FastPathRegexes()) {
    auto re = OnigRegex::Compile(k.regex);
    INFO(re.status().ToString());
    REQUIRE(re.ok());
    size_t differ = 0;
    for (const std::string& text : texts) {
      const auto fast = FastEnds(k.pattern, text);
      const auto slow = EngineEnds(**re, text);
      if (fast != slow && differ++ < 3) {
        INFO("regex " << k.regex << " on \"" << text << "\"");
        CHECK(fast == slow);
      }
    }
    INFO("regex " << k.regex);
    CHECK(differ == 0);
    ++regexes;
  }
  CHECK(regexes >= 14);
}

TEST_CASE("the loader takes the fast path only for its own regexes", "[tokenizers][regex]") {
  for (const FastPathRegex& k : FastPathRegexes()) {
    auto p = PatternsForRegex(k.regex);
    REQUIRE(p.ok());
    CHECK((*p)[0] == k.pattern);
  }
  auto none = PatternsForRegex(R"(\p{L}+|\d+)");
  REQUIRE(!none.ok());
  CHECK(none.status().code() == absl::StatusCode::kNotFound);
}
