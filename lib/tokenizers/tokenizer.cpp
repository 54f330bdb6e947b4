// uaii::Tokenizer: the encode pipeline, decoding and vocabulary queries.
#include "uaii/tokenizer.h"

#include <algorithm>
#include <filesystem>

#include "tokenizers/str_cat.h"
#include "formats/gguf_file.h"
#include "tokenizers/byte_level.h"
#include "tokenizers/gguf_tokenizer.h"
#include "tokenizers/tokenizer_impl.h"
#include "tokenizers/unicode.h"

namespace uaii {
namespace {

constexpr std::string_view kSpaceMarker = "\xE2\x96\x81";  // U+2581

bool IsSpaceAt(std::string_view s, size_t i, bool ascii, size_t* n) {
  const auto b = static_cast<uint8_t>(s[i]);
  if (b < 0x80) {
    *n = 1;
    return b == ' ' || (b >= '\t' && b <= '\r') || (!ascii && b >= 0x1C && b <= 0x1F && false);
  }
  if (ascii) return false;
  *n = std::min(tok::Utf8Len(b), s.size() - i);
  auto cps = tok::DecodeUtf8(s.substr(i, *n));
  return cps.ok() && !cps->empty() && (tok::CpFlags((*cps)[0]) & tok::kSpace);
}

size_t TrimRight(std::string_view s, size_t end, bool ascii) {
  while (end > 0) {
    size_t start = end - 1;
    while (start > 0 && (static_cast<uint8_t>(s[start]) & 0xC0) == 0x80) --start;
    size_t n;
    if (!IsSpaceAt(s, start, ascii, &n)) break;
    end = start;
  }
  return end;
}

size_t TrimLeft(std::string_view s, size_t pos, bool ascii) {
  size_t n = 1;
  while (pos < s.size() && IsSpaceAt(s, pos, ascii, &n)) pos += n;
  return pos;
}

// Byte offsets of code point boundaries.
void SplitPieces(const std::vector<tok::Pattern>& patterns, std::vector<std::string>& pieces) {
  std::vector<std::string> next;
  next.reserve(pieces.size() * 4);
  std::vector<uint32_t> offs;
  for (const std::string& p : pieces) {
    auto cps = tok::DecodeUtf8(p);
    if (!cps.ok()) {  // byte-level text is always valid; keep the piece whole
      next.push_back(p);
      continue;
    }
    offs.assign(1, 0);
    for (uint32_t c : *cps)
      offs.push_back(offs.back() + (c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4));
    auto bounds = tok::SplitCodepoints(patterns, cps->data(), cps->size());
    for (size_t k = 0; k + 1 < bounds.size(); ++k)
      next.emplace_back(p, offs[bounds[k]], offs[bounds[k + 1]] - offs[bounds[k]]);
  }
  pieces.swap(next);
}

// Re-cuts every piece into the byte ranges `find` reports; `find(piece, matches)`
// fills tokenizers' find_matches for one piece.
template <typename Find>
absl::Status SplitByMatches(const tok::PreStep& st, Find find, std::vector<std::string>& pieces) {
  std::vector<std::string> next;
  next.reserve(pieces.size() * 2);
  std::vector<tok::PatternMatch> matches;
  std::vector<tok::ByteRange> ranges;
  for (const std::string& p : pieces) {
    if (absl::Status s = find(p, matches); !s.ok()) return s;
    tok::PiecesFromMatches(matches, st.behavior, st.invert, ranges);
    for (const tok::ByteRange& r : ranges) next.emplace_back(p, r.first, r.second - r.first);
  }
  pieces.swap(next);
  return absl::OkStatus();
}

absl::Status SplitOnString(const tok::PreStep& st, std::vector<std::string>& pieces) {
  if (st.str.empty()) return absl::OkStatus();  // the loader sends "" to the regex engine
  return SplitByMatches(
      st,
      [&](std::string_view p, std::vector<tok::PatternMatch>& m) {
        tok::FindLiteralMatches(p, st.str, m);
        return absl::OkStatus();
      },
      pieces);
}

absl::Status SplitOnRegex(const tok::PreStep& st, std::vector<std::string>& pieces) {
  return SplitByMatches(
      st,
      [&](std::string_view p, std::vector<tok::PatternMatch>& m) { return st.regex->FindMatches(p, m); },
      pieces);
}

// tokenizers' NormalizedString::replace: every match becomes the literal content.
absl::StatusOr<std::string> ReplaceRegex(const tok::OnigRegex& re, std::string_view s,
                                         std::string_view content) {
  std::vector<tok::PatternMatch> matches;
  if (absl::Status st = re.FindMatches(s, matches); !st.ok()) return st;
  std::string out;
  out.reserve(s.size());
  for (const tok::PatternMatch& m : matches) {
    if (m.is_match) out.append(content);
    else out.append(s.substr(m.start, m.end - m.start));
  }
  return out;
}

}  // namespace

absl::Status Tokenizer::Impl::EncodeNormalized(std::string_view text, bool first,
                                               std::vector<TokenId>& out) const {
  std::vector<std::string> pieces{std::string(text)};
  for (const tok::PreStep& st : pre_steps) {
    switch (st.kind) {
      case tok::PreKind::kSplit: SplitPieces(st.patterns, pieces); break;
      case tok::PreKind::kSplitString:
        if (absl::Status s = SplitOnString(st, pieces); !s.ok()) return s;
        break;
      case tok::PreKind::kSplitRegex:
        if (absl::Status s = SplitOnRegex(st, pieces); !s.ok()) return s;
        break;
      case tok::PreKind::kByteLevel: {
        if (st.add_prefix_space)
          for (std::string& p : pieces)
            if (p.empty() || p[0] != ' ') p.insert(0, " ");
        if (!st.patterns.empty()) SplitPieces(st.patterns, pieces);
        for (std::string& p : pieces) {
          std::string enc;
          tok::ByteLevelEncode(p, enc);
          p.swap(enc);
        }
        break;
      }
      case tok::PreKind::kMetaspace: {
        for (size_t k = 0; k < pieces.size(); ++k) {
          std::string& p = pieces[k];
          p = tok::ReplaceAll(p, " ", st.str);
          const bool prepend = st.prepend_scheme == 0 || (st.prepend_scheme == 1 && first && k == 0);
          if (prepend && p.compare(0, st.str.size(), st.str) != 0) p.insert(0, st.str);
        }
        if (st.split) {
          tok::PreStep s2 = st;
          s2.kind = tok::PreKind::kSplitString;
          s2.behavior = tok::SplitBehavior::kMergedWithNext;
          if (absl::Status s = SplitOnString(s2, pieces); !s.ok()) return s;
        }
        break;
      }
    }
  }
  for (const std::string& p : pieces) bpe.Encode(p, out);
  return absl::OkStatus();
}

absl::Status Tokenizer::Impl::EncodeFragment(std::string_view text, bool after_special,
                                             bool at_start, std::vector<TokenId>& out) const {
  if (scheme == tok::Scheme::kSpmLibrary) {
    std::vector<int> ids;
    spm_lib->Encode(text, ids);
    out.insert(out.end(), ids.begin(), ids.end());
    return absl::OkStatus();
  }
  std::string s;
  if (scheme == tok::Scheme::kSpm && add_space_prefix && after_special) s = " ";
  s.append(text);
  for (const tok::NormStep& n : normalizers) {
    switch (n.kind) {
      case tok::NormKind::kReplace: s = tok::ReplaceAll(s, n.from, n.to); break;
      case tok::NormKind::kReplaceRegex: {
        auto r = ReplaceRegex(*n.regex, s, n.to);
        if (!r.ok()) return r.status();
        s = std::move(*r);
        break;
      }
      case tok::NormKind::kPrepend:
        if (!s.empty()) s.insert(0, n.to);
        break;
      case tok::NormKind::kNfc: s = tok::Nfc(s); break;
    }
  }
  if (escape_spaces) s = tok::ReplaceAll(s, " ", kSpaceMarker);
  if (scheme == tok::Scheme::kSpm) {
    spm->Encode(s, out);
    return absl::OkStatus();
  }
  if (norm_matcher.empty()) return EncodeNormalized(s, at_start, out);
  // Added tokens with normalized=true are found in the normalized text (HF).
  size_t start = 0;
  bool first = at_start;
  for (size_t pos = 0; pos < s.size();) {
    size_t len = 0;
    const int32_t idx = norm_matcher.LongestAt(s, pos, true, &len);
    if (idx < 0) {
      pos += std::min(tok::Utf8Len(static_cast<uint8_t>(s[pos])), s.size() - pos);
      continue;
    }
    if (pos > start)
      if (absl::Status st = EncodeNormalized(std::string_view(s).substr(start, pos - start), first, out);
          !st.ok())
        return st;
    first = false;
    out.push_back(added[idx].id);
    pos += len;
    start = pos;
  }
  if (start < s.size()) return EncodeNormalized(std::string_view(s).substr(start), first, out);
  return absl::OkStatus();
}

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;

absl::StatusOr<std::vector<TokenId>> Tokenizer::Encode(std::string_view text,
                                                       const EncodeOptions& opts) const {
  if (absl::Status st = tok::ValidateUtf8(text); !st.ok()) return st;
  const Impl& m = *impl_;
  std::vector<TokenId> out;
  out.reserve(text.size() / 3 + 2);
  const bool bos = opts.add_special && m.add_bos && m.special.bos != kNoToken;
  if (bos) out.push_back(m.special.bos);
  size_t start = 0;
  bool after_special = true;
  for (size_t pos = 0; pos < text.size();) {
    size_t len = 0;
    const int32_t idx =
        m.raw_matcher.empty() ? -1 : m.raw_matcher.LongestAt(text, pos, opts.parse_special, &len);
    if (idx < 0) {
      pos += std::min(tok::Utf8Len(static_cast<uint8_t>(text[pos])), text.size() - pos);
      continue;
    }
    const tok::AddedToken& at = m.added[idx];
    size_t left_end = at.lstrip ? TrimRight(text, pos, m.ascii_strip) : pos;
    if (left_end < start) left_end = start;
    if (left_end > start)
      if (absl::Status st =
              m.EncodeFragment(text.substr(start, left_end - start), after_special, start == 0, out);
          !st.ok())
        return st;
    out.push_back(at.id);
    after_special = true;
    pos += len;
    if (at.rstrip) pos = TrimLeft(text, pos, m.ascii_strip);
    start = pos;
  }
  if (start < text.size())
    if (absl::Status st = m.EncodeFragment(text.substr(start), after_special, start == 0, out); !st.ok())
      return st;
  // Never double BOS: a rendered template that already starts with it keeps one.
  if (bos && out.size() >= 2 && out[1] == m.special.bos) out.erase(out.begin());
  if (opts.add_special && m.add_eos && m.special.eos != kNoToken) out.push_back(m.special.eos);
  return out;
}

std::string Tokenizer::Decode(std::span<const TokenId> ids, bool skip_special) const {
  std::string out;
  bool first = true;
  for (TokenId id : ids) {
    if (id < 0 || static_cast<size_t>(id) >= impl_->token_bytes.size()) continue;
    const TokenType t = impl_->vocab.types[id];
    if (skip_special && (t == TokenType::kControl || t == TokenType::kUnknown)) continue;
    std::string_view b = impl_->token_bytes[id];
    if (first && impl_->strip_leading_space && !b.empty() && b[0] == ' ') b.remove_prefix(1);
    first = false;
    out.append(b);
  }
  return out;
}

size_t Tokenizer::vocab_size() const { return impl_->vocab.size(); }
std::string_view Tokenizer::Piece(TokenId id) const {
  if (id < 0 || static_cast<size_t>(id) >= impl_->vocab.size()) return {};
  return impl_->vocab.pieces[id];
}
TokenId Tokenizer::PieceToId(std::string_view piece) const { return impl_->vocab.Find(piece); }
TokenType Tokenizer::Type(TokenId id) const {
  return id >= 0 && static_cast<size_t>(id) < impl_->vocab.size() ? impl_->vocab.types[id]
                                                                  : TokenType::kUndefined;
}
std::string_view Tokenizer::TokenBytes(TokenId id) const {
  if (id < 0 || static_cast<size_t>(id) >= impl_->token_bytes.size()) return {};
  return impl_->token_bytes[id];
}
const SpecialIds& Tokenizer::special_ids() const { return impl_->special; }
const std::vector<TokenId>& Tokenizer::end_of_generation_ids() const { return impl_->eog; }
bool Tokenizer::IsEndOfGeneration(TokenId id) const {
  return std::find(impl_->eog.begin(), impl_->eog.end(), id) != impl_->eog.end();
}
bool Tokenizer::add_bos() const { return impl_->add_bos; }
bool Tokenizer::add_eos() const { return impl_->add_eos; }
std::string_view Tokenizer::model_name() const { return impl_->model_name; }
std::string_view Tokenizer::pre_tokenizer_name() const { return impl_->pre_name; }

absl::StatusOr<std::unique_ptr<Tokenizer>> TokenizerFromGguf(const gguf::File& file) {
  auto impl = tok::LoadGguf(file);
  if (!impl.ok()) return impl.status();
  return TokenizerInternals::Make(std::move(*impl));
}

absl::StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::FromTokenizerJson(
    const std::string& path, const std::string& config_path) {
  auto impl = tok::LoadTokenizerJson(path, config_path);
  if (!impl.ok()) return impl.status();
  return TokenizerInternals::Make(std::move(*impl));
}

absl::StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::FromSentencePieceModel(
    const std::string& path, const std::string& config_path) {
  auto impl = tok::LoadSentencePiece(path, config_path);
  if (!impl.ok()) return impl.status();
  return TokenizerInternals::Make(std::move(*impl));
}

absl::StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::Load(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    const fs::path dir(path);
    const std::string config =
        fs::exists(dir / "tokenizer_config.json") ? (dir / "tokenizer_config.json").string() : "";
    if (fs::exists(dir / "tokenizer.json")) {
      auto t = FromTokenizerJson((dir / "tokenizer.json").string(), config);
      // A Unigram tokenizer.json next to a tokenizer.model: use the model.
      if (!t.ok() && fs::exists(dir / "tokenizer.model"))
        return FromSentencePieceModel((dir / "tokenizer.model").string(), config);
      return t;
    }
    if (fs::exists(dir / "tokenizer.model"))
      return FromSentencePieceModel((dir / "tokenizer.model").string(), config);
    return absl::NotFoundError(StrCat(
        "no tokenizer in directory ", path, ": expected tokenizer.json or tokenizer.model"));
  }
  if (!fs::exists(path, ec)) return absl::NotFoundError(StrCat("no such file: ", path));
  if (path.size() >= 6 && path.substr(path.size() - 6) == ".model")
    return FromSentencePieceModel(path);
  if (path.size() >= 5 && path.substr(path.size() - 5) == ".json") return FromTokenizerJson(path);
  auto file = gguf::File::Open(path);
  if (!file.ok()) return file.status();
  return TokenizerFromGguf(**file);
}

std::string StreamDecoder::Push(TokenId id) {
  const TokenizerInternals::Impl& m = TokenizerInternals::Of(tok_);
  if (id >= 0 && static_cast<size_t>(id) < m.token_bytes.size()) {
    const TokenType t = m.vocab.types[id];
    if (!(skip_special_ && (t == TokenType::kControl || t == TokenType::kUnknown))) {
      std::string_view b = m.token_bytes[id];
      if (first_ && m.strip_leading_space && !b.empty() && b[0] == ' ') b.remove_prefix(1);
      first_ = false;
      pending_.append(b);
    }
  }
  std::string out;
  while (!pending_.empty()) {
    bool incomplete = false;
    const size_t n = tok::ValidUtf8Prefix(pending_, &incomplete);
    out.append(pending_, 0, n);
    pending_.erase(0, n);
    if (pending_.empty() || incomplete) break;
    out.append("\xEF\xBF\xBD");  // a byte that can never start a valid character
    pending_.erase(0, 1);
  }
  return out;
}

std::string StreamDecoder::Flush() {
  std::string out;
  while (!pending_.empty()) {
    bool incomplete = false;
    const size_t n = tok::ValidUtf8Prefix(pending_, &incomplete);
    out.append(pending_, 0, n);
    pending_.erase(0, n);
    if (pending_.empty()) break;
    out.append("\xEF\xBF\xBD");
    pending_.erase(0, incomplete ? pending_.size() : 1);
  }
  return out;
}

}  // namespace uaii
