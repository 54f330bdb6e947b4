// The CPU backend's Program: runs a planned graph's ops in validated order on f32
// activations, weights straight from their bindings or through the run context's
// weight source, attention against the KV cache. Activations live in the session's
// workspace: one host arena laid out by the planner's memory plan
// (planner/memory_plan.h: buffers placed by liveness, a reshape sharing its input's),
// planned for the largest batch seen so far and reused, so a warm decode step
// allocates nothing.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/backend.h"
#include "ir/graph.h"

namespace uaii::backends::cpu {

class CpuProgram final : public Program {
 public:
  // Checks that every op is supported on the CPU and every element-wise weight is F32.
  static absl::StatusOr<std::unique_ptr<CpuProgram>> Create(const ir::Graph& g, const runtime::WeightSet& weights);
  // Whether an op type has a CPU implementation.
  static bool Supports(const std::string& op_type);

  const std::vector<runtime::KvLayerShape>& kv_layers() const override { return kv_layers_; }
  int64_t n_outputs_per_row() const override { return out_cols_; }
  std::unique_ptr<Workspace> NewWorkspace() const override;
  absl::Status ReserveWorkspace(Workspace& ws, int64_t tokens, int64_t rows) const override;
  absl::Status Run(const int32_t* tokens, const int32_t* positions, int64_t T, const std::vector<int64_t>& rows,
                   runtime::KvCache& cache, const RunContext& ctx, std::vector<float>* out) const override;
  // One pass over every sequence's tokens: products, norms and activations run over all
  // rows at once (MatMul's results do not depend on the batch), attention and RoPE per
  // sequence against its own cache, so each output equals its own Run's, bit for bit.
  absl::Status RunBatch(std::span<const SequenceRun> seqs, const RunContext& ctx) const override;

  struct Step;  // one compiled op (program.cpp)
  ~CpuProgram() override;

 private:
  CpuProgram() = default;
  class Arena;  // program.cpp
  // Lays `arena` out for batches up to T tokens and R rows (a new memory plan when
  // larger than its present capacity).
  absl::Status Reserve(Arena& arena, int64_t T, int64_t R) const;
  // Run and RunBatch: the sequences' tokens laid end to end in one pass.
  absl::Status RunSequences(std::span<const SequenceRun> seqs, const RunContext& ctx) const;
  ir::Graph graph_;  // what the memory plan is made from
  std::vector<Step> steps_;
  std::vector<ir::Shape> shapes_;                    // per slot
  std::vector<const runtime::BoundWeight*> weight_;  // per slot, null for activations
  int tokens_slot_ = -1, positions_slot_ = -1, logits_slot_ = -1;
  int hidden_slot_ = -1;     // the graph's optional "hidden" output (RunContext::hidden)
  int hidden_in_slot_ = -1;  // its optional "hidden_in" input (RunContext::hidden_in)
  bool external_kv_ = false;  // attends over another model's cache (metadata kv_external)
  int64_t out_cols_ = 0;
  bool logits_direct_ = false;  // the logits slot is the caller's vector (Run), not arena bytes
  std::vector<runtime::KvLayerShape> kv_layers_;
};

}  // namespace uaii::backends::cpu
