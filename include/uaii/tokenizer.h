// uaii::Tokenizer: text <-> token ids, giving exactly the ids of the reference
// implementations (llama.cpp for GGUF vocabularies, Hugging Face `tokenizers` for
// tokenizer.json, the sentencepiece library for tokenizer.model).
//
// Sources (Tokenizer::Load picks by path):
//   * GGUF file: tokenizer.ggml.* metadata; models `llama` (SentencePiece), `gpt2`
//     (byte-level BPE after the pre-tokenizer named by tokenizer.ggml.pre), `gemma4`.
//   * directory: tokenizer.json (BPE) or tokenizer.model (SentencePiece), plus
//     tokenizer_config.json for add_bos_token / add_eos_token / bos / eos tokens.
//
// A Tokenizer is immutable after loading; every method is const and thread-safe.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace uaii {

using TokenId = int32_t;
inline constexpr TokenId kNoToken = -1;

// Token types; values follow llama.cpp's / GGUF's tokenizer.ggml.token_type.
enum class TokenType : int32_t {
  kUndefined = 0, kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5,
  kByte = 6,
};

struct EncodeOptions {
  // Recognise special (control) tokens written in the text, such as "<|im_start|>".
  // User-defined added tokens are always recognised, as in both references.
  bool parse_special = false;
  // Prepend BOS (and append EOS) as the tokenizer's configuration says
  // (add_bos_token / tokenizer.ggml.add_bos_token / the scheme's default). BOS is
  // never doubled: text that already starts with BOS keeps just that one.
  bool add_special = true;
};

struct SpecialIds {
  TokenId bos = kNoToken, eos = kNoToken, eot = kNoToken, eom = kNoToken, unk = kNoToken,
          pad = kNoToken;
};

class Tokenizer {
 public:
  // A GGUF file, or a directory holding tokenizer.json / tokenizer.model.
  static absl::StatusOr<std::unique_ptr<Tokenizer>> Load(const std::string& path);
  // tokenizer.json (config_json: tokenizer_config.json contents, or empty).
  static absl::StatusOr<std::unique_ptr<Tokenizer>> FromTokenizerJson(
      const std::string& path, const std::string& config_path = "");
  static absl::StatusOr<std::unique_ptr<Tokenizer>> FromSentencePieceModel(
      const std::string& path, const std::string& config_path = "");

  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // Fails only on invalid UTF-8 (InvalidArgument naming the byte offset).
  absl::StatusOr<std::vector<TokenId>> Encode(std::string_view text,
                                              const EncodeOptions& opts = {}) const;
  // Concatenated bytes of the tokens (special tokens rendered unless skip_special).
  // May contain invalid UTF-8 when the ids split a character; use StreamDecoder
  // for streaming.
  std::string Decode(std::span<const TokenId> ids, bool skip_special = false) const;

  // Vocabulary.
  size_t vocab_size() const;
  std::string_view Piece(TokenId id) const;   // vocabulary string ("" if out of range)
  TokenId PieceToId(std::string_view piece) const;  // kNoToken if absent
  TokenType Type(TokenId id) const;
  // The bytes this token stands for in decoded text.
  std::string_view TokenBytes(TokenId id) const;
  const SpecialIds& special_ids() const;
  const std::vector<TokenId>& end_of_generation_ids() const;
  bool IsEndOfGeneration(TokenId id) const;
  bool add_bos() const;
  bool add_eos() const;
  // "llama", "gpt2", "gemma4", "tokenizer.json:BPE", "sentencepiece" ...
  std::string_view model_name() const;
  std::string_view pre_tokenizer_name() const;

 private:
  struct Impl;
  friend struct TokenizerInternals;  // the library's own access (lib/tokenizers/tokenizer_impl.h)
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Incremental detokenizer for streaming: Push returns only complete UTF-8 characters;
// bytes of a character split across tokens wait for the next token. Bytes that can
// never become valid UTF-8 come out as U+FFFD. Not thread-safe (one per stream).
class StreamDecoder {
 public:
  explicit StreamDecoder(const Tokenizer& tok, bool skip_special = false)
      : tok_(tok), skip_special_(skip_special) {}
  std::string Push(TokenId id);
  std::string Flush();  // whatever is pending, invalid bytes as U+FFFD

 private:
  const Tokenizer& tok_;
  bool skip_special_;
  bool first_ = true;
  std::string pending_;
};

}  // namespace uaii
