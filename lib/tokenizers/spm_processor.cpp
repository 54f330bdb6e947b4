#include "tokenizers/spm_processor.h"

#include <sentencepiece_processor.h>

namespace uaii::tok {

struct SpmProcessor::Lib {
  sentencepiece::SentencePieceProcessor proc;
};

SpmProcessor::~SpmProcessor() = default;

std::unique_ptr<SpmProcessor> SpmProcessor::Load(const std::string& path, std::string* error) {
  auto p = std::unique_ptr<SpmProcessor>(new SpmProcessor);
  p->lib_ = std::make_unique<Lib>();
  const auto st = p->lib_->proc.Load(path);
  if (!st.ok()) {
    *error = st.ToString();
    return nullptr;
  }
  return p;
}

void SpmProcessor::Encode(std::string_view text, std::vector<int>& out) const {
  std::vector<int> ids;
  // Input is validated UTF-8 before it gets here, so Encode cannot fail on it.
  (void)lib_->proc.Encode(text, &ids);
  out.insert(out.end(), ids.begin(), ids.end());
}

std::vector<SpmProcessor::PieceInfo> SpmProcessor::Pieces() const {
  const auto& p = lib_->proc;
  std::vector<PieceInfo> out(p.GetPieceSize());
  for (int i = 0; i < p.GetPieceSize(); ++i) {
    out[i].piece = p.IdToPiece(i);
    out[i].score = p.GetScore(i);
    // Values of uaii::TokenType (GGUF's token types).
    out[i].type = p.IsControl(i) ? 3 : p.IsUnknown(i) ? 2 : p.IsByte(i) ? 6 : p.IsUnused(i) ? 5 : 1;
  }
  return out;
}

int SpmProcessor::bos_id() const { return lib_->proc.bos_id(); }
int SpmProcessor::eos_id() const { return lib_->proc.eos_id(); }
int SpmProcessor::unk_id() const { return lib_->proc.unk_id(); }
int SpmProcessor::pad_id() const { return lib_->proc.pad_id(); }

}  // namespace uaii::tok
