#include "tokenizers/bpe_model.h"

#include <queue>

#include "tokenizers/str_cat.h"
#include "tokenizers/unicode.h"

namespace uaii::tok {

absl::Status BpeModel::Init(
    const Vocab* vocab, const std::vector<std::pair<std::string_view, std::string_view>>& merges,
    bool strict) {
  vocab_ = vocab;
  merges_.clear();
  merges_.reserve(merges.size());
  std::string joined;
  for (size_t r = 0; r < merges.size(); ++r) {
    const auto& [a, b] = merges[r];
    joined.assign(a);
    joined.append(b);
    const TokenId ia = vocab->Find(a), ib = vocab->Find(b), ir = vocab->Find(joined);
    if (ia == kNoToken || ib == kNoToken || ir == kNoToken) {
      if (strict)
        return absl::InvalidArgumentError(StrCat(
            "BPE merge ", r, " \"", a, " ", b, "\": ",
            ia == kNoToken ? a : ib == kNoToken ? b : std::string_view(joined),
            " is not in the vocabulary"));
      continue;
    }
    merges_.try_emplace(Key(ia, ib), Merge{static_cast<uint32_t>(r), ir});
  }
  return absl::OkStatus();
}

void BpeModel::Encode(std::string_view word, std::vector<TokenId>& out) const {
  if (word.empty()) return;
  if (ignore_merges || (whole_newline_runs && word.find_first_not_of('\n') == word.npos)) {
    if (TokenId id = vocab_->Find(word); id != kNoToken) {
      out.push_back(id);
      return;
    }
  }
  struct Sym {
    TokenId id;
    int32_t prev, next;
    bool alive;
  };
  std::vector<Sym> syms;
  syms.reserve(word.size());
  auto push = [&](TokenId id) {
    const int32_t n = static_cast<int32_t>(syms.size());
    syms.push_back({id, n - 1, n + 1, true});
  };
  for (size_t i = 0; i < word.size();) {
    const size_t n = std::min(Utf8Len(static_cast<uint8_t>(word[i])), word.size() - i);
    const std::string_view ch = word.substr(i, n);
    TokenId id = vocab_->Find(ch);
    if (id != kNoToken) {
      push(id);
    } else {
      bool bytes_ok = byte_fallback;
      for (size_t k = 0; bytes_ok && k < n; ++k)
        bytes_ok = vocab_->byte_ids[static_cast<uint8_t>(ch[k])] != kNoToken;
      if (bytes_ok) {
        for (size_t k = 0; k < n; ++k) push(vocab_->byte_ids[static_cast<uint8_t>(ch[k])]);
      } else if (unk != kNoToken) {
        if (!(fuse_unk && !syms.empty() && syms.back().id == unk)) push(unk);
      }
    }
    i += n;
  }
  if (syms.empty()) return;
  syms.back().next = -1;

  // Min-heap on (rank, position).
  struct Cand {
    uint32_t rank;
    int32_t pos;
    TokenId result;
    bool operator>(const Cand& o) const {
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  std::priority_queue<Cand, std::vector<Cand>, std::greater<Cand>> heap;
  auto consider = [&](int32_t left) {
    if (left < 0) return;
    const int32_t right = syms[left].next;
    if (right < 0) return;
    auto it = merges_.find(Key(syms[left].id, syms[right].id));
    if (it != merges_.end()) heap.push({it->second.rank, left, it->second.result});
  };
  for (int32_t i = 0; i + 1 < static_cast<int32_t>(syms.size()); ++i) consider(i);
  while (!heap.empty()) {
    const Cand c = heap.top();
    heap.pop();
    Sym& l = syms[c.pos];
    if (!l.alive || l.next < 0) continue;
    Sym& r = syms[l.next];
    auto it = merges_.find(Key(l.id, r.id));
    if (it == merges_.end() || it->second.result != c.result) continue;  // stale
    l.id = c.result;
    r.alive = false;
    l.next = r.next;
    if (r.next >= 0) syms[r.next].prev = c.pos;
    consider(l.prev);
    consider(c.pos);
  }
  for (int32_t i = 0; i >= 0; i = syms[i].next) out.push_back(syms[i].id);
}

}  // namespace uaii::tok
