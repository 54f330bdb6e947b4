// Several F16 row dot products that share one operand: attention's K row (or V^T
// row) against each query head of its group.
//
//   out[q * out_stride] = dot(k, query q)        0 <= q < nq
//
// dot is the F16 row dot of vec_dot.h (both operands f16, widened to f32, the fixed
// 4 x 8-lane FMA order), query q is q16 + q * q_stride in f16 and qf + q * q_stride
// is its f32 widening (exact). Results are bit-identical to calling the F16 row kernel
// once per query. Why: with a head's 64-256 elements, widening both operands is most
// of that kernel's work; here K is widened once for all the queries, and the queries
// never (the caller widens them once per token).
#pragma once
#include <cstdint>

#include "kernels/dispatch.h"

namespace uaii::kernels {

// y[i] = the f32 value of f16 x[i] (exact), for the queries' qf.
void WidenRowF16(const uint16_t* x, float* y, int64_t n);

void DotF16Queries(const uint16_t* k, const uint16_t* q16, const float* qf, int64_t q_stride, int nq, int64_t n,
                   float* out, int64_t out_stride);

// The same at a chosen level (tests): kAvx512 and kAvx2 fall back to the next level
// the CPU has, anything else runs the reference row kernel per query. DotF16Queries
// runs at AVX-512 (16-lane registers: up to eight queries, or two rows of four, per
// pass), capped at AVX2 (two queries per pass) by UAII_NO_AVX512, as MatMul is.
void DotF16QueriesAt(IsaLevel level, const uint16_t* k, const uint16_t* q16, const float* qf, int64_t q_stride,
                     int nq, int64_t n, float* out, int64_t out_stride);

// Several K rows (row r at k + r * k_stride) against the same queries:
//   out[q * out_stride + r] = dot(row r, query q)        0 <= r < rows, 0 <= q < nq
// the same bits as DotF16Queries row by row. Eight rows' horizontal steps are done
// as one vector reduction (attention's scores, where a 64-element head made the
// per-dot reduction as costly as the dot), and each query's scores land contiguous.
void DotF16QueriesRows(const uint16_t* k, int64_t k_stride, int64_t rows, const uint16_t* q16, const float* qf,
                       int64_t q_stride, int nq, int64_t n, float* out, int64_t out_stride);
void DotF16QueriesRowsAt(IsaLevel level, const uint16_t* k, int64_t k_stride, int64_t rows, const uint16_t* q16,
                         const float* qf, int64_t q_stride, int nq, int64_t n, float* out, int64_t out_stride);

}  // namespace uaii::kernels
