// A decode stage's matmuls as ONE pool job.
//
// Decoding one token, a layer stage multiplies one activation row by several
// resident matrices (Q, K and V; gate and up). One pool job per matmul would cost a
// dispatch and a barrier each, and two threads that start and finish each small
// matrix together. Here the union of the stage's output rows is cut into grains of
// about equal weight bytes (whole 16-row groups, the interleaved layout's unit, so a
// grain's rows are one contiguous stream of the matrix), and the threads claim grains
// from a shared counter until none is left: one dispatch per stage, and a thread that
// starts late or is preempted leaves its grains to the other instead of making it
// wait. A gated stage (gate, up -> silu/gelu(gate) * up) applies the activation to a
// grain's rows inside the same grain.
//
// Results are bit-identical to one Linear per matrix, for any thread count and any
// grain: each output element is still one dot product of the same row against the
// same activation, quantized the same way (MatMul's contract, kernels/matmul.h);
// grains split output rows, never a reduction. The activation row is prepared once
// per stage and weight type, interleaved or row-major, before the grains run (then
// only read).
#pragma once
#include <cstdint>

#include "absl/status/status.h"
#include "kernels/thread_pool.h"
#include "runtime/weights.h"

namespace uaii::backends::cpu {

using runtime::BoundWeight;

// One matrix of a stage and where its output row goes: y [out] = W [out, in] . x [in].
struct StageMatmul {
  const BoundWeight* w;
  float* y;
};

// True when these matrices can run as one stage on `x`: all resident (read through
// the mapping or their interleaved copy), 2-D, same `in`. A run with a weight source
// (RunContext::weights) reads them through it instead, never as a stage.
bool CanRunStage(const StageMatmul* parts, int n_parts);

// y_k = W_k x for every part, as one pool job (pool may be null: inline).
absl::Status StageLinear(const StageMatmul* parts, int n_parts, const float* x, ThreadPool* pool);

// Gated activation of a gate/up pair (cpu_ops.h Swiglu / Geglu).
enum class StageAct { kSwiglu, kGeglu };

// y = act(gate x) * (up x), rows split as above; `up_rows` is scratch of up's `out`
// floats. gate and up must have the same shape.
absl::Status StageGated(const BoundWeight& gate, const BoundWeight& up, StageAct act, const float* x,
                        float* y, float* up_rows, ThreadPool* pool);

}  // namespace uaii::backends::cpu
