// tokenizer.json and tokenizer_config.json loading (lib/tokenizers hf_json.cpp,
// added_tokens.cpp, the pre-tokenizer regexes; ApplyTokenizerConfig), then one encode
// and decode with the loaded tokenizer. Input: tokenizer.json, optionally followed by
// kConfigSeparator and a tokenizer_config.json.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "uaii/tokenizer.h"

namespace {
constexpr std::string_view kConfigSeparator = "\n---tokenizer_config.json---\n";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace uaii;
  std::string_view in = fuzz::AsText(data, size);
  std::string_view json = in, config;
  if (size_t at = in.find(kConfigSeparator); at != std::string_view::npos) {
    json = in.substr(0, at);
    config = in.substr(at + kConfigSeparator.size());
  }
  const std::string path = fuzz::WriteScratch("tokenizer.json", json);
  std::string config_path;
  if (!config.empty()) config_path = fuzz::WriteScratch("tokenizer_config.json", config);
  auto tok = Tokenizer::FromTokenizerJson(path, config_path);
  if (!tok.ok()) return 0;
  auto ids = (*tok)->Encode("Hello wörld <|im_start|> 12345 \xF0\x9F\x98\x80!\n\n  x", {.parse_special = true});
  if (ids.ok()) (void)(*tok)->Decode(*ids);
  return 0;
}
