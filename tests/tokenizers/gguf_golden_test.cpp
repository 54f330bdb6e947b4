// GGUF vocabularies against llama.cpp: its own recorded test ids for the
// ggml-vocab-*.gguf files (goldens from tests/oracles/tokenizer_llama_vocab.py,
// vocab files from tests/fixtures/make_llama_vocabs.py), and the default model's
// vocabulary against llama-cpp-python (tests/oracles/tokenizer_gguf.py).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>

#include "formats/gguf_file.h"
#include "golden_util.h"
#include "loaders/model_locator.h"
#include "tokenizers/gguf_tokenizer.h"
#include "uaii/tokenizer.h"

namespace {

void CheckLlamaVocab(const std::string& name) {
  const std::string path = std::string(UAII_FIXTURE_DIR) + "/llama-vocab/ggml-vocab-" + name + ".gguf";
  if (!std::filesystem::exists(path)) {
    std::printf("SKIP llama.cpp vocab %s: %s is absent (tests/fixtures/make_llama_vocabs.py)\n",
                name.c_str(), path.c_str());
    return;
  }
  auto tok = uaii::Tokenizer::Load(path);
  INFO(tok.status().ToString());
  REQUIRE(tok.ok());
  simdjson::dom::parser parser;
  auto doc = parser.load(uaii::testing::SourcePath("tests/golden/tokenizers/llama_vocab_" + name + ".json"));
  REQUIRE(!doc.error());
  for (auto c : doc["cases"].get_array()) {
    const std::string text(std::string_view(c["text"].get_string()));
    INFO(name << " text: \"" << text << "\"");
    auto ids = (*tok)->Encode(text, {.parse_special = false, .add_special = false});
    REQUIRE(ids.ok());
    CHECK(*ids == uaii::testing::IdsOf(c["ids"]));
  }
}

std::string DefaultGguf() {
  if (const char* m = std::getenv("UAII_MODEL"); m && std::filesystem::exists(m) &&
                                                  !std::filesystem::is_directory(m))
    return m;
  if (std::filesystem::exists(uaii::DefaultModelPath())) return uaii::DefaultModelPath();
  if (std::filesystem::exists("/tmp/gemma.gguf")) return "/tmp/gemma.gguf";
  return "";
}

}  // namespace

TEST_CASE("llama.cpp vocab llama-spm", "[tokenizers][gguf]") { CheckLlamaVocab("llama-spm"); }
TEST_CASE("llama.cpp vocab phi-3", "[tokenizers][gguf]") { CheckLlamaVocab("phi-3"); }
TEST_CASE("llama.cpp vocab llama-bpe", "[tokenizers][gguf]") { CheckLlamaVocab("llama-bpe"); }
TEST_CASE("llama.cpp vocab qwen2", "[tokenizers][gguf]") { CheckLlamaVocab("qwen2"); }
TEST_CASE("llama.cpp vocab qwen35", "[tokenizers][gguf]") { CheckLlamaVocab("qwen35"); }
TEST_CASE("llama.cpp vocab starcoder", "[tokenizers][gguf]") { CheckLlamaVocab("starcoder"); }
TEST_CASE("llama.cpp vocab gpt-2", "[tokenizers][gguf]") { CheckLlamaVocab("gpt-2"); }
TEST_CASE("llama.cpp vocab command-r", "[tokenizers][gguf]") { CheckLlamaVocab("command-r"); }
TEST_CASE("llama.cpp vocab refact", "[tokenizers][gguf]") { CheckLlamaVocab("refact"); }
TEST_CASE("llama.cpp vocab mpt", "[tokenizers][gguf]") { CheckLlamaVocab("mpt"); }
TEST_CASE("llama.cpp vocab gemma-4", "[tokenizers][gguf]") { CheckLlamaVocab("gemma-4"); }

TEST_CASE("default model GGUF vocabulary gives llama.cpp ids", "[tokenizers][gguf]") {
  const std::string path = DefaultGguf();
  if (path.empty()) {
    std::printf("SKIP default model GGUF: not found ($UAII_MODEL, cache, /tmp/gemma.gguf)\n");
    return;
  }
  auto file = uaii::gguf::File::Open(path);
  REQUIRE(file.ok());
  auto tok = uaii::TokenizerFromGguf(**file);
  INFO(tok.status().ToString());
  REQUIRE(tok.ok());
  simdjson::dom::parser parser;
  auto doc = parser.load(uaii::testing::SourcePath("tests/golden/tokenizers/gguf_gemma3_270m.json"));
  REQUIRE(!doc.error());
  const auto& t = **tok;
  CHECK(t.special_ids().bos == int64_t(doc["special"]["bos"]));
  CHECK(t.special_ids().eos == int64_t(doc["special"]["eos"]));
  for (auto c : doc["cases"].get_array()) {
    const std::string text(std::string_view(c["text"].get_string()));
    INFO("text: \"" << text << "\"");
    auto plain = t.Encode(text, {.parse_special = false, .add_special = false});
    REQUIRE(plain.ok());
    CHECK(*plain == uaii::testing::IdsOf(c["ids"]));
    auto special = t.Encode(text, {.parse_special = true, .add_special = true});
    REQUIRE(special.ok());
    auto want = uaii::testing::IdsOf(c["ids_special"]);
    // uaii never doubles BOS where llama.cpp does (it warns about it).
    if (want.size() >= 2 && want[0] == want[1] && want[0] == t.special_ids().bos) want.erase(want.begin());
    CHECK(*special == want);
  }
  const std::string big = uaii::testing::BigText(doc["big"]);
  auto ids = t.Encode(big, {.parse_special = false, .add_special = false});
  REQUIRE(ids.ok());
  CHECK(*ids == uaii::testing::UnpackIds(std::string_view(doc["big"]["ids_packed"].get_string())));
}
