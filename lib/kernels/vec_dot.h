// Row dot products between one packed weight row and one activation row in the
// weight type's activation format (vec_dot_type, as in ggml):
//
//   weight            activation   result
//   F32               F32          sum_i w_i * x_i
//   F16 / BF16        F16 / BF16   same, both sides widened to f32
//   Q4_0, Q5_0, Q8_0  Q8_0         per 32-block: exact int dot, then f32 scaling
//   Q4_1, Q5_1        Q8_1         same, plus m_w * s_x per block
//   Q2_K .. Q6_K      Q8_K         per 256-block: exact int dots, f32 scaling
//
// Every function has a scalar reference (vec_dot_ref.cpp) and may have an AVX2+FMA
// variant (vec_dot_avx2.cpp) that performs the same f32 operations in the same order,
// so the two are bit-identical (the integer parts are exact in any order).
//
// The f32 order, fixed per element of the output (never depends on batch or threads):
//  * F32/F16/BF16: 4 x 8 lane accumulators over steps of 32 with fused multiply-add
//    (acc[k][l] = fma(w[32s+8k+l], x[32s+8k+l], acc[k][l])), reduced as ggml's
//    GGML_F32x8_REDUCE: s_l = (acc0_l + acc2_l) + (acc1_l + acc3_l),
//    t_k = s_k + s_{k+4}, r = (t0 + t1) + (t2 + t3); then the n % 32 tail as
//    r += w_i * x_i (unfused).
//  * 32-blocks, as ggml's *_generic vec_dot: sumf += ...
//      Q4_0: (sumi * d_w) * d_x      Q5_0: (d_w * d_x) * sumi     Q8_0: sumi * (d_w * d_x)
//      Q4_1/Q5_1: (d_w * d_x) * sumi + m_w * s_x
//  * K-quants: one exact int32 per 256-block, isum = sum_p scale(p) * q_p * x_p (Q2_K:
//    sum_p sc_lo(p) * q_p * x_p), so SIMD code may add the products in any order; then
//      Q3_K, Q6_K:  sumf += (d_w * d_x) * isum
//      Q4_K, Q5_K:  sumf += (d_w * d_x) * isum;  sumf -= (dmin_w * d_x) * summins
//      Q2_K:        sumf += (d_w * d_x) * isum - (dmin_w * d_x) * summins   (ggml's order)
//    with summins = sum over sub-blocks of min * (bsum of the sub-block). Not ggml's
//    generic order (8 lane sums scaled separately), which forces a per-lane f32 step
//    and keeps SIMD code from adding a sub-block's products before scaling; the
//    difference from ggml is last-bit rounding of the kind between its own SIMD paths.
#pragma once
#include <cstdint>

#include "formats/tensor_type.h"

namespace uaii::kernels {

// w: one packed row of n elements; x: the activation row (format per the table above).
using VecDotFn = float (*)(const void* w, const void* x, int64_t n);

// Scalar references; nullptr for a type without a kernel.
VecDotFn VecDotRef(TensorType type);
// AVX2+FMA+F16C variants; nullptr when not compiled in or no variant for the type.
// Callers must check CpuHasAvx2() before calling one.
VecDotFn VecDotAvx2(TensorType type);
bool CpuHasAvx2();

}  // namespace uaii::kernels
