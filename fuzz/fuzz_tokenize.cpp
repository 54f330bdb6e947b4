// Encode on arbitrary bytes (invalid UTF-8 included) with every tokenizer scheme, using
// real vocabularies: Hugging Face tokenizer.json files (../shared/data/tokenizers:
// SentencePiece-style BPE with byte fallback, byte-level BPE) and llama.cpp's GGUF test
// vocabularies (the main build's fixtures: SPM, byte-level BPE with each
// pre-tokenizer, Gemma 4). uaii has no WordPiece scheme. Input: byte 0 picks the
// tokenizer, byte 1 the encode options, the rest is the text. Checks: Encode fails only
// with a status, every id is inside the vocabulary, Decode and the stream decoder take
// the ids.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "uaii/tokenizer.h"

namespace {

std::vector<std::unique_ptr<uaii::Tokenizer>>& Tokenizers() {
  static std::vector<std::unique_ptr<uaii::Tokenizer>> all;
  return all;
}

void LoadOne(const std::string& path, const std::string& config = "") {
  auto tok = path.ends_with(".gguf") ? uaii::Tokenizer::Load(path) : uaii::Tokenizer::FromTokenizerJson(path, config);
  if (!tok.ok()) {
    std::fprintf(stderr, "fuzz_tokenize: skipping %s: %s\n", path.c_str(), std::string(tok.status().message()).c_str());
    return;
  }
  Tokenizers().push_back(*std::move(tok));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  using uaii::fuzz::FixturePath;
  using uaii::fuzz::SharedDataPath;
  for (const char* name : {"llama2", "llama3", "qwen3", "gemma3"})
    LoadOne(SharedDataPath(std::string("tokenizers/") + name + "/tokenizer.json"),
            SharedDataPath(std::string("tokenizers/") + name + "/tokenizer_config.json"));
  for (const char* name : {"llama-spm", "gpt-2", "llama-bpe", "qwen2", "phi-3", "command-r", "starcoder", "gemma-4"})
    LoadOne(FixturePath(std::string("llama-vocab/ggml-vocab-") + name + ".gguf"));
  if (Tokenizers().empty()) {
    std::fprintf(stderr, "fuzz_tokenize: no tokenizer loaded (run scripts/test.sh for the fixtures)\n");
    std::abort();
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const auto& all = Tokenizers();
  const uaii::Tokenizer& tok = *all[data[0] % all.size()];
  const uaii::EncodeOptions opts{.parse_special = (data[1] & 1) != 0, .add_special = (data[1] & 2) != 0};
  auto ids = tok.Encode(uaii::fuzz::AsText(data + 2, size - 2), opts);
  if (!ids.ok()) return 0;
  for (uaii::TokenId id : *ids) {
    if (id < 0 || static_cast<size_t>(id) >= tok.vocab_size()) {
      std::fprintf(stderr, "fuzz_tokenize: id %d outside the vocabulary of %zu\n", id, tok.vocab_size());
      std::abort();
    }
  }
  (void)tok.Decode(*ids);
  uaii::StreamDecoder stream(tok);
  for (uaii::TokenId id : *ids) (void)stream.Push(id);
  (void)stream.Flush();
  return 0;
}
