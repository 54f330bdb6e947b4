// The storage plan: per weight tensor, pinned (read once into owned memory) or
// streamed (read from disk into a staging buffer each time it is used, whole or in
// row slices), under a resolved memory preset (ARCHITECTURE.md, "Memory presets").
//
// Pin order: every element-wise weight (norms, biases, rope factors: the kernels read
// them as f32 in place) and the final norm always; then embeddings, lm_head and the
// first N layers while pinned + staging + KV + activations fit the budget. Adding in
// that order is the same as starting from everything pinned and dropping the last
// layers first, then lm_head, then embeddings. The plan fails closed only when the
// budget cannot hold the minimum: the always-pinned weights, the staging buffers at
// their minimal slice, the KV cache at its window and the activations.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/presets.h"

namespace uaii::storage {

// kPerLayerEmbedding: Gemma 4's per_layer_token_embd, a table as large as several
// layers of which a token reads one row: under a budget it always streams by row
// (never pinned), the storage-first case of a weight read sparsely.
enum class TensorRole { kElementwise, kEmbedding, kLmHead, kLayer, kPerLayerEmbedding, kOther };

struct PlanTensor {
  std::string name;          // graph tensor name (the GGUF name)
  uint64_t bytes = 0;
  uint64_t row_bytes = 0;    // one output row (matmul) / one looked-up row (embed)
  int64_t rows = 0;
  TensorRole role = TensorRole::kOther;
  int layer = -1;            // blk.N, kLayer only
  bool matmul = false;       // read by a matmul (every row, every token)
  bool embed = false;        // read by an embedding lookup (only the looked-up rows)
  // An expert bank (moe_ffn inputs 2..4, [n_expert, rows, cols]): kExpertLru, never
  // pinned or staged; storage/expert_plan.h.
  int64_t n_expert = 0;
  int64_t expert_used = 0;       // experts per token as run
  int64_t expert_used_file = 0;  // the file's expert_used_count
};

// Role from the GGUF tensor name and how the graph uses it.
TensorRole RoleOf(const std::string& name, bool elementwise, int* layer);

struct PlanInputs {
  std::vector<PlanTensor> tensors;
  uint64_t kv_bytes = 0;          // the KV cache as the session allocates it
  uint64_t activation_bytes = 0;  // largest live activations of a prefill chunk
};

enum class Residency { kPinned, kStreamed, kExpertLru };

struct StoragePlan {
  Preset preset = Preset::kNone;
  uint64_t budget_bytes = 0;            // 0: unlimited
  bool streaming = false;
  std::vector<Residency> residency;     // per PlanInputs::tensors entry
  std::vector<int64_t> rows_per_slice;  // per tensor; == rows when read whole
  uint64_t pinned_bytes = 0;
  int pinned_layers = 0;
  int n_layers = 0;
  bool embeddings_pinned = true;
  bool lm_head_pinned = true;
  uint64_t streamed_bytes = 0;          // total bytes of streamed tensors
  uint64_t streamed_bytes_per_token = 0;// read from disk per decoded token
  int staging_buffers = 0;
  uint64_t staging_bytes = 0;           // each
  uint64_t kv_bytes = 0;
  uint64_t activation_bytes = 0;
  uint64_t minimum_bytes = 0;           // the smallest budget this model can run in
  uint64_t expected_peak_bytes = 0;     // pinned + staging + KV + activations (+ expert LRU)
  // Expert LRU (storage/expert_plan.h); all zero without expert banks.
  uint64_t expert_bytes = 0;            // all expert banks (on disk, not in pinned / streamed)
  uint64_t expert_cache_bytes = 0;      // LRU capacity
  uint64_t expert_step_bytes = 0;       // one layer's top-k experts: the LRU's minimum
  uint64_t expert_bytes_per_token = 0;  // read per decoded token when every expert misses
  uint64_t expert_bytes_per_token_file_k = 0;  // the same at the file's top-k
  int64_t moe_top_k = 0, moe_top_k_file = 0;
  bool expert_prefetch = false;         // read ahead the next layer's likely experts (SessionOptions)
};

// Slices hold at least this many rows (the matmul threads split a slice's rows).
constexpr int64_t kMinSliceRows = 32;
// Staging buffers are not made larger than this: beyond it, bigger reads do not go faster.
constexpr uint64_t kMaxStagingBytes = uint64_t{64} << 20;

absl::StatusOr<StoragePlan> PlanStorage(const PlanInputs& in, const ResolvedPreset& preset);

std::string FormatBytes(uint64_t bytes);  // "1.50 GiB", "12.0 MiB", "512 B"

}  // namespace uaii::storage
