// Storage-first weights for one session: the storage plan (storage/plan.h) applied to
// a bound graph. Pinned tensors are read once with pread into owned memory; streamed
// tensors stay on disk as file#tensor references and are read, whole or in row
// slices, into the staging buffers of a StagingPipeline while the previous slice
// computes. Nothing is read through the memory mapping, so resident memory is the
// pinned bytes + staging + KV + activations, whatever the file size.
//
// Row slices keep results exact: a matmul's output rows are independent dot products
// (kernels/matmul.h), so computing rows [r0, r1) from a slice gives the same bits as
// the whole matrix. An embedding lookup reads only the rows it needs.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "runtime/moe_cache.h"
#include "runtime/weight_source.h"
#include "runtime/weights.h"
#include "storage/plan.h"
#include "storage/staging.h"

namespace uaii::runtime {

// The plan's inputs from a graph: every weight with its role and how ops read it.
storage::PlanInputs PlanInputsFromGraph(const ir::Graph& g, const WeightSet& weights);

class StreamedWeights : public WeightSource {
 public:
  // `inputs` must be PlanInputsFromGraph(g, weights) and `plan` its plan. Reads the
  // pinned tensors now.
  static absl::StatusOr<std::unique_ptr<StreamedWeights>> Create(const ir::Graph& g, const WeightSet& weights,
                                                                 const storage::PlanInputs& inputs,
                                                                 const storage::StoragePlan& plan,
                                                                 const std::function<void(uint64_t, uint64_t)>& progress = nullptr);

  const uint8_t* Resident(const BoundWeight& w) const override;
  absl::StatusOr<Matrix> Held(const BoundWeight& w) const override;
  absl::Status ForEachRowSlice(const BoundWeight& w, SliceFn fn) override;
  absl::Status ReadRows(const BoundWeight& w, const int32_t* ids, int64_t n, uint8_t* dst) override;

  storage::StagingStats stats() const;
  storage::FileIoCounters file_counters() const { return files_.counters(); }  // direct vs page-cache bytes
  // Expert banks (storage::Residency::kExpertLru) are not read at Create; their routed
  // slices go through this LRU (runtime/moe_cache.h), sized by the plan.
  ExpertCache* Experts() override { return experts_.get(); }
  ExpertCacheStats expert_stats() const { return experts_ ? experts_->stats() : ExpertCacheStats{}; }

 private:
  struct Entry {
    bool pinned = true;
    bool interleaved = false;     // pinned bytes repacked for the group kernels
    storage::AlignedBytes bytes;  // pinned
    const uint8_t* borrowed = nullptr;  // pinned, not file-backed (loader-converted bytes)
    int file = 0;                 // streamed
    int64_t rows_per_slice = 0;
    int64_t first_chunk = -1;     // first slice in the staging sequence
  };
  storage::FileSet files_;
  std::map<const BoundWeight*, Entry> entries_;
  std::vector<const BoundWeight*> chunk_owner_;  // per sequence chunk
  std::unique_ptr<storage::StagingPipeline> pipeline_;
  size_t next_chunk_ = 0;
  std::unique_ptr<ExpertCache> experts_;
};

}  // namespace uaii::runtime
