// Activation formats for the dot products, made exactly as ggml's reference
// quantizers (ggml-quants.c quantize_row_q8_0_ref / q8_1_ref / q8_K_ref) and ggml's
// fp32 -> fp16 / bf16 conversions. The matmul quantizes each activation row once
// into the format its weight type pairs with (ggml's vec_dot_type).
#pragma once
#include <cstdint>

#include "formats/quant_blocks.h"

namespace uaii::kernels {

// Per block of 32: d = amax / 127, q = roundf(x / d) (half away from zero, through
// id = 1 / d), d stored as half.
void QuantizeRowQ8_0(const float* x, quant::BlockQ8_0* y, int64_t n);
// As Q8_0, plus s = half(d * sum(q)).
void QuantizeRowQ8_1(const float* x, quant::BlockQ8_1* y, int64_t n);
// Per block of 256: iscale = -127 / max (max = the value of largest magnitude),
// q = min(127, nearest_int(iscale * x)) (ties to even), d = 1 / iscale (f32),
// bsums = sums of 16 consecutive q. An all-zero block gets d = 0, q = 0, bsums = 0.
void QuantizeRowQ8_K(const float* x, quant::BlockQ8_K* y, int64_t n);
// Round to nearest even; ggml's GGML_FP32_TO_FP16 / GGML_FP32_TO_BF16.
void ConvertRowF16(const float* x, uint16_t* y, int64_t n);
void ConvertRowBF16(const float* x, uint16_t* y, int64_t n);

}  // namespace uaii::kernels
