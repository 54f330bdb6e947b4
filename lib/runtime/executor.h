// The CPU interpreter of an IR graph: runs the ops in validated order on f32
// activation buffers, weights straight from their mappings, attention against the
// KV cache. Buffers are released after their last use (reshape shares its input's).
//
// Graph contract (lib/models): inputs "tokens" and "positions" (I32 [T]), output
// "logits" ([R, n_vocab]), where R = the rows the caller asks for.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "kernels/thread_pool.h"
#include "runtime/kv_cache.h"
#include "runtime/weight_source.h"
#include "runtime/weights.h"

namespace uaii::runtime {

class Executor {
 public:
  // Checks that every op is supported on the CPU and every element-wise weight is F32.
  static absl::StatusOr<std::unique_ptr<Executor>> Create(const ir::Graph& g, const WeightSet& weights);

  // KV layer shapes the graph's attention ops need (index = attention "layer").
  const std::vector<KvLayerShape>& kv_layers() const { return kv_layers_; }
  int64_t n_outputs_per_row() const { return out_cols_; }

  // Runs T tokens at `positions`; `rows` (indices into [0, T)) select the output rows.
  // `source` (may be null: the mapping) serves weight bytes (storage-planned sessions).
  // out: [rows.size(), n_outputs_per_row()].
  absl::Status Run(const int32_t* tokens, const int32_t* positions, int64_t T, const std::vector<int64_t>& rows,
                   KvCache& cache, ThreadPool* pool, std::vector<float>* out,
                   WeightSource* source = nullptr) const;

  struct Step;  // one compiled op (executor.cpp)
  ~Executor();

 private:
  Executor() = default;
  std::vector<Step> steps_;
  std::vector<ir::Shape> shapes_;     // per slot
  std::vector<const BoundWeight*> weight_;  // per slot, null for activations
  int tokens_slot_ = -1, positions_slot_ = -1, logits_slot_ = -1;
  int64_t out_cols_ = 0;
  std::vector<KvLayerShape> kv_layers_;
};

}  // namespace uaii::runtime
