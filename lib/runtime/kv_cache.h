// KV cache in f16, as llama.cpp keeps it by default (type_k = type_v = F16). Cell c
// holds absolute position c (one sequence).
//   K: [layer][cell][kv_head][head_dim]      (a key row is contiguous)
//   V: [layer][kv_head][head_dim_v][cell]    (transposed, like llama.cpp's non-flash
//                                            v_trans layout: a dot over cells is contiguous)
// Unwritten cells are zero so padded dot products add exact zeros.
//
// Resident window (ARCHITECTURE.md, "runtime"): with window W > 0 the cache keeps
// `sinks` attention-sink positions (0 .. sinks-1, never evicted) and a ring of the
// most recent positions; position p >= sinks lives in cell sinks + (p - sinks) % ring.
// Each cell records its absolute position (RoPE was applied at that position), and
// attention at position q reads the sinks and the positions in (q - W, q]. The ring
// holds W + max_batch positions so a batch never overwrites a position one of its own
// rows still attends to. Until the ring wraps, cell == position, so a windowed run is
// bit-identical to an unbounded one.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

namespace uaii::backends {
class DeviceBuffer;  // backends/backend.h
}  // namespace uaii::backends

namespace uaii::runtime {

struct KvLayerShape {
  int64_t n_head_kv = 0;
  int64_t head_dim_k = 0;
  int64_t head_dim_v = 0;
};

class KvCache {
 public:
  // Cells are allocated rounded up to kCellAlign.
  static constexpr int64_t kCellAlign = 32;
  // n_ctx: positions allowed; window 0: one cell per position (unbounded up to n_ctx).
  // `arena`: the session backend's buffer for every layer's K and V (Backend::Allocate
  // of ArenaBytes, zeroed, host-addressable); without one, host memory of the cache's own.
  KvCache(const std::vector<KvLayerShape>& layers, int64_t n_ctx, int64_t window, int64_t sinks, int64_t max_batch,
          std::unique_ptr<backends::DeviceBuffer> arena);
  KvCache(const std::vector<KvLayerShape>& layers, int64_t n_ctx, int64_t window = 0, int64_t sinks = 0,
          int64_t max_batch = 0);
  KvCache(const KvCache&) = delete;  // the arena is the cache's own
  KvCache& operator=(const KvCache&) = delete;
  KvCache(KvCache&&) noexcept;
  KvCache& operator=(KvCache&&) noexcept;
  ~KvCache();

  // Cells a cache of these parameters allocates (the ring when the window bounds it).
  static int64_t CellCount(int64_t n_ctx, int64_t window, int64_t sinks, int64_t max_batch);
  // Bytes of the K and V arena for `cells` cells of these layers (each layer's K and V
  // padded to 64 bytes).
  static uint64_t ArenaBytes(const std::vector<KvLayerShape>& layers, int64_t cells);
  int64_t n_ctx() const { return n_ctx_; }
  int64_t n_cells() const { return n_cells_; }
  const KvLayerShape& shape(int layer) const { return layers_[layer]; }

  uint16_t* K(int layer, int64_t cell) { return k_[layer] + cell * layers_[layer].n_head_kv * layers_[layer].head_dim_k; }
  // Row of cells for (kv_head, dim).
  uint16_t* Vt(int layer, int64_t kv_head, int64_t d) {
    return v_[layer] + (kv_head * layers_[layer].head_dim_v + d) * n_cells_;
  }
  // Zeroes the cells of positions >= from: forgetting positions keeps padded dots exact.
  void Clear(int64_t from);

  // Cells a decode step at position qp reads: a multiple of kCellAlign covering qp,
  // every cell once the window's ring has wrapped (runtime/attention.cpp).
  int64_t DecodeCells(int64_t qp) const {
    return std::min(n_cells_, (qp + 1 + kCellAlign - 1) / kCellAlign * kCellAlign);
  }

  // The cells a query at qp may attend to under a sliding-window mask of `window`
  // positions (0: none), at most two spans in cell order, each [begin, end) with both
  // ends multiples of kCellAlign. Every cell outside them holds a position the masks
  // hide, so attention may skip those cells (runtime/attention.cpp). kCellAlign is a
  // multiple of the F16 dot's 32-element step (kernels/vec_dot.h), so the cells kept
  // keep their lanes, and the skipped products, weight 0 times a finite V, were exact
  // zeros added to accumulators that start at +0 (which never become -0): the dots and
  // the softmax's sum are bit-identical with or without them.
  //  - No window, or one that shows position 0: the cells [0, DecodeCells(qp)).
  //  - Positions in their own cells (no resident ring, or it has not wrapped: qp <
  //    n_cells; a batch's wrapped positions in low cells are later than qp): from the
  //    block of the window's first position on. The sinks, cells 0-3, are then hidden
  //    by the window too.
  //  - A wrapped ring: the window's positions are the newest `window` ones, a cyclic run
  //    of ring cells, so one span or two (the run's end at the ring's start and its
  //    start at the ring's end); every cell when the window is longer than the ring or
  //    shows a sink.
  struct Span {
    int64_t begin = 0, end = 0;
  };
  struct Attended {
    Span span[2];
    int count = 1;
    int64_t cells() const { return span[0].end - span[0].begin + (count > 1 ? span[1].end - span[1].begin : 0); }
    // The cell at index j of the spans laid end to end.
    int64_t CellAt(int64_t j) const {
      const int64_t first = span[0].end - span[0].begin;
      return j < first ? span[0].begin + j : span[1].begin + (j - first);
    }
  };
  Attended AttendedCells(int64_t qp, int64_t window) const;

  int64_t window() const { return window_; }
  int64_t sinks() const { return sinks_; }
  // The cell that holds position `pos`.
  int64_t Cell(int64_t pos) const {
    return window_ == 0 || pos < sinks_ ? pos : sinks_ + (pos - sinks_) % (n_cells_ - sinks_);
  }
  // Absolute position held by `cell`, -1 when empty.
  int32_t CellPos(int64_t cell) const { return cell_pos_[cell]; }
  void SetCellPos(int64_t cell, int32_t pos) { cell_pos_[cell] = pos; }
  // Whether a query at `q` attends to a cell holding `pos` (>= 0) under the window.
  bool InWindow(int64_t q, int64_t pos) const { return window_ == 0 || pos < sinks_ || q - pos < window_; }
  uint64_t bytes() const;
  // The backend's buffer holding every layer's K and V (a device backend binds it).
  backends::DeviceBuffer* arena() const { return arena_.get(); }

 private:
  std::vector<KvLayerShape> layers_;
  int64_t n_ctx_;
  int64_t window_ = 0, sinks_ = 0;
  int64_t n_cells_;
  std::vector<int32_t> cell_pos_;
  std::unique_ptr<backends::DeviceBuffer> arena_;  // every layer's K and V (not shared between caches)
  std::vector<uint16_t*> k_, v_;    // each layer's, in arena_
};

}  // namespace uaii::runtime
