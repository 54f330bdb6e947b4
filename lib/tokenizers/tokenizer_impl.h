// The state behind uaii::Tokenizer, filled by the loaders (gguf_vocab.cpp,
// hf_json.cpp, spm_library.cpp) and run by tokenizer.cpp.
//
// Encode pipeline, per call:
//   text -> cut out added/special tokens (longest match, leftmost first)
//        -> for each text fragment: normalizers -> pre-tokenizer steps -> model
//        -> BOS/EOS per configuration.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tokenizers/bpe_model.h"
#include "tokenizers/onig_regex.h"
#include "tokenizers/pretokenizer.h"
#include "tokenizers/spm_model.h"
#include "tokenizers/spm_processor.h"
#include "tokenizers/split_behavior.h"
#include "tokenizers/vocab.h"
#include "uaii/tokenizer.h"

namespace uaii {

namespace gguf { class File; }

namespace tok {

struct AddedToken {
  std::string content;
  TokenId id = kNoToken;
  bool special = true;      // recognised only with parse_special
  bool lstrip = false;      // swallows whitespace on its left
  bool rstrip = false;      // swallows whitespace on its right
  bool normalized = false;  // matched against normalized text (HF)
};

// A trie over added tokens for leftmost-longest matching.
class AddedTokenMatcher {
 public:
  void Build(const std::vector<AddedToken>& tokens, bool normalized);
  bool empty() const { return nodes_.size() <= 1; }
  // Longest token starting at text[pos], or -1 (index into the token list).
  int32_t LongestAt(std::string_view text, size_t pos, bool parse_special, size_t* len) const;

 private:
  struct Node {
    int32_t token = -1;
    bool special = true;
  };
  std::vector<Node> nodes_;
  absl::flat_hash_map<uint64_t, int32_t> edges_;  // (node << 8 | byte) -> node
};

enum class NormKind {
  kReplace,       // literal `from` -> `to`
  kReplaceRegex,  // every match of `regex` -> `to` (the content is literal, as in HF)
  kPrepend,
  kNfc,
};
struct NormStep {
  NormKind kind;
  std::string from, to;  // Replace: from -> to; Prepend: to
  std::shared_ptr<const OnigRegex> regex = nullptr;  // kReplaceRegex
};

enum class PreKind {
  kSplit,        // hand-written splitters (fast paths; Isolated behaviour)
  kSplitRegex,   // any other regex, run by Oniguruma, with behavior / invert
  kByteLevel,
  kMetaspace,
  kSplitString,  // a non-empty literal, with behavior / invert
};
struct PreStep {
  PreKind kind;
  std::vector<Pattern> patterns;   // kSplit; kByteLevel with use_regex (kGpt2)
  bool add_prefix_space = false;   // kByteLevel
  std::string str;                 // kSplitString pattern; kMetaspace replacement
  SplitBehavior behavior = SplitBehavior::kIsolated;  // kSplitString, kSplitRegex
  bool invert = false;                                // kSplitString, kSplitRegex
  std::shared_ptr<const OnigRegex> regex = nullptr;   // kSplitRegex
  int prepend_scheme = 0;          // kMetaspace: 0 always, 1 first, 2 never
  bool split = true;               // kMetaspace
};

enum class Scheme {
  kBpe,            // rank BPE after pre-tokenizer steps (gpt2, gemma4, tokenizer.json)
  kSpm,            // llama.cpp SentencePiece over the whole fragment (GGUF llama)
  kSpmLibrary,     // the sentencepiece library (tokenizer.model)
};

}  // namespace tok

struct Tokenizer::Impl {
  std::string model_name;
  std::string pre_name;
  tok::Scheme scheme = tok::Scheme::kBpe;
  tok::Vocab vocab;
  tok::BpeModel bpe;
  std::unique_ptr<tok::SpmModel> spm;
  std::shared_ptr<tok::SpmProcessor> spm_lib;

  std::vector<tok::NormStep> normalizers;
  std::vector<tok::PreStep> pre_steps;
  bool add_space_prefix = false;  // kSpm: " " before the first fragment and after specials
  bool escape_spaces = false;     // kSpm / gemma4: " " -> U+2581 before the model
  bool ascii_strip = false;       // lstrip/rstrip use ASCII isspace (llama.cpp)

  std::vector<tok::AddedToken> added;
  tok::AddedTokenMatcher raw_matcher;   // added tokens matched on raw text
  tok::AddedTokenMatcher norm_matcher;  // normalized=true added tokens (HF)

  SpecialIds special;
  std::vector<TokenId> fim_eog;   // GGUF: llama.cpp's FIM pad / repo / file-separator ids, which end generation
  std::vector<TokenId> eog;
  bool add_bos = false;
  bool add_eos = false;
  bool strip_leading_space = false;  // decoder drops one leading space (SPM prefix)
  std::vector<std::string> token_bytes;  // decoded bytes per id

  // Finishing steps shared by every loader: index, matchers, token bytes, EOG set.
  absl::Status Finish();
  // Fail only where a general regex exceeds its search bounds (onig_regex.h).
  absl::Status EncodeFragment(std::string_view text, bool after_special, bool at_start,
                              std::vector<TokenId>& out) const;
  absl::Status EncodeNormalized(std::string_view text, bool first, std::vector<TokenId>& out) const;
};

// The library's access to a Tokenizer's internals (Tokenizer::Impl is private to the
// public header): the loaders build one, StreamDecoder reads it.
struct TokenizerInternals {
  using Impl = Tokenizer::Impl;
  static const Impl& Of(const Tokenizer& t) { return *t.impl_; }
  static std::unique_ptr<Tokenizer> Make(std::unique_ptr<Impl> impl) {
    return std::unique_ptr<Tokenizer>(new Tokenizer(std::move(impl)));
  }
};

namespace tok {
// Loader entry points (one file each).
absl::StatusOr<std::unique_ptr<TokenizerInternals::Impl>> LoadGguf(const gguf::File& file);
absl::StatusOr<std::unique_ptr<TokenizerInternals::Impl>> LoadTokenizerJson(const std::string& path,
                                                                     const std::string& config);
absl::StatusOr<std::unique_ptr<TokenizerInternals::Impl>> LoadSentencePiece(const std::string& path,
                                                                     const std::string& config);
// Token texts that end generation (llama.cpp's list; GGUF files carry no EOG flag).
const std::vector<std::string_view>& EogPieces();
// tokenizer_config.json: add_bos_token / add_eos_token / bos_token / eos_token.
absl::Status ApplyTokenizerConfig(const std::string& path, TokenizerInternals::Impl& impl);
}  // namespace tok

}  // namespace uaii
