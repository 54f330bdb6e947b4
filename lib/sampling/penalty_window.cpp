#include "sampling/penalty_window.h"

#include <algorithm>

namespace uaii::sampling {

void PenaltyWindow::Push(int32_t token) {
  if (capacity_ == 0) return;
  if (capacity_ > 0 && tokens_.size() >= static_cast<size_t>(capacity_)) {
    const int32_t old = tokens_.front();
    tokens_.pop_front();
    auto it = counts_.find(old);
    if (--it->second == 0) counts_.erase(it);
  }
  tokens_.push_back(token);
  ++counts_[token];
}

void PenaltyWindow::Clear() {
  tokens_.clear();
  counts_.clear();
}

std::vector<TokenCount> PenaltyWindow::Counts() const {
  std::vector<TokenCount> out;
  out.reserve(counts_.size());
  for (const auto& [id, n] : counts_) out.push_back(TokenCount{id, n});
  std::sort(out.begin(), out.end(), [](const TokenCount& a, const TokenCount& b) { return a.id < b.id; });
  return out;
}

int32_t PenaltyWindow::CountOf(int32_t token) const {
  auto it = counts_.find(token);
  return it == counts_.end() ? 0 : it->second;
}

}  // namespace uaii::sampling
