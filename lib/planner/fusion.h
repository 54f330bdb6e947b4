// Graph rewrites that pay on the CPU and keep results bit-identical: each fused op
// runs the very kernels of the ops it replaces, in the same order (executor.cpp), so
// only where intermediates live changes, never a float.
//
//   FuseNormLinear:      y_i = matmul(rms_norm(x, w_norm), W_i) for every matmul that
//                        reads one rms_norm's output  ->  norm_linear(x, w_norm, W_1..W_n)
//                        (Q, K, V become one op; gate and up become one op; the
//                        normalized activation never exists as a graph tensor).
//   FuseGatedActivation: act(gate, up) over a two-output norm_linear -> norm_linear
//                        with attr act = swiglu | geglu (gate and up never leave the op).
#pragma once
#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace uaii::planner {

// Each returns the rewritten graph and the number of rewrites in *count.
absl::StatusOr<ir::Graph> FuseNormLinear(ir::Graph g, int* count);
absl::StatusOr<ir::Graph> FuseGatedActivation(ir::Graph g, int* count);

}  // namespace uaii::planner
