// GGUF tokenizer.ggml.* metadata -> Tokenizer::Impl, following llama.cpp's
// llama_vocab::load: models `llama` (SentencePiece), `gpt2` (byte-level BPE with the
// named pre-tokenizer) and `gemma4` (BPE on raw UTF-8 with spaces as U+2581).
#include <algorithm>
#include <cctype>

#include "tokenizers/str_cat.h"
#include "formats/gguf_file.h"
#include "tokenizers/tokenizer_impl.h"

namespace uaii::tok {
namespace {

using gguf::ValueType;

TokenId OptId(const gguf::File& f, std::string_view key, TokenId fallback) {
  auto v = f.GetInt(key);
  return v.ok() ? static_cast<TokenId>(*v) : fallback;
}
bool OptBool(const gguf::File& f, std::string_view key, bool fallback) {
  auto v = f.GetBool(key);
  return v.ok() ? *v : fallback;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TokenizerInternals::Impl>> LoadGguf(const gguf::File& f) {
  auto model = f.GetString("tokenizer.ggml.model");
  if (!model.ok()) return model.status();
  auto impl = std::make_unique<TokenizerInternals::Impl>();
  impl->model_name = std::string(*model);
  const bool spm = *model == "llama";
  const bool gemma4 = *model == "gemma4";
  if (!spm && !gemma4 && *model != "gpt2")
    return absl::UnimplementedError(StrCat(
        "unsupported tokenizer model ", *model, " (tokenizer.ggml.model in ", f.path(),
        "); supported: llama, gpt2, gemma4"));

  auto tokens = f.GetArray("tokenizer.ggml.tokens", ValueType::STRING);
  if (!tokens.ok()) return tokens.status();
  const size_t n = (*tokens)->elems.size();
  if (n == 0) return absl::InvalidArgumentError(StrCat(f.path(), ": tokenizer.ggml.tokens is empty"));
  Vocab& v = impl->vocab;
  v.Resize(n);
  for (size_t i = 0; i < n; ++i) v.pieces[i] = std::string((*tokens)->elems[i].str);
  if (f.Find("tokenizer.ggml.scores")) {
    auto scores = f.GetArray("tokenizer.ggml.scores", ValueType::FLOAT32);
    if (!scores.ok()) return scores.status();
    if ((*scores)->elems.size() != n)
      return absl::InvalidArgumentError(StrCat(
          f.path(), ": tokenizer.ggml.scores has ", (*scores)->elems.size(), " entries, tokens ", n));
    v.scores.resize(n);
    for (size_t i = 0; i < n; ++i) v.scores[i] = static_cast<float>((*scores)->elems[i].as_double());
  }
  if (f.Find("tokenizer.ggml.token_type")) {
    auto types = f.GetArray("tokenizer.ggml.token_type", ValueType::INT32);
    if (!types.ok()) return types.status();
    if ((*types)->elems.size() != n)
      return absl::InvalidArgumentError(StrCat(
          f.path(), ": tokenizer.ggml.token_type has ", (*types)->elems.size(), " entries, tokens ", n));
    for (size_t i = 0; i < n; ++i) {
      const int64_t t = (*types)->elems[i].as_int();
      v.types[i] = (t >= 0 && t <= 6) ? static_cast<TokenType>(t) : TokenType::kNormal;
    }
  }
  v.BuildIndex();

  // Defaults as llama.cpp sets them before reading the keys.
  SpecialIds& s = impl->special;
  if (spm) {
    s.bos = 1; s.eos = 2; s.unk = 0;
    impl->add_bos = true;
  } else if (!gemma4) {
    s.bos = 11; s.eos = 11;
  }
  std::string pre_name = "default";
  if (spm) {
    impl->scheme = Scheme::kSpm;
    impl->spm = std::make_unique<SpmModel>(&impl->vocab, kNoToken);
    impl->add_space_prefix = OptBool(f, "tokenizer.ggml.add_space_prefix", true);
    impl->escape_spaces = true;
    impl->strip_leading_space = impl->add_space_prefix;
    impl->pre_name = "none";
  } else {
    if (gemma4) {
      pre_name = "gemma4";
    } else if (auto p = f.GetString("tokenizer.ggml.pre"); p.ok()) {
      pre_name = std::string(*p);
    }
    auto named = FindNamedPreTokenizer(pre_name);
    if (!named.ok()) return named.status();
    impl->pre_name = std::string((*named)->name);
    impl->pre_steps.push_back({PreKind::kSplit, (*named)->patterns});
    if ((*named)->byte_level) impl->pre_steps.push_back({PreKind::kByteLevel});
    impl->bpe.ignore_merges = (*named)->ignore_merges;
    if ((*named)->ignore_merges && (*named)->name == "llama3") impl->add_bos = true;
    impl->escape_spaces = gemma4 || (*named)->name == "gemma4";
    impl->bpe.whole_newline_runs = gemma4;
    impl->bpe.byte_fallback = true;
    auto merges = f.GetArray("tokenizer.ggml.merges", ValueType::STRING);
    if (!merges.ok()) return merges.status();
    std::vector<std::pair<std::string_view, std::string_view>> pairs;
    pairs.reserve((*merges)->elems.size());
    for (const auto& m : (*merges)->elems) {
      const size_t sp = m.str.find(' ', 1);
      if (sp == m.str.npos) {
        pairs.emplace_back("", "");  // llama.cpp keeps the rank slot of a malformed merge
        continue;
      }
      pairs.emplace_back(m.str.substr(0, sp), m.str.substr(sp + 1));
    }
    if (absl::Status st = impl->bpe.Init(&impl->vocab, pairs, /*strict=*/false); !st.ok())
      return st;
  }
  s.bos = OptId(f, "tokenizer.ggml.bos_token_id", s.bos);
  s.eos = OptId(f, "tokenizer.ggml.eos_token_id", s.eos);
  s.eot = OptId(f, "tokenizer.ggml.eot_token_id", s.eot);
  s.eom = OptId(f, "tokenizer.ggml.eom_token_id", s.eom);
  s.unk = OptId(f, "tokenizer.ggml.unknown_token_id", s.unk);
  s.pad = OptId(f, "tokenizer.ggml.padding_token_id", s.pad);
  for (TokenId* id : {&s.bos, &s.eos, &s.eot, &s.eom, &s.unk, &s.pad})
    if (*id < 0 || static_cast<size_t>(*id) >= n) *id = kNoToken;
  impl->add_bos = OptBool(f, "tokenizer.ggml.add_bos_token", impl->add_bos);
  impl->add_eos = OptBool(f, "tokenizer.ggml.add_eos_token", impl->add_eos);
  if (gemma4) impl->add_bos = true;  // llama.cpp overrides it for Gemma 4
  if (spm) impl->spm = std::make_unique<SpmModel>(&impl->vocab, s.unk);
  impl->bpe.unk = s.unk;
  impl->ascii_strip = true;

  // llama.cpp forces end-of-generation texts to CONTROL, except a </s> that is a
  // normal token in vocabularies with <|tool_response> (Gemma 4) or <|plamo:eos|>.
  {
    const bool normal_s = v.Find("<|tool_response>") != kNoToken || v.Find("<|plamo:eos|>") != kNoToken;
    for (std::string_view p : EogPieces()) {
      const TokenId id = v.Find(p);
      if (id == kNoToken) continue;
      v.types[id] = (normal_s && p == "</s>") ? TokenType::kNormal : TokenType::kControl;
    }
  }
  // llama.cpp ends generation at the FIM pad, repo and file-separator tokens too: each
  // from its tokenizer.ggml.fim_*_token_id key, else by its text (forced to CONTROL).
  {
    struct FimRole { std::string_view key; std::vector<std::string_view> texts; };
    const FimRole roles[] = {
        {"tokenizer.ggml.fim_pad_token_id", {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"}},
        {"tokenizer.ggml.fim_rep_token_id", {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}},
        {"tokenizer.ggml.fim_sep_token_id", {"<|file_sep|>"}},
    };
    for (const FimRole& r : roles) {
      TokenId id = OptId(f, r.key, kNoToken);
      if (id < 0 || static_cast<size_t>(id) >= n) id = kNoToken;
      for (size_t i = 0; id == kNoToken && i < r.texts.size(); ++i) {
        id = v.Find(r.texts[i]);
        if (id != kNoToken) v.types[id] = TokenType::kControl;
      }
      if (id != kNoToken) impl->fim_eog.push_back(id);
    }
  }
  // Special-token cache: control, user-defined and unknown tokens; only
  // user-defined ones are matched without parse_special.
  std::string name;
  if (auto g = f.GetString("general.name"); g.ok()) name = std::string(*g);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  const bool phi3 = name.find("phi-3") != name.npos || name.find("phi3") != name.npos;
  for (size_t i = 0; i < n; ++i) {
    const TokenType t = v.types[i];
    if (t != TokenType::kControl && t != TokenType::kUserDefined && t != TokenType::kUnknown)
      continue;
    AddedToken a;
    a.id = static_cast<TokenId>(i);
    a.content = v.pieces[i];
    a.special = t != TokenType::kUserDefined;
    // Phi-3: whitespace after special tokens is dropped (llama.cpp sets RSTRIP on
    // them, except <unk>, <s> and <|endoftext|>).
    a.rstrip = phi3 && a.content != "<unk>" && a.content != "<s>" && a.content != "<|endoftext|>";
    impl->added.push_back(std::move(a));
  }
  if (phi3)
    if (TokenId id = v.Find("</s>"); id != kNoToken) {
      bool present = false;
      for (auto& a : impl->added) present = present || a.id == id;
      if (!present) impl->added.push_back({"</s>", id, false, false, true, false});
    }
  if (absl::Status st = impl->Finish(); !st.ok()) return st;
  return impl;
}

}  // namespace uaii::tok
