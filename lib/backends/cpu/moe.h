// Mixture-of-experts feed-forward (the IR op "moe_ffn"), as llama.cpp's
// llm_graph_context::build_moe_ffn computes it on the CPU:
//
//   logits[t]  = gate_inp . rx[t]                           [n_expert]  (ggml_mul_mat; rx = router_x or x)
//   probs[t]   = softmax(logits[t]) | sigmoid(logits[t])    [n_expert]
//   sel[t]     = argsort_desc(probs[t] (+ exp_probs_b))[:k]  [k]        (ggml_argsort_top_k)
//   w[t]       = probs[t][sel[t]]; if norm_w: w /= max(sum(w), 2^-14); if w_scale: w *= w_scale
//   y[t]       = sum_{j=0..k-1, in order} w[t][j] * (s_e * down_e(act(gate_e x[t]) * up_e x[t])),  e = sel[t][j]
//                (act silu or gelu; s_e = down_scale[e], 1 without it: Gemma 4's per-expert scale)
//   (+ shared expert: y[t] += ffn_shexp(x[t]) * sigmoid(gate_inp_shexp . x[t]))
//
// Experts are packed banks [n_expert, rows, cols] (GGUF ffn_{gate,up,down}_exps,
// 3-D in ggml order; or ffn_gate_up_exps [n_expert, 2F, E], one product per expert
// whose first F columns are the gate's and the rest the up's, as llama.cpp splits it): expert e is the byte slice [e * bytes / n_expert, +bytes / n_expert)
// (`#e=N`), multiplied in its file type by kernels MatMul. Only the selected
// experts' slices are read. Tokens routed to the same expert are batched into one
// MatMul per step; each row's result is independent of its batch (matmul.h), so
// results do not depend on how a prompt is chunked.
//
// Exact by default: top-k is always the file's expert_used_count and experts are
// never dequantized or re-quantized.
#pragma once
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "ir/graph.h"
#include "kernels/thread_pool.h"
#include "runtime/weights.h"

namespace uaii::runtime {
class ExpertCache;  // runtime/moe_cache.h
}  // namespace uaii::runtime

namespace uaii::backends::cpu {

using runtime::BoundWeight;
using runtime::ExpertCache;


enum class MoeGating { kSoftmax, kSigmoid };

struct MoeParams {
  int64_t n_expert = 0;
  int64_t n_expert_used = 0;
  MoeGating gating = MoeGating::kSoftmax;
  bool norm_w = false;   // renormalise the selected weights to sum 1
  float w_scale = 0;     // multiply the weights (0 or 1 = none)
  bool gelu = false;     // experts' activation: GELU (Gemma 4) instead of SiLU
  bool fused_gate_up = false;  // up_exps is one gate|up bank [n_expert, 2F, E]; no gate_exps
};

struct MoeWeights {
  const BoundWeight* gate_inp = nullptr;     // [n_expert, E]
  const BoundWeight* up_exps = nullptr;      // [n_expert, F, E]; fused: [n_expert, 2F, E], gate rows then up
  const BoundWeight* gate_exps = nullptr;    // [n_expert, F, E]; null when fused
  const BoundWeight* down_exps = nullptr;    // [n_expert, E, F]
  const float* exp_probs_b = nullptr;        // [n_expert] selection bias, optional
  const BoundWeight* up_shexp = nullptr;     // [Fs, E], optional shared expert
  const BoundWeight* gate_shexp = nullptr;   // [Fs, E]
  const BoundWeight* down_shexp = nullptr;   // [E, Fs]
  const BoundWeight* gate_inp_shexp = nullptr;  // [E]: sigmoid gate of the shared expert, optional
  const float* router_x = nullptr;           // [T, E]: the router's input, optional (else x)
  const float* down_scale = nullptr;         // [n_expert]: each expert's output scale, optional
  // When set, expert slices come from this LRU (read from the banks' files) instead
  // of the banks' `data`: the routed experts are acquired in index (= file-offset)
  // order, in as few groups as fit the capacity (one for a decode step).
  ExpertCache* cache = nullptr;
};

// Expert `e` of a packed bank [n_expert, rows, cols]: a 2-D view [rows, cols] of
// its byte slice (data and file offset advanced by e * bytes / n_expert).
BoundWeight ExpertSlice(const BoundWeight& bank, int64_t e);

// Routing only: for each of T rows of `probs` ([T, n_expert], after the gating
// function), the selected experts (argsort descending as ggml's CPU argsort:
// std::sort of 0..n-1 by probs[a] > probs[b], whose tie order this reproduces) and
// their weights. `bias` (optional) is added for selection only.
void MoeRoute(const MoeParams& p, const float* probs, const float* bias, int64_t T, int32_t* sel, float* w);

// Gating function on [T, n_expert] logits, in place: softmax as ggml_soft_max_f32
// (exp as ggml_v_expf in groups of 16, expf for the tail, sums in double) or
// sigmoid 1 / (1 + expf(-x)).
void MoeGate(MoeGating g, float* logits, int64_t T, int64_t n_expert);

// Executor set-up of a "moe_ffn" op: `in` are its input slots, `weights[slot]` the
// bound weight or null. Checks that router, banks and shared-expert tensors are bound
// weights with a MatMul kernel, that each bank splits into n_expert equal slices,
// and that the selection bias is F32; fills `p` from the attributes.
absl::Status CheckMoeOp(const ir::Op& op, const std::vector<int>& in,
                        const std::vector<const BoundWeight*>& weights, MoeParams* p);

// Fewer experts per token than the file says, an explicit approximation
// (SessionOptions::moe_top_k, `--moe-top-k`, passed as RunContext::moe_top_k): p with
// n_expert_used lowered to min(top_k, n_expert_used), chosen and renormalised exactly
// as with the file's k (llama.cpp with expert_used_count overridden does the same).
// top_k 0: p unchanged, exact.
MoeParams WithTopK(const MoeParams& p, int64_t top_k);

// y [T, E] = moe_ffn(x [T, E]) as above.
absl::Status MoeFfn(const MoeParams& p, const MoeWeights& w, const float* x, int64_t T, float* y, ThreadPool* pool);

}  // namespace uaii::backends::cpu
