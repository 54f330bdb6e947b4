// Named pre-tokenizers against their published regexes run by Python's `regex`
// (goldens from tests/oracles/tokenizer_pretok.py), plus name / regex lookup.
#include <catch2/catch.hpp>

#include "golden_util.h"
#include "tokenizers/pretokenizer.h"
#include "tokenizers/unicode.h"

using namespace uaii::tok;

TEST_CASE("named pre-tokenizers split like their published regexes", "[tokenizers][pretok]") {
  simdjson::dom::parser parser;
  auto doc = parser.load(uaii::testing::SourcePath("tests/golden/tokenizers/pretok_splits.json"));
  REQUIRE(!doc.error());
  std::vector<std::string> texts;
  for (auto t : doc["texts"].get_array()) texts.emplace_back(std::string_view(t.get_string()));
  REQUIRE(texts.size() > 400);
  int names = 0;
  for (auto kv : doc["splits"].get_object()) {
    const std::string name(kv.key);
    auto spec = FindNamedPreTokenizer(name);
    REQUIRE(spec.ok());
    const auto want = uaii::testing::UnpackIds(std::string_view(kv.value.get_string()));
    size_t k = 0;
    for (const std::string& text : texts) {
      auto cps = DecodeUtf8(text);
      REQUIRE(cps.ok());
      const auto bounds = SplitCodepoints((*spec)->patterns, cps->data(), cps->size());
      std::vector<int32_t> got;
      got.push_back(bounds.empty() ? 0 : static_cast<int32_t>(bounds.size() - 1));
      for (size_t i = 0; i + 1 < bounds.size(); ++i) got.push_back(bounds[i + 1] - bounds[i]);
      REQUIRE(k + got.size() <= want.size());
      std::vector<int32_t> exp(want.begin() + k, want.begin() + k + 1 + want[k]);
      INFO(name << " on \"" << text << "\"");
      CHECK(got == exp);
      k += exp.size();
    }
    CHECK(k == want.size());
    ++names;
  }
  CHECK(names == 10);
}

TEST_CASE("pre-tokenizer names and regexes resolve or fail clearly", "[tokenizers][pretok]") {
  for (std::string_view alias : {"llama-bpe", "llama-v3", "falcon3", "dbrx", "deepseek-r1-qwen",
                                 "refact", "llama4", "minimax-m2", "gpt-2", "default", "qwen35"})
    CHECK(FindNamedPreTokenizer(alias).ok());
  auto bad = FindNamedPreTokenizer("no-such-pre");
  REQUIRE(!bad.ok());
  CHECK(std::string(bad.status().message()).find("unsupported pre-tokenizer no-such-pre") == 0);
  auto rx = PatternsForRegex(R"(\p{N}{1,3})");
  REQUIRE(rx.ok());
  CHECK((*rx)[0] == Pattern::kDigits3);
  CHECK(!PatternsForRegex("(?<=x)y").ok());
}

TEST_CASE("splitting cost is linear in the text", "[tokenizers][pretok]") {
  // 1 MB of one letter and of one space: a backtracking engine's worst cases.
  for (uint32_t c : {uint32_t('a'), uint32_t(' '), uint32_t(0x0301)}) {
    std::vector<uint32_t> cps(1 << 20, c);
    auto spec = FindNamedPreTokenizer("gpt-4o");
    const auto bounds = SplitCodepoints((*spec)->patterns, cps.data(), cps.size());
    CHECK(bounds.back() == cps.size());
  }
}
