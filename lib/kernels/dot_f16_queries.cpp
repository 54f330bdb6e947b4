// DotF16Queries (dot_f16_queries.h): AVX2 + FMA + F16C, four queries per pass over K;
// the reference row kernel per query without AVX2.
#include "kernels/dot_f16_queries.h"

#include <algorithm>

#include "formats/fp16.h"
#include "formats/tensor_type.h"
#include "kernels/vec_dot.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define UAII_DFQ_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace uaii::kernels {
namespace {

// M queries against one K row: each query's accumulators and reduction exactly as the
// F16 row kernel (vec_dot_avx2.cpp DotFloat), K's 32-element step widened once.
template <int M>
UAII_DFQ_AVX2 void Pass(const uint16_t* k, const float* qf, int64_t q_stride, int64_t n, float* out,
                        int64_t out_stride) {
  __m256 acc[M][4];
  for (auto& a : acc)
    for (auto& v : a) v = _mm256_setzero_ps();
  const int64_t np = n & ~int64_t{31};
  for (int64_t i = 0; i < np; i += 32) {
    __m256 kv[4];
    for (int c = 0; c < 4; ++c)
      kv[c] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(k + i + 8 * c)));
    for (int q = 0; q < M; ++q)
      for (int c = 0; c < 4; ++c)
        acc[q][c] = _mm256_fmadd_ps(kv[c], _mm256_loadu_ps(qf + q * q_stride + i + 8 * c), acc[q][c]);
  }
  for (int q = 0; q < M; ++q) {
    const __m256 s = _mm256_add_ps(_mm256_add_ps(acc[q][0], acc[q][2]), _mm256_add_ps(acc[q][1], acc[q][3]));
    const __m128 t = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    const __m128 u = _mm_hadd_ps(t, t);
    float r = _mm_cvtss_f32(_mm_hadd_ps(u, u));
    for (int64_t i = np; i < n; ++i) {
      const float p = Fp16ToFp32(k[i]) * qf[q * q_stride + i];
      r += p;
    }
    out[q * out_stride] = r;
  }
}

bool HaveAvx2() {
  static const bool have = CpuHasAvx2();
  return have;
}

UAII_DFQ_AVX2 void WidenAvx2(const uint16_t* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
  for (; i < n; ++i) y[i] = Fp16ToFp32(x[i]);
}

}  // namespace

void WidenRowF16(const uint16_t* x, float* y, int64_t n) {
  if (HaveAvx2()) return WidenAvx2(x, y, n);
  for (int64_t i = 0; i < n; ++i) y[i] = Fp16ToFp32(x[i]);
}

void DotF16Queries(const uint16_t* k, const uint16_t* q16, const float* qf, int64_t q_stride, int nq, int64_t n,
                   float* out, int64_t out_stride) {
  if (!HaveAvx2()) {
    const VecDotFn dot = VecDotRef(TensorType::F16);
    for (int q = 0; q < nq; ++q) out[q * out_stride] = dot(k, q16 + q * q_stride, n);
    return;
  }
  int q = 0;
  for (; q + 4 <= nq; q += 4) Pass<4>(k, qf + q * q_stride, q_stride, n, out + q * out_stride, out_stride);
  switch (nq - q) {
    case 3: Pass<3>(k, qf + q * q_stride, q_stride, n, out + q * out_stride, out_stride); break;
    case 2: Pass<2>(k, qf + q * q_stride, q_stride, n, out + q * out_stride, out_stride); break;
    case 1: Pass<1>(k, qf + q * q_stride, q_stride, n, out + q * out_stride, out_stride); break;
    default: break;
  }
}

}  // namespace uaii::kernels
#else
namespace uaii::kernels {
void WidenRowF16(const uint16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = Fp16ToFp32(x[i]);
}
void DotF16Queries(const uint16_t* k, const uint16_t* q16, const float*, int64_t q_stride, int nq, int64_t n,
                   float* out, int64_t out_stride) {
  const VecDotFn dot = VecDotRef(TensorType::F16);
  for (int q = 0; q < nq; ++q) out[q * out_stride] = dot(k, q16 + q * q_stride, n);
}
}  // namespace uaii::kernels
#endif
