// moe_ffn (docs/moe.md, docs/ir.md) on the Vulkan device, recorded by VulkanProgram:
//
//   logits [T, n]        = router . x (or the router's own input)   matmul kernel
//   ids, w [T, k]        route: softmax | sigmoid, top-k     moe_route.comp
//                        (+ selection bias; ties to the lower index), norm_w, w_scale,
//                        times down_scale[e] (Gemma 4's per-expert output scale)
//   U, G [T * k, F]      = expert ids[t, j]'s rows of up / gate . x[t]   moe_matmul.comp
//                        (fused gate|up bank: one [T * k, 2F] product, split by slice.comp)
//   G                    = silu(G) * U  or  gelu(G) * U      swiglu.comp / geglu.comp
//   D [T * k, E]         = expert ids[t, j]'s rows of down . G[t, j]      moe_matmul.comp
//   shared expert        SD [T, E] = down_s . swiglu(gate_s x, up_s x), g [T] = gate_inp_s . x
//   y [T, E]             = sum_j w[t, j] D[t, j] (+ SD[t] (* sigmoid(g[t])))   moe_combine.comp
//
// The banks are uploaded as matrices (UploadMatrix: [n_expert, F] folded into rows,
// expert e's rows [e * F, (e + 1) * F)); a bank split into chunks is multiplied once
// per chunk, each dispatch computing the (slot, row) pairs whose bank row it holds, so
// an expert may cross a chunk boundary. The intermediates live in a per-workspace
// scratch buffer (MoeScratchBytes). Every selected expert is computed per slot (no
// gathering of the rows routed to one expert yet: simple, not fast).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "backends/vulkan/vk_kernels.h"
#include "backends/vulkan/vk_weights.h"
#include "ir/graph.h"

namespace uaii::backends::vulkan {

// The op's weights by input index 0..11 (null where absent or not a weight), from the
// program's per-slot weights and the op's input slots (-1: none).
std::vector<const DeviceWeight*> MoeInputs(const std::vector<int>& in,
                                           const std::vector<std::unique_ptr<DeviceWeight>>& slots);

// Checks a moe_ffn op's uploaded weights at compile: router, banks and shared expert
// as consistent matrices, the selection bias [n_expert], n_expert_used in 1..n_expert.
absl::Status CheckMoe(const ir::Op& op, const std::vector<const DeviceWeight*>& w);

// The scratch bytes one run of the op over up to `rows` rows takes (the file's k).
uint64_t MoeScratchBytes(const ir::Op& op, const std::vector<const DeviceWeight*>& w, int64_t rows);

// Records y [rows, E] = moe_ffn(x [rows, E]); `router_x` is the router's own input
// (input 10; a Range without a buffer: the router reads x); top_k > 0 caps the experts per row
// (RunContext::moe_top_k). `scratch` holds at least MoeScratchBytes(op, w, rows);
// `stage` is the program's staging buffer (the router's and shared expert's staged
// weights are copied into it before their products; the banks are read in place).
absl::Status RecordMoe(Recorder& rec, const DeviceInfo& info, const ir::Op& op,
                       const std::vector<const DeviceWeight*>& w, Range x, Range router_x, Range y, int64_t rows,
                       int64_t top_k, const Buffer& scratch, const Buffer* stage);

}  // namespace uaii::backends::vulkan
