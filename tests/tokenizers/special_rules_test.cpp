// The end-of-generation and special-token rules, as one table over llama.cpp's own
// GGUF vocabularies (tests/golden/tokenizers/special_rules.json, made by
// tests/oracles/tokenizer_special_rules.py with llama-cpp-python):
//   * the terminator list: every id llama_vocab_is_eog reports, and no other;
//   * a special token inside text, parsed as one id (parse_special);
//   * whitespace after a special token: Phi-3 drops it (llama.cpp's RSTRIP), the
//     others keep it;
//   * the SentencePiece leading space after a special token with add_space_prefix;
//   * BOS added as the vocabulary says, and never doubled: where llama.cpp adds a
//     second BOS before a text that starts with the BOS text, uaii keeps one (the one
//     intended rule where uaii differs from llama.cpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "golden_util.h"
#include "uaii/tokenizer.h"

namespace {

std::vector<int32_t> WithoutDoubledBos(std::vector<int32_t> ids, int32_t bos) {
  if (bos >= 0 && ids.size() >= 2 && ids[0] == bos && ids[1] == bos) ids.erase(ids.begin() + 1);
  return ids;
}

}  // namespace

TEST_CASE("special-token rules: end of generation, parse_special, rstrip, space prefix, BOS once", "[tokenizers][gguf]") {
  simdjson::dom::parser parser;
  auto doc = parser.load(uaii::testing::SourcePath("tests/golden/tokenizers/special_rules.json"));
  REQUIRE(!doc.error());
  int checked = 0, doubled = 0;
  for (auto v : doc["vocabs"].get_array()) {
    const std::string file(std::string_view(v["vocab"].get_string()));
    const std::string path = std::string(UAII_FIXTURE_DIR) + "/llama-vocab/" + file;
    if (!std::filesystem::exists(path)) {
      std::printf("SKIP special-token rules %s: %s is absent (tests/fixtures/make_llama_vocabs.py)\n", file.c_str(),
                  path.c_str());
      continue;
    }
    INFO(file);
    auto tok = uaii::Tokenizer::Load(path);
    REQUIRE(tok.ok());
    std::vector<int32_t> want_eog = uaii::testing::IdsOf(v["eog"]);
    std::vector<int32_t> eog((*tok)->end_of_generation_ids().begin(), (*tok)->end_of_generation_ids().end());
    std::sort(eog.begin(), eog.end());
    CHECK(eog == want_eog);
    const int32_t bos = static_cast<int32_t>(int64_t(v["bos"]));
    for (auto c : v["cases"].get_array()) {
      const std::string text(std::string_view(c["text"].get_string()));
      INFO("text: \"" << text << "\"");
      const auto llama = uaii::testing::IdsOf(c["ids"]);
      const auto want = WithoutDoubledBos(llama, bos);
      doubled += want != llama;
      auto ids = (*tok)->Encode(text, {.parse_special = true, .add_special = true});
      REQUIRE(ids.ok());
      CHECK(*ids == want);
      ++checked;
    }
  }
  std::printf("special-token rules: %d texts, %d where llama.cpp doubles BOS\n", checked, doubled);
}
