// Per-format dequantizers: `n_blocks` packed blocks at `src` -> n_blocks * block_size
// floats at `dst`. Bit-exact with the gguf package's numpy codecs (gguf.quants) and
// ggml's dequantize_row_*: every output is the same sequence of f32 roundings
// (e.g. Q4_1 is `(d * q) + m`, two roundings, never fused). Reached through the
// traits table in tensor_type.h; declared here for the table and for tests.
#pragma once
#include <cstdint>

namespace uaii::dequant {

void F32(const void* src, float* dst, int64_t n);
void F16(const void* src, float* dst, int64_t n);
void BF16(const void* src, float* dst, int64_t n);
void Q4_0(const void* src, float* dst, int64_t n_blocks);
void Q4_1(const void* src, float* dst, int64_t n_blocks);
void Q5_0(const void* src, float* dst, int64_t n_blocks);
void Q5_1(const void* src, float* dst, int64_t n_blocks);
void Q8_0(const void* src, float* dst, int64_t n_blocks);
void Q2_K(const void* src, float* dst, int64_t n_blocks);
void Q3_K(const void* src, float* dst, int64_t n_blocks);
void Q4_K(const void* src, float* dst, int64_t n_blocks);
void Q5_K(const void* src, float* dst, int64_t n_blocks);
void Q6_K(const void* src, float* dst, int64_t n_blocks);
void Q8_K(const void* src, float* dst, int64_t n_blocks);

}  // namespace uaii::dequant
