#include "runtime/kv_cache.h"

#include <algorithm>

#include "backends/cpu/cpu_backend.h"

namespace uaii::runtime {

namespace {
int64_t RoundCells(int64_t n) { return (n + KvCache::kCellAlign - 1) / KvCache::kCellAlign * KvCache::kCellAlign; }
}  // namespace

KvCache::Attended KvCache::AttendedCells(int64_t qp, int64_t window) const {
  Attended a;
  a.span[0] = {0, DecodeCells(qp)};
  const int64_t first = qp - window + 1;  // the oldest position the window shows
  if (window <= 0 || first <= 0) return a;
  auto down = [](int64_t c) { return c / kCellAlign * kCellAlign; };
  if (window_ == 0 || qp < n_cells_) {
    a.span[0].begin = down(first);
    return a;
  }
  const int64_t ring = n_cells_ - sinks_;
  if (window > ring || first < sinks_) return a;
  const int64_t c_first = Cell(first), c_last = Cell(qp);
  if (c_first <= c_last) {
    a.span[0] = {down(c_first), std::min(n_cells_, RoundCells(c_last + 1))};
    return a;
  }
  // The run wraps: its end at the ring's start, its start at the ring's end.
  const int64_t low_end = RoundCells(c_last + 1), high_begin = down(c_first);
  if (low_end >= high_begin) return a;  // the blocks meet: every cell
  a.span[0] = {0, low_end};
  a.span[1] = {high_begin, n_cells_};
  a.count = 2;
  return a;
}

int64_t KvCache::CellCount(int64_t n_ctx, int64_t window, int64_t sinks, int64_t max_batch) {
  // A window only bounds memory when the ring is smaller than the context.
  const int64_t full = RoundCells(n_ctx);
  if (window <= 0) return full;
  return std::min(full, RoundCells(sinks + window + std::max<int64_t>(max_batch, 1)));
}

namespace {
uint64_t PaddedBytes(int64_t elems) { return (static_cast<uint64_t>(elems) * 2 + 63) / 64 * 64; }
}  // namespace

uint64_t KvCache::ArenaBytes(const std::vector<KvLayerShape>& layers, int64_t cells) {
  uint64_t total = 0;
  for (const auto& l : layers)
    total += PaddedBytes(cells * l.n_head_kv * l.head_dim_k) + PaddedBytes(cells * l.n_head_kv * l.head_dim_v);
  return total;
}

KvCache::KvCache(const std::vector<KvLayerShape>& layers, int64_t n_ctx, int64_t window, int64_t sinks,
                 int64_t max_batch)
    : KvCache(layers, n_ctx, window, sinks, max_batch, nullptr) {}

KvCache::KvCache(KvCache&&) noexcept = default;
KvCache& KvCache::operator=(KvCache&&) noexcept = default;
KvCache::~KvCache() = default;

KvCache::KvCache(const std::vector<KvLayerShape>& layers, int64_t n_ctx, int64_t window, int64_t sinks,
                 int64_t max_batch, std::unique_ptr<backends::DeviceBuffer> arena)
    : layers_(layers), n_ctx_(n_ctx), n_cells_(CellCount(n_ctx, window, sinks, max_batch)) {
  if (n_cells_ < RoundCells(n_ctx)) {
    window_ = window;
    sinks_ = sinks;
  }
  cell_pos_.assign(static_cast<size_t>(n_cells_), -1);
  // Every layer's K and V in one zeroed arena, the backend's (the CPU's is host
  // memory on huge pages: a decode step reads each layer's K and V^T rows from DRAM,
  // and on 4 KiB pages each one was also a TLB miss; docs/performance.md).
  if (!arena) arena = backends::cpu::HostBuffer::Allocate(ArenaBytes(layers_, n_cells_)).value();
  arena_ = std::move(arena);
  uint8_t* at = static_cast<uint8_t*>(arena_->host());
  for (const auto& l : layers_) {
    k_.push_back(reinterpret_cast<uint16_t*>(at));
    at += PaddedBytes(n_cells_ * l.n_head_kv * l.head_dim_k);
    v_.push_back(reinterpret_cast<uint16_t*>(at));
    at += PaddedBytes(n_cells_ * l.n_head_kv * l.head_dim_v);
  }
}

uint64_t KvCache::bytes() const {
  uint64_t b = 0;
  for (const auto& l : layers_) b += static_cast<uint64_t>(n_cells_) * l.n_head_kv * (l.head_dim_k + l.head_dim_v) * 2;
  return b;
}

void KvCache::Clear(int64_t from) {
  if (window_ > 0) {  // ring: cells in any order; clear those holding positions >= from
    for (int64_t c = 0; c < n_cells_; ++c) {
      if (cell_pos_[c] < from) continue;
      cell_pos_[c] = -1;
      for (size_t l = 0; l < layers_.size(); ++l) {
        const auto& s = layers_[l];
        std::fill_n(K(static_cast<int>(l), c), s.n_head_kv * s.head_dim_k, 0);
        for (int64_t r = 0; r < s.n_head_kv * s.head_dim_v; ++r) v_[l][r * n_cells_ + c] = 0;
      }
    }
    return;
  }
  from = std::clamp<int64_t>(from, 0, n_cells_);
  for (int64_t c = from; c < n_cells_; ++c) cell_pos_[c] = -1;
  for (size_t l = 0; l < layers_.size(); ++l) {
    const auto& s = layers_[l];
    std::fill(k_[l] + from * s.n_head_kv * s.head_dim_k, k_[l] + n_cells_ * s.n_head_kv * s.head_dim_k, 0);
    for (int64_t r = 0; r < s.n_head_kv * s.head_dim_v; ++r)
      std::fill(v_[l] + r * n_cells_ + from, v_[l] + (r + 1) * n_cells_, 0);
  }
}

}  // namespace uaii::runtime
