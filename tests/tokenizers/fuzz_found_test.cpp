// Tokenizer files that the fuzz targets (fuzz/, docs/reliability.md) found crashing or
// hanging the loaders: each now loads or fails with a status naming the cause.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "uaii/tokenizer.h"

using namespace uaii;

namespace {

// A GGUF v3 file with only a SentencePiece ("llama") vocabulary: tokens and their types.
std::string WriteVocabGguf(const std::string& name, const std::vector<std::string>& tokens,
                           const std::vector<int32_t>& types) {
  std::string b = "GGUF";
  auto u32 = [&](uint32_t v) { b.append(reinterpret_cast<const char*>(&v), 4); };
  auto u64 = [&](uint64_t v) { b.append(reinterpret_cast<const char*>(&v), 8); };
  auto str = [&](const std::string& s) { u64(s.size()); b += s; };
  u32(3);
  u64(0);  // tensors
  u64(3);  // key-value pairs
  str("tokenizer.ggml.model");
  u32(8);
  str("llama");
  str("tokenizer.ggml.tokens");
  u32(9);
  u32(8);
  u64(tokens.size());
  for (const auto& t : tokens) str(t);
  str("tokenizer.ggml.token_type");
  u32(9);
  u32(5);
  u64(types.size());
  for (int32_t t : types) u32(static_cast<uint32_t>(t));
  while (b.size() % 32) b += '\0';
  auto path = std::filesystem::temp_directory_path() / ("uaii_vocab_" + name + "_" + std::to_string(::getpid()) + ".gguf");
  std::ofstream(path, std::ios::binary) << b;
  return path.string();
}

}  // namespace

TEST_CASE("GGUF vocab: a byte token not spelled <0xHH> is read as a normal piece", "[tokenizers]") {
  // fuzz_gguf: "<0xZZ>" with type BYTE made std::stoi throw out of the loader.
  const std::string path = WriteVocabGguf("bad_byte", {"<unk>", "<s>", "</s>", "<0xZZ>", "<0x4", "<0x41>", "a"},
                                          {2, 3, 3, 6, 6, 6, 1});
  auto tok = Tokenizer::Load(path);
  std::filesystem::remove(path);
  REQUIRE(tok.ok());
  CHECK((*tok)->TokenBytes(3) == "<0xZZ>");
  CHECK((*tok)->TokenBytes(4) == "<0x4");
  CHECK((*tok)->TokenBytes(5) == "A");
}

TEST_CASE("tokenizer.json: a Replace normalizer with an empty pattern ends, as HF tokenizers does", "[tokenizers]") {
  // fuzz_tokenizer_json: the empty pattern matched at every position and the literal
  // replace never ended. It now runs through the regex engine, whose empty matches
  // advance: HF tokenizers' Replace("", "x") turns "ab" into "xaxbx".
  const auto path = std::filesystem::temp_directory_path() / ("uaii_empty_replace_" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << R"({"version": "1.0", "added_tokens": [],
    "normalizer": {"type": "Replace", "pattern": {"String": ""}, "content": "x"},
    "pre_tokenizer": null, "post_processor": null, "decoder": null,
    "model": {"type": "BPE", "vocab": {"a": 0, "x": 1, "b": 2}, "merges": []}})";
  auto tok = Tokenizer::FromTokenizerJson(path.string());
  std::filesystem::remove(path);
  REQUIRE(tok.ok());
  auto ids = (*tok)->Encode("ab", {.parse_special = false, .add_special = false});
  REQUIRE(ids.ok());
  CHECK(*ids == std::vector<TokenId>{1, 0, 1, 2, 1});
}
