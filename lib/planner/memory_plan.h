// Memory plan: activation buffers placed in one arena by liveness, the arena the CPU
// backend's program runs in (backends/cpu/program.h). Every activation is f32; a
// reshape shares its input's buffer; scratch a fused op keeps inside itself
// (norm_linear: the normalized rows, then the `up` half with an activation) counts as
// a buffer that lives for that one step. Each buffer is padded to kBufferAlign bytes,
// so every one starts on a cache line (vector loads; threads writing neighbouring
// buffers share no line). A buffer's size only grows with T and R, so a placement at
// (T, R) holds for any smaller batch.
//
// Placement is greedy best-fit by decreasing size: a buffer goes at the lowest offset
// where it overlaps no placed buffer that is alive at the same time. `peak_live_bytes`
// is the lower bound (the most bytes alive at one step); `arena_bytes` what the
// placement needs; `no_reuse_bytes` the sum of every buffer (nothing reused).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace uaii::planner {

inline constexpr uint64_t kBufferAlign = 64;

struct BufferSlot {
  std::string tensor;  // the root tensor (aliases through reshape share it)
  uint64_t bytes = 0;
  uint64_t offset = 0;
  int first = 0, last = 0;  // steps (positions in execution order), inclusive
};

struct MemoryPlan {
  int64_t tokens = 0;  // T the sizes were evaluated at
  int64_t rows = 0;    // R
  std::vector<BufferSlot> buffers;
  uint64_t peak_live_bytes = 0;
  uint64_t arena_bytes = 0;
  uint64_t no_reuse_bytes = 0;
};

absl::StatusOr<MemoryPlan> PlanMemory(const ir::Graph& g, int64_t tokens, int64_t rows);

}  // namespace uaii::planner
