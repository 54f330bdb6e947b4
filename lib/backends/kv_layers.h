// The KV cache layers a program's attention ops declare (every backend builds the same
// table): attention(q, k, v) with attribute `layer` owns that cache layer and fixes its
// shape; attention(q) alone reads a layer an earlier op owns (Gemma 4's shared-KV
// layers reuse an earlier layer's keys and values instead of storing their own).
#pragma once
#include <vector>

#include "absl/status/status.h"
#include "ir/graph.h"
#include "runtime/kv_cache.h"
#include "util/str_cat.h"

namespace uaii::backends {

// A shared-KV read of op.layer with query q [T, Hq, D]: the layer must be owned by an
// earlier op, with key and value heads of q's size and a head count dividing Hq.
inline absl::Status CheckSharedKvRead(const ir::Op& op, const std::vector<runtime::KvLayerShape>& owned,
                                      const ir::Shape& q) {
  const auto layer = static_cast<size_t>(op.Int("layer"));
  if (layer >= owned.size() || owned[layer].n_head_kv == 0)
    return absl::InvalidArgumentError(StrCat("op '", op.name, "' reads the KV cache of layer ", layer,
                                             ", which no earlier attention op writes"));
  const runtime::KvLayerShape& kl = owned[layer];
  if (kl.head_dim_k != q[2] || kl.head_dim_v != q[2] || q[1] % kl.n_head_kv != 0)
    return absl::InvalidArgumentError(StrCat("op '", op.name, "': query heads ", q[1], " x ", q[2],
                                             " do not fit the KV cache of layer ", layer, " (", kl.n_head_kv,
                                             " heads, key ", kl.head_dim_k, ", value ", kl.head_dim_v, ")"));
  return absl::OkStatus();
}

}  // namespace uaii::backends
