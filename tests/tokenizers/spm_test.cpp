// tokenizer.model through the sentencepiece library: ids equal spm_encode's
// (goldens from tests/oracles/tokenizer_spm.py), decode(encode(x)) == x, and
// invalid UTF-8 is rejected with an error naming the byte.
#include <catch2/catch.hpp>

#include "golden_util.h"
#include "uaii/tokenizer.h"

TEST_CASE("tokenizer.model gives sentencepiece ids and round-trips", "[tokenizers][spm]") {
  auto tok = uaii::Tokenizer::Load(uaii::testing::SourcePath("tests/golden/tokenizers/spm_tiny.model"));
  INFO(tok.status().ToString());
  REQUIRE(tok.ok());
  simdjson::dom::parser parser;
  auto doc = parser.load(uaii::testing::SourcePath("tests/golden/tokenizers/spm_tiny.json"));
  REQUIRE(!doc.error());
  int n = 0;
  for (auto c : doc["cases"].get_array()) {
    const std::string text(std::string_view(c["text"].get_string()));
    INFO("text: \"" << text << "\"");
    auto ids = (*tok)->Encode(text, {.parse_special = false, .add_special = false});
    REQUIRE(ids.ok());
    CHECK(*ids == uaii::testing::IdsOf(c["ids"]));
    CHECK((*tok)->Decode(*ids) == text);
    ++n;
  }
  CHECK(n > 30);
  auto with_bos = (*tok)->Encode("hello", {.parse_special = false, .add_special = true});
  REQUIRE(with_bos.ok());
  CHECK(with_bos->front() == (*tok)->special_ids().bos);
}

TEST_CASE("invalid UTF-8 is rejected with the byte offset", "[tokenizers][spm]") {
  auto tok = uaii::Tokenizer::Load(uaii::testing::SourcePath("tests/golden/tokenizers/spm_tiny.model"));
  REQUIRE(tok.ok());
  for (std::string bad : {std::string("ab\xff"), std::string("x\xc3"), std::string("\xe2\x28\xa1"),
                          std::string("\xed\xa0\x80"), std::string("\xc0\xaf")}) {
    auto ids = (*tok)->Encode(bad);
    REQUIRE(!ids.ok());
    CHECK(std::string(ids.status().message()).find("invalid UTF-8 at byte") == 0);
  }
}
