// KV cache in f16, as llama.cpp keeps it by default (type_k = type_v = F16). Cell c
// holds absolute position c (one sequence).
//   K: [layer][cell][kv_head][head_dim]      (a key row is contiguous)
//   V: [layer][kv_head][head_dim_v][cell]    (transposed, like llama.cpp's non-flash
//                                            v_trans layout: a dot over cells is contiguous)
// Unwritten cells are zero so padded dot products add exact zeros.
#pragma once
#include <cstdint>
#include <vector>

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
  KvCache(const std::vector<KvLayerShape>& layers, int64_t n_ctx);

  int64_t n_ctx() const { return n_ctx_; }
  int64_t n_cells() const { return n_cells_; }
  const KvLayerShape& shape(int layer) const { return layers_[layer]; }

  uint16_t* K(int layer, int64_t cell) { return k_[layer].data() + cell * layers_[layer].n_head_kv * layers_[layer].head_dim_k; }
  // Row of cells for (kv_head, dim).
  uint16_t* Vt(int layer, int64_t kv_head, int64_t d) {
    return v_[layer].data() + (kv_head * layers_[layer].head_dim_v + d) * n_cells_;
  }
  // Zeroes cells [from, n_cells): forgetting positions keeps padded dots exact.
  void Clear(int64_t from);

 private:
  std::vector<KvLayerShape> layers_;
  int64_t n_ctx_;
  int64_t n_cells_;
  std::vector<std::vector<uint16_t>> k_, v_;
};

}  // namespace uaii::runtime
