#include "tokenizers/spm_model.h"

#include <queue>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "tokenizers/unicode.h"

namespace uaii::tok {

void SpmModel::Encode(std::string_view text, std::vector<TokenId>& out) const {
  struct Sym {
    int32_t prev, next;
    const char* p;
    size_t n;
  };
  std::vector<Sym> syms;
  for (size_t off = 0; off < text.size();) {
    const size_t n = std::min(Utf8Len(static_cast<uint8_t>(text[off])), text.size() - off);
    const int32_t idx = static_cast<int32_t>(syms.size());
    syms.push_back({idx - 1, off + n == text.size() ? -1 : idx + 1, text.data() + off, n});
    off += n;
  }
  if (syms.empty()) return;

  struct Bigram {
    int32_t left, right;
    float score;
    size_t size;
  };
  // Highest score first; on ties the leftmost (llama.cpp's llm_bigram_spm order).
  auto cmp = [](const Bigram& a, const Bigram& b) {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  };
  std::priority_queue<Bigram, std::vector<Bigram>, decltype(cmp)> queue(cmp);
  absl::flat_hash_map<std::string, std::pair<int32_t, int32_t>, SvHash, SvEq> rev_merge;
  auto try_add = [&](int32_t l, int32_t r) {
    if (l < 0 || r < 0) return;
    std::string s(syms[l].p, syms[l].n + syms[r].n);
    const TokenId id = vocab_->Find(s);
    if (id == kNoToken) return;
    const float score = vocab_->scores.empty() ? 0.0f : vocab_->scores[id];
    queue.push({l, r, score, s.size()});
    rev_merge[std::move(s)] = {l, r};
  };
  for (int32_t i = 1; i < static_cast<int32_t>(syms.size()); ++i) try_add(i - 1, i);
  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Sym& l = syms[b.left];
    Sym& r = syms[b.right];
    if (l.n == 0 || r.n == 0 || l.n + r.n != b.size) continue;
    l.n += r.n;
    r.n = 0;
    l.next = r.next;
    if (r.next >= 0) syms[r.next].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }

  // Re-split symbols that are not pieces along the merges that formed them.
  auto resegment = [&](auto&& self, const Sym& s) -> void {
    std::string t(s.p, s.n);
    if (TokenId id = vocab_->Find(t); id != kNoToken) {
      out.push_back(id);
      return;
    }
    auto it = rev_merge.find(t);
    if (it == rev_merge.end()) {
      for (size_t j = 0; j < s.n; ++j) {
        TokenId id = vocab_->byte_ids[static_cast<uint8_t>(s.p[j])];
        if (id == kNoToken) id = vocab_->Find(std::string_view(s.p + j, 1));
        if (id == kNoToken) id = unk_;
        if (id != kNoToken) out.push_back(id);
      }
      return;
    }
    // Both halves keep their original extents: copy them before recursing.
    const auto [a, b2] = it->second;
    self(self, syms[a]);
    self(self, syms[b2]);
  };
  for (int32_t i = 0; i >= 0; i = syms[i].next) resegment(resegment, syms[i]);
}

}  // namespace uaii::tok
