// tokenizer.model through the sentencepiece library (Debian libsentencepiece-dev):
// the library itself encodes each text fragment; we add special-token parsing,
// BOS/EOS per tokenizer_config.json, and the shared vocabulary queries.
#include "tokenizers/str_cat.h"
#include "tokenizers/tokenizer_impl.h"

namespace uaii::tok {

absl::StatusOr<std::unique_ptr<TokenizerInternals::Impl>> LoadSentencePiece(const std::string& path,
                                                                     const std::string& config) {
  std::string error;
  std::shared_ptr<SpmProcessor> proc = SpmProcessor::Load(path, &error);
  if (!proc)
    return absl::InvalidArgumentError(StrCat(path, ": cannot load SentencePiece model: ", error));
  auto impl = std::make_unique<TokenizerInternals::Impl>();
  impl->model_name = "sentencepiece";
  impl->pre_name = "none";
  impl->scheme = Scheme::kSpmLibrary;
  impl->spm_lib = proc;
  const auto pieces = proc->Pieces();
  const int n = static_cast<int>(pieces.size());
  Vocab& v = impl->vocab;
  v.Resize(n);
  v.scores.resize(n);
  for (int i = 0; i < n; ++i) {
    v.pieces[i] = pieces[i].piece;
    v.scores[i] = pieces[i].score;
    v.types[i] = static_cast<TokenType>(pieces[i].type);
    // Control tokens are parsed out of the text with parse_special; the library
    // handles user-defined symbols itself.
    if (v.types[i] == TokenType::kControl) impl->added.push_back({v.pieces[i], i, true});
  }
  auto id_or_none = [&](int id) { return id >= 0 && id < n ? id : kNoToken; };
  impl->special.bos = id_or_none(proc->bos_id());
  impl->special.eos = id_or_none(proc->eos_id());
  impl->special.unk = id_or_none(proc->unk_id());
  impl->special.pad = id_or_none(proc->pad_id());
  // LlamaTokenizer's default: BOS yes, EOS no (tokenizer_config.json may override).
  impl->add_bos = impl->special.bos != kNoToken;
  impl->strip_leading_space = true;
  v.BuildIndex();
  if (!config.empty())
    if (absl::Status st = ApplyTokenizerConfig(config, *impl); !st.ok()) return st;
  if (absl::Status st = impl->Finish(); !st.ok()) return st;
  return impl;
}

}  // namespace uaii::tok
