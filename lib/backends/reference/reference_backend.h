// A second backend, to hold the seam and the CPU backend to account: every op in
// plain scalar code, written from the op definitions (docs/ir.md), not from the CPU
// backend's kernels. Matmuls run the kernels' scalar references (kernels/vec_dot.h
// VecDotRef on activations quantized by kernels/quantize_act.h, ggml's vec_dot_type);
// norms, RoPE (with YaRN and factor tensors), softmax, attention and MoE routing are
// computed in double with libm's exp / tanh, and GELU in its exact tanh form (the CPU
// backend goes through ggml's f16 table). K and V go into the session's KV cache in
// its layout (f16), so KV policy (window, sinks, ring) is the runtime's as for any
// backend; attention reads every cell the masks show, in any order.
//
// The whole-model logits therefore equal the CPU backend's within float tolerance,
// not bit for bit (tests/backends/reference_parity_test.cpp). It is slow and meant
// for tests: device "reference", registered by whoever wants it (RegisterBackend).
// Weights are read from their bindings; a run with a weight source (a storage plan)
// is refused.
#pragma once
#include "backends/backend.h"

namespace uaii::backends::reference {

class ReferenceBackend final : public Backend {
 public:
  std::string name() const override { return "reference"; }
  std::string device() const override { return "reference"; }
  Capabilities capabilities() const override;
  bool SupportsOp(const std::string& op_type) const override;
  absl::StatusOr<std::unique_ptr<DeviceBuffer>> Allocate(uint64_t bytes) const override;
  absl::StatusOr<std::unique_ptr<Program>> Compile(const ir::Graph& g,
                                                   const runtime::WeightSet& weights) const override;
};

// The process's instance, registered on first call (device "reference").
const ReferenceBackend& Registered();

}  // namespace uaii::backends::reference
