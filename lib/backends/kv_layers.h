// The KV cache layers a program's attention ops declare (every backend builds the same
// table): attention(q, k, v) with attribute `layer` owns that cache layer and fixes its
// shape; attention(q) alone reads a layer an earlier op owns (Gemma 4's shared-KV
// layers reuse an earlier layer's keys and values instead of storing their own).
#pragma once
#include <cstdio>
#include <string>
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

// A drafter's graph attends over another model's KV cache (the gemma4 assistant over
// its target's): its metadata "kv_external" lists those layers as
// "layer:kv_heads:key_dim:value_dim" separated by ';'. Into `layers` (index = layer);
// false when the entry is malformed.
inline bool ReadExternalKvLayers(const ir::Graph& g, std::vector<runtime::KvLayerShape>* layers) {
  for (const auto& [key, value] : g.metadata) {
    if (key != "kv_external") continue;
    size_t at = 0;
    while (at < value.size()) {
      size_t end = value.find(';', at);
      if (end == std::string::npos) end = value.size();
      long long l = -1, h = 0, dk = 0, dv = 0;
      if (std::sscanf(value.substr(at, end - at).c_str(), "%lld:%lld:%lld:%lld", &l, &h, &dk, &dv) != 4 || l < 0 ||
          l > 4096 || h <= 0 || dk <= 0 || dv <= 0)
        return false;
      if (layers->size() <= static_cast<size_t>(l)) layers->resize(static_cast<size_t>(l) + 1);
      (*layers)[static_cast<size_t>(l)] = runtime::KvLayerShape{h, dk, dv};
      at = end + 1;
    }
  }
  return true;
}

}  // namespace uaii::backends
