// A thin wrapper over sentencepiece::SentencePieceProcessor. Its header declares
// names inside namespace absl that clash with Abseil's, so only spm_processor.cpp
// includes it and that file includes nothing from Abseil.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace uaii::tok {

class SpmProcessor {
 public:
  struct PieceInfo {
    std::string piece;
    float score;
    int type;  // TokenType value
  };
  // Returns null and sets *error on failure.
  static std::unique_ptr<SpmProcessor> Load(const std::string& path, std::string* error);
  ~SpmProcessor();
  void Encode(std::string_view text, std::vector<int>& out) const;
  std::vector<PieceInfo> Pieces() const;
  int bos_id() const;
  int eos_id() const;
  int unk_id() const;
  int pad_id() const;

 private:
  struct Lib;
  std::unique_ptr<Lib> lib_;
};

}  // namespace uaii::tok
