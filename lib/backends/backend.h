// The backend seam: what a Session needs from the thing that runs a planned graph.
//
// A Backend names a device, says what it can do, allocates buffers in its memory and
// compiles a planned graph (lib/planner) with its bound weights into a Program. A
// Program runs forward passes: T tokens at their positions against a KV cache, with
// every parameter of the run in an explicit RunContext (no thread-local state), and
// returns the requested rows' logits. lib/runtime keeps the policy (sessions, KV
// window and sinks, storage plans) and reaches kernels only through this interface;
// lib/backends/cpu is the CPU backend, lib/backends/reference a scalar one that tests
// hold the CPU backend against.
//
// Graph contract (lib/models, docs/ir.md): inputs "tokens" and "positions" (I32 [T]),
// output "logits" ([R, n_vocab]), where R = the rows the caller asks for.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "kernels/thread_pool.h"
#include "runtime/kv_cache.h"
#include "runtime/weight_source.h"
#include "runtime/weights.h"

namespace uaii::runtime {
class StepProfile;  // runtime/step_profile.h
}  // namespace uaii::runtime

namespace uaii::backends {

// Memory a backend allocated. `host()` is the bytes' address when the host can
// address them (the CPU's, host memory), else null; a device backend copies through
// its own calls.
class DeviceBuffer {
 public:
  virtual ~DeviceBuffer() = default;
  virtual uint64_t bytes() const = 0;
  virtual void* host() = 0;
};

struct Capabilities {
  bool gpu = false;           // a GPU backend ("auto" considers only these)
  bool real_device = false;   // a device is present and usable (not an emulation or a missing driver)
  bool host_memory = true;    // DeviceBuffer::host() is non-null
  bool quantized_weights = true;  // runs matmuls on packed weights in their file type
};

// A program's per-session memory (the CPU program's: its activation arena, laid out
// by the planner's memory plan). Made by Program::NewWorkspace, used by one run at a time.
class Workspace {
 public:
  virtual ~Workspace() = default;
};

// Everything a Program's run depends on besides its inputs, passed explicitly.
struct RunContext {
  ThreadPool* pool = nullptr;                 // null: the calling thread only
  runtime::WeightSource* weights = nullptr;   // null: weights read through their bindings (the mapping)
  int64_t moe_top_k = 0;                      // moe_ffn experts per token, 0: the file's (exact)
  runtime::StepProfile* profile = nullptr;    // per-step timings, null: off
  Workspace* workspace = nullptr;             // this program's NewWorkspace(); null: the run makes its own
  // The graph's "hidden" output (the rows the head reads: the post-final-norm hidden
  // state a drafter continues from, docs/speculative.md), [rows, n_hidden], written
  // here when set: one sequence only, and only graphs that declare it (gemma4).
  std::vector<float>* hidden = nullptr;
  // The graph's "hidden_in" input, [T, n_hidden] (a drafter's: the target's hidden rows).
  const float* hidden_in = nullptr;
};

// One sequence's part of a batched forward pass (Program::RunBatch): its tokens at its
// positions against its own KV cache; `rows` (indices into [0, T)) select the output
// rows written to *out as Run writes them.
struct SequenceRun {
  const int32_t* tokens = nullptr;
  const int32_t* positions = nullptr;
  int64_t T = 0;
  const std::vector<int64_t>* rows = nullptr;
  runtime::KvCache* cache = nullptr;
  std::vector<float>* out = nullptr;
};

class Program {
 public:
  virtual ~Program() = default;
  // KV layer shapes the graph's attention ops need (index = attention "layer").
  virtual const std::vector<runtime::KvLayerShape>& kv_layers() const = 0;
  virtual int64_t n_outputs_per_row() const = 0;
  // Memory for one session's runs (grown as larger batches come, then reused).
  virtual std::unique_ptr<Workspace> NewWorkspace() const = 0;
  // Grows `ws` now for runs of up to `tokens` tokens and `rows` output rows, so that
  // such runs later lay nothing out (a server's batched passes: memory that does not
  // creep up as larger batches happen to come). This default does nothing.
  virtual absl::Status ReserveWorkspace(Workspace& ws, int64_t tokens, int64_t rows) const {
    (void)ws, (void)tokens, (void)rows;
    return absl::OkStatus();
  }
  // Runs T tokens at `positions`; `rows` (indices into [0, T)) select the output rows.
  // out: [rows.size(), n_outputs_per_row()]. A Program is shared by every session of
  // a model: Run may be called from several threads at once, each with its own cache
  // and workspace.
  virtual absl::Status Run(const int32_t* tokens, const int32_t* positions, int64_t T,
                           const std::vector<int64_t>& rows, runtime::KvCache& cache, const RunContext& ctx,
                           std::vector<float>* out) const = 0;
  // Runs several sequences (each with its own cache, none twice) as one forward pass:
  // the products read each weight once for all of their tokens, which is what makes
  // a server's concurrent decode steps cheaper together than apart. Each sequence's
  // output is the bits its own Run gives. This default runs them one after another;
  // the first failure stops it and is returned.
  virtual absl::Status RunBatch(std::span<const SequenceRun> seqs, const RunContext& ctx) const {
    for (const SequenceRun& s : seqs)
      if (auto st = Run(s.tokens, s.positions, s.T, *s.rows, *s.cache, ctx, s.out); !st.ok()) return st;
    return absl::OkStatus();
  }
};

// What a device backend's compile is told by the session.
struct CompileOptions {
  // The device memory the model's weights may take (0: the device's own default); the
  // weights beyond it stay in host memory the device reads across the bus.
  uint64_t device_memory_bytes = 0;
};

// Where a device backend puts a model's weights (DevicePlacement of the plan, the
// dry run and the session's report). All zero for the CPU.
struct DevicePlacement {
  uint64_t budget_bytes = 0;          // the device memory the weights may take
  uint64_t resident_bytes = 0;        // weights in device memory
  uint64_t host_bytes = 0;            // weights in host memory, read by the device over the bus
  int host_weights = 0;               // how many weights that is
  // The device buffer the host weights of products stream through, copied in just
  // before each use (0: read in place across the bus: lookups and expert banks always,
  // everything when a stage would not fit half the budget).
  uint64_t staging_bytes = 0;
  int requantized_weights = 0;        // types without a device kernel, requantized at upload
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;    // "cpu", "reference", ...
  virtual std::string device() const = 0;  // what SessionOptions::device names it by
  virtual Capabilities capabilities() const = 0;
  virtual bool SupportsOp(const std::string& op_type) const = 0;
  // Fails naming the size when the memory cannot be had.
  virtual absl::StatusOr<std::unique_ptr<DeviceBuffer>> Allocate(uint64_t bytes) const = 0;
  // Fails naming the first op SupportsOp rejects, or an input the backend cannot read.
  virtual absl::StatusOr<std::unique_ptr<Program>> Compile(const ir::Graph& g,
                                                           const runtime::WeightSet& weights) const = 0;
  // A device backend's compile under `options`; this default ignores them.
  virtual absl::StatusOr<std::unique_ptr<Program>> Compile(const ir::Graph& g, const runtime::WeightSet& weights,
                                                           const CompileOptions& options) const {
    (void)options;
    return Compile(g, weights);
  }
  // Where Compile(g, weights, options) would put the weights, without uploading any
  // (the dry run). This default: nothing on a device.
  virtual absl::StatusOr<DevicePlacement> PlanPlacement(const ir::Graph& g, const runtime::WeightSet& weights,
                                                        const CompileOptions& options) const {
    (void)g, (void)weights, (void)options;
    return DevicePlacement{};
  }
};

}  // namespace uaii::backends
