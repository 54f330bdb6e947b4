// Steps every loader ends with: lookup index, added-token matchers, decoded bytes per
// token, and the end-of-generation set.
#include <algorithm>
#include <charconv>

#include "tokenizers/str_cat.h"
#include "tokenizers/byte_level.h"
#include "tokenizers/tokenizer_impl.h"

namespace uaii {
namespace {

// Pieces that end generation when they are special tokens (llama.cpp's list, built
// from token text because GGUF files carry no per-token EOG flag).
}  // namespace

const std::vector<std::string_view>& tok::EogPieces() {
  static const std::vector<std::string_view> k = {
      "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
      "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
      "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
      "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>",  // <｜end▁of▁sentence｜>
      "[e~[",
  };
  return k;
}

absl::Status Tokenizer::Impl::Finish() {
  vocab.BuildIndex();
  raw_matcher.Build(added, false);
  norm_matcher.Build(added, true);

  const bool byte_level =
      std::any_of(pre_steps.begin(), pre_steps.end(),
                  [](const tok::PreStep& s) { return s.kind == tok::PreKind::kByteLevel; });
  token_bytes.resize(vocab.size());
  for (size_t i = 0; i < vocab.size(); ++i) {
    const std::string& p = vocab.pieces[i];
    switch (vocab.types[i]) {
      case TokenType::kUserDefined:  // added text: raw, but U+2581 still means space
        token_bytes[i] = byte_level ? p : tok::ReplaceAll(p, "\xE2\x96\x81", " ");
        break;
      case TokenType::kControl:
      case TokenType::kUnknown:
      case TokenType::kUnused:
        token_bytes[i] = p;
        break;
      case TokenType::kByte:
        // "<0xAB>"; a byte token spelled otherwise (a crafted file: "<0xZZ>") is read as
        // a normal piece (std::stoi threw there: fuzz_gguf).
        if (unsigned byte = 0; p.size() == 6 && p.rfind("<0x", 0) == 0 && p[5] == '>' &&
                               std::from_chars(p.data() + 3, p.data() + 5, byte, 16).ptr == p.data() + 5) {
          token_bytes[i] = std::string(1, static_cast<char>(byte));
          break;
        }
        [[fallthrough]];
      default:
        token_bytes[i] = byte_level ? tok::ByteLevelDecode(p)
                                    : tok::ReplaceAll(p, "\xE2\x96\x81", " ");
    }
  }

  eog.clear();
  auto add_eog = [&](TokenId id) {
    if (id != kNoToken && std::find(eog.begin(), eog.end(), id) == eog.end()) eog.push_back(id);
  };
  add_eog(special.eos);
  add_eog(special.eot);
  add_eog(special.eom);
  for (TokenId id : fim_eog) add_eog(id);
  for (std::string_view p : tok::EogPieces()) {
    const TokenId id = vocab.Find(p);
    if (id != kNoToken && vocab.types[id] == TokenType::kControl) add_eog(id);
  }
  std::sort(eog.begin(), eog.end());
  return absl::OkStatus();
}

}  // namespace uaii
