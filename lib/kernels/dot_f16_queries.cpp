// DotF16Queries (dot_f16_queries.h): AVX2 + FMA + F16C passes over K, two queries per
// pass where AVX2's 16 registers must hold them; with AVX-512, the same sums on 16-lane
// registers, up to eight queries and two rows per pass; the reference row kernel per
// query without AVX2.
#include "kernels/dot_f16_queries.h"

#include <algorithm>
#include <cstdlib>

#include "formats/fp16.h"
#include "formats/tensor_type.h"
#include "kernels/dispatch.h"
#include "kernels/vec_dot.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
// GCC 12's AVX-512 intrinsics (_mm512_undefined_ps's self-initialised operand) warn
// maybe-uninitialized when they inline here; a known false positive.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define UAII_DFQ_AVX2 __attribute__((target("avx2,fma,f16c")))
// The AVX-512 passes: the same sums on 16-lane registers (LaneSumsZ), with 32 of them.
#define UAII_DFQ_AVX512 __attribute__((target("avx2,fma,f16c,avx512f,avx512vl")))

namespace uaii::kernels {
namespace {

// M queries against one K row, up to each query's 8-lane sum s = (a0 + a2) + (a1 + a3)
// of its four accumulators, exactly as the F16 row kernel (vec_dot_avx2.cpp DotFloat)
// before its horizontal step; K's 32-element step widened once for all M.
// 4M accumulators + 4 widened K vectors must stay in registers: M = 4 needs 20, which
// AVX2's 16 cannot hold (the compiler spilled accumulators to the stack on every FMA),
// so the AVX2 callers take M <= 2 (AVX-512 ones use LaneSumsZ).
template <int M>
__attribute__((always_inline)) inline UAII_DFQ_AVX2 void LaneSums(const uint16_t* k, const float* qf,
                                                                  int64_t q_stride, int64_t np, __m256* s) {
  __m256 acc[M][4];
  for (auto& a : acc)
    for (auto& v : a) v = _mm256_setzero_ps();
  for (int64_t i = 0; i < np; i += 32) {
    __m256 kv[4];
    for (int c = 0; c < 4; ++c)
      kv[c] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(k + i + 8 * c)));
    for (int q = 0; q < M; ++q)
      for (int c = 0; c < 4; ++c)
        acc[q][c] = _mm256_fmadd_ps(kv[c], _mm256_loadu_ps(qf + q * q_stride + i + 8 * c), acc[q][c]);
  }
  for (int q = 0; q < M; ++q)
    s[q] = _mm256_add_ps(_mm256_add_ps(acc[q][0], acc[q][2]), _mm256_add_ps(acc[q][1], acc[q][3]));
}

// LaneSums for R rows (row r at k + r * k_stride) against M queries on 16-lane
// registers, for the AVX-512 callers: the row kernel's accumulator pairs (a0 | a1) and
// (a2 | a3) are each one zmm, so every product lands in the same lane in the same
// order, and s = (a0 + a2) + (a1 + a3) is the two halves of their sum added. Half the
// instructions of two ymm passes, and two rows share each query load (R = 2, M = 4:
// 16 accumulators, 4 widened rows): the values phase did one load per FMA, with the
// loads of the softmax weights from L1 the limit. s[r * M + q].
template <int R, int M>
__attribute__((always_inline)) inline UAII_DFQ_AVX512 void LaneSumsZ(const uint16_t* k, int64_t k_stride,
                                                                     const float* qf, int64_t q_stride, int64_t np,
                                                                     __m256* s) {
  __m512 acc[R][M][2];
  for (auto& ar : acc)
    for (auto& aq : ar) aq[0] = aq[1] = _mm512_setzero_ps();
  for (int64_t i = 0; i < np; i += 32) {
    __m512 kv[R][2];
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < 2; ++c)
        kv[r][c] = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(k + r * k_stride + i + 16 * c)));
    for (int q = 0; q < M; ++q) {
      const __m512 w0 = _mm512_loadu_ps(qf + q * q_stride + i), w1 = _mm512_loadu_ps(qf + q * q_stride + i + 16);
      for (int r = 0; r < R; ++r) {
        acc[r][q][0] = _mm512_fmadd_ps(kv[r][0], w0, acc[r][q][0]);
        acc[r][q][1] = _mm512_fmadd_ps(kv[r][1], w1, acc[r][q][1]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int q = 0; q < M; ++q) {
      const __m512 z = _mm512_add_ps(acc[r][q][0], acc[r][q][1]);
      s[r * M + q] = _mm256_add_ps(_mm512_castps512_ps256(z),
                                   _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(z), 1)));
    }
}

// The row kernel's tail past the 32-element steps, one product at a time.
inline float AddTail(float r, const uint16_t* k, const float* qf, int64_t np, int64_t n) {
  for (int64_t i = np; i < n; ++i) {
    const float p = Fp16ToFp32(k[i]) * qf[i];
    r += p;
  }
  return r;
}

// The row kernel's horizontal step: ((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7)).
__attribute__((always_inline)) inline UAII_DFQ_AVX2 float Reduce(__m256 s) {
  const __m128 t = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
  const __m128 u = _mm_hadd_ps(t, t);
  return _mm_cvtss_f32(_mm_hadd_ps(u, u));
}

// Reduce for eight sums at once, the same additions in the same order: the 128-bit
// halves of pairs are added as one vector, then two rounds of hadd leave the results
// in the order 0 2 4 6 1 3 5 7, which one permute puts back. ~2 operations per dot
// instead of ~6, which for a 64-element head was as much as the dot itself.
__attribute__((always_inline)) inline UAII_DFQ_AVX2 __m256 Reduce8(const __m256* s) {
  __m256 t[4];
  for (int p = 0; p < 4; ++p)
    t[p] = _mm256_add_ps(_mm256_permute2f128_ps(s[2 * p], s[2 * p + 1], 0x20),
                         _mm256_permute2f128_ps(s[2 * p], s[2 * p + 1], 0x31));
  const __m256 v = _mm256_hadd_ps(_mm256_hadd_ps(t[0], t[1]), _mm256_hadd_ps(t[2], t[3]));
  return _mm256_permutevar8x32_ps(v, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// M queries' lane sums s[q] for one row, reduced and stored: out[q * out_stride].
template <int M>
__attribute__((always_inline)) inline UAII_DFQ_AVX2 void StoreSums(const __m256* s, const uint16_t* k, const float* qf,
                                                                   int64_t q_stride, int64_t np, int64_t n,
                                                                   float* out, int64_t out_stride) {
  for (int q = 0; q < M; ++q) out[q * out_stride] = AddTail(Reduce(s[q]), k, qf + q * q_stride, np, n);
}

// M queries' lane sums s[q][r] for `rows` (<= 8) rows, reduced and stored:
// out[q * out_stride + r].
template <int M>
__attribute__((always_inline)) inline UAII_DFQ_AVX2 void StoreRowSums(__m256 (*s)[8], int rows, const uint16_t* k,
                                                                      int64_t k_stride, const float* qf,
                                                                      int64_t q_stride, int64_t np, int64_t n,
                                                                      float* out, int64_t out_stride) {
  for (int q = 0; q < M; ++q) {
    float* o = out + q * out_stride;
    if (rows == 8 && np == n) {
      _mm256_storeu_ps(o, Reduce8(s[q]));
      continue;
    }
    for (int r = 0; r < rows; ++r) o[r] = AddTail(Reduce(s[q][r]), k + r * k_stride, qf + q * q_stride, np, n);
  }
}

// M queries against `rows` (<= 8) rows: out[q * out_stride + r]. The ymm passes
// (AVX2's 16 registers) take the rows one at a time; the zmm ones two at a time.
template <int M>
__attribute__((always_inline)) inline UAII_DFQ_AVX2 void RowsPass(const uint16_t* k, int64_t k_stride, int rows,
                                                                  const float* qf, int64_t q_stride, int64_t n,
                                                                  float* out, int64_t out_stride) {
  const int64_t np = n & ~int64_t{31};
  __m256 s[M][8];
  for (int r = 0; r < rows; ++r) {
    __m256 sr[M];
    LaneSums<M>(k + r * k_stride, qf, q_stride, np, sr);
    for (int q = 0; q < M; ++q) s[q][r] = sr[q];
  }
  StoreRowSums<M>(s, rows, k, k_stride, qf, q_stride, np, n, out, out_stride);
}

template <int M>
__attribute__((always_inline)) inline UAII_DFQ_AVX512 void RowsPassZ(const uint16_t* k, int64_t k_stride, int rows,
                                                                     const float* qf, int64_t q_stride, int64_t n,
                                                                     float* out, int64_t out_stride) {
  const int64_t np = n & ~int64_t{31};
  __m256 s[M][8];
  int r = 0;
  for (; r + 2 <= rows; r += 2) {
    __m256 sr[2 * M];
    LaneSumsZ<2, M>(k + r * k_stride, k_stride, qf, q_stride, np, sr);
    for (int q = 0; q < M; ++q) s[q][r] = sr[q], s[q][r + 1] = sr[M + q];
  }
  if (r < rows) {
    __m256 sr[M];
    LaneSumsZ<1, M>(k + r * k_stride, 0, qf, q_stride, np, sr);
    for (int q = 0; q < M; ++q) s[q][r] = sr[q];
  }
  StoreRowSums<M>(s, rows, k, k_stride, qf, q_stride, np, n, out, out_stride);
}

UAII_DFQ_AVX512 void RowsAvx512(const uint16_t* k, int64_t k_stride, int64_t rows, const float* qf,
                                int64_t q_stride, int nq, int64_t n, float* out, int64_t out_stride) {
  for (int64_t r = 0; r < rows; r += 8) {
    const int rr = static_cast<int>(std::min<int64_t>(8, rows - r));
    int q = 0;
    for (; q + 4 <= nq; q += 4)
      RowsPassZ<4>(k + r * k_stride, k_stride, rr, qf + q * q_stride, q_stride, n, out + q * out_stride + r, out_stride);
    for (; q < nq; ++q)
      RowsPassZ<1>(k + r * k_stride, k_stride, rr, qf + q * q_stride, q_stride, n, out + q * out_stride + r, out_stride);
  }
}

UAII_DFQ_AVX2 void RowsAvx2(const uint16_t* k, int64_t k_stride, int64_t rows, const float* qf, int64_t q_stride,
                            int nq, int64_t n, float* out, int64_t out_stride) {
  for (int64_t r = 0; r < rows; r += 8) {
    const int rr = static_cast<int>(std::min<int64_t>(8, rows - r));
    int q = 0;
    for (; q + 2 <= nq; q += 2)
      RowsPass<2>(k + r * k_stride, k_stride, rr, qf + q * q_stride, q_stride, n, out + q * out_stride + r, out_stride);
    if (q < nq)
      RowsPass<1>(k + r * k_stride, k_stride, rr, qf + q * q_stride, q_stride, n, out + q * out_stride + r, out_stride);
  }
}

template <int M>
__attribute__((always_inline)) inline UAII_DFQ_AVX512 void PassZ(const uint16_t* k, const float* qf,
                                                                 int64_t q_stride, int64_t n, float* out,
                                                                 int64_t out_stride) {
  const int64_t np = n & ~int64_t{31};
  __m256 s[M];
  LaneSumsZ<1, M>(k, 0, qf, q_stride, np, s);
  StoreSums<M>(s, k, qf, q_stride, np, n, out, out_stride);
}

template <int M>
__attribute__((always_inline)) inline UAII_DFQ_AVX2 void Pass(const uint16_t* k, const float* qf, int64_t q_stride,
                                                              int64_t n, float* out, int64_t out_stride) {
  const int64_t np = n & ~int64_t{31};
  __m256 s[M];
  LaneSums<M>(k, qf, q_stride, np, s);
  StoreSums<M>(s, k, qf, q_stride, np, n, out, out_stride);
}

UAII_DFQ_AVX512 void PassesAvx512(const uint16_t* k, const float* qf, int64_t q_stride, int nq, int64_t n,
                                  float* out, int64_t out_stride) {
  int q = 0;
  for (; q + 8 <= nq; q += 8) PassZ<8>(k, qf + q * q_stride, q_stride, n, out + q * out_stride, out_stride);
  for (; q + 4 <= nq; q += 4) PassZ<4>(k, qf + q * q_stride, q_stride, n, out + q * out_stride, out_stride);
  switch (nq - q) {
    case 3: PassZ<3>(k, qf + q * q_stride, q_stride, n, out + q * out_stride, out_stride); break;
    case 2: PassZ<2>(k, qf + q * q_stride, q_stride, n, out + q * out_stride, out_stride); break;
    case 1: PassZ<1>(k, qf + q * q_stride, q_stride, n, out + q * out_stride, out_stride); break;
    default: break;
  }
}

UAII_DFQ_AVX2 void PassesAvx2(const uint16_t* k, const float* qf, int64_t q_stride, int nq, int64_t n, float* out,
                              int64_t out_stride) {
  int q = 0;
  for (; q + 2 <= nq; q += 2) Pass<2>(k, qf + q * q_stride, q_stride, n, out + q * out_stride, out_stride);
  if (q < nq) Pass<1>(k, qf + q * q_stride, q_stride, n, out + q * out_stride, out_stride);
}

bool HaveAvx2() {
  static const bool have = CpuHasAvx2();
  return have;
}

// The level DotF16Queries runs at, decided once: AVX-512 unless UAII_NO_AVX512 caps it
// at AVX2, as for the matmul kernels (dispatch.h).
IsaLevel AutoLevel() {
  static const IsaLevel level = CpuSupports(IsaLevel::kAvx512) && std::getenv("UAII_NO_AVX512") == nullptr
                                    ? IsaLevel::kAvx512
                                    : HaveAvx2() ? IsaLevel::kAvx2 : IsaLevel::kScalar;
  return level;
}

void DotRef(const uint16_t* k, const uint16_t* q16, int64_t q_stride, int nq, int64_t n, float* out,
            int64_t out_stride) {
  const VecDotFn dot = VecDotRef(TensorType::F16);
  for (int q = 0; q < nq; ++q) out[q * out_stride] = dot(k, q16 + q * q_stride, n);
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

namespace {

// `level` lowered to what this CPU has (tests ask for levels; DotF16Queries's
// AutoLevel is already one), so the per-call dispatch below checks nothing else.
IsaLevel Supported(IsaLevel level) {
  if (level == IsaLevel::kAvx512 && CpuSupports(IsaLevel::kAvx512)) return level;
  if ((level == IsaLevel::kAvx2 || level == IsaLevel::kAvx512) && HaveAvx2()) return IsaLevel::kAvx2;
  return IsaLevel::kScalar;
}

void Dots(IsaLevel supported, const uint16_t* k, const uint16_t* q16, const float* qf, int64_t q_stride, int nq,
          int64_t n, float* out, int64_t out_stride) {
  if (supported == IsaLevel::kAvx512) return PassesAvx512(k, qf, q_stride, nq, n, out, out_stride);
  if (supported == IsaLevel::kAvx2) return PassesAvx2(k, qf, q_stride, nq, n, out, out_stride);
  DotRef(k, q16, q_stride, nq, n, out, out_stride);
}

void RowDots(IsaLevel supported, const uint16_t* k, int64_t k_stride, int64_t rows, const uint16_t* q16,
             const float* qf, int64_t q_stride, int nq, int64_t n, float* out, int64_t out_stride) {
  if (supported == IsaLevel::kAvx512) return RowsAvx512(k, k_stride, rows, qf, q_stride, nq, n, out, out_stride);
  if (supported == IsaLevel::kAvx2) return RowsAvx2(k, k_stride, rows, qf, q_stride, nq, n, out, out_stride);
  for (int64_t r = 0; r < rows; ++r) DotRef(k + r * k_stride, q16, q_stride, nq, n, out + r, out_stride);
}

}  // namespace

void DotF16QueriesAt(IsaLevel level, const uint16_t* k, const uint16_t* q16, const float* qf, int64_t q_stride,
                     int nq, int64_t n, float* out, int64_t out_stride) {
  Dots(Supported(level), k, q16, qf, q_stride, nq, n, out, out_stride);
}

void DotF16Queries(const uint16_t* k, const uint16_t* q16, const float* qf, int64_t q_stride, int nq, int64_t n,
                   float* out, int64_t out_stride) {
  Dots(AutoLevel(), k, q16, qf, q_stride, nq, n, out, out_stride);
}

void DotF16QueriesRowsAt(IsaLevel level, const uint16_t* k, int64_t k_stride, int64_t rows, const uint16_t* q16,
                         const float* qf, int64_t q_stride, int nq, int64_t n, float* out, int64_t out_stride) {
  RowDots(Supported(level), k, k_stride, rows, q16, qf, q_stride, nq, n, out, out_stride);
}

void DotF16QueriesRows(const uint16_t* k, int64_t k_stride, int64_t rows, const uint16_t* q16, const float* qf,
                       int64_t q_stride, int nq, int64_t n, float* out, int64_t out_stride) {
  RowDots(AutoLevel(), k, k_stride, rows, q16, qf, q_stride, nq, n, out, out_stride);
}

}  // namespace uaii::kernels
#else
namespace uaii::kernels {
void WidenRowF16(const uint16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = Fp16ToFp32(x[i]);
}
void DotF16QueriesAt(IsaLevel, const uint16_t* k, const uint16_t* q16, const float*, int64_t q_stride, int nq,
                     int64_t n, float* out, int64_t out_stride) {
  const VecDotFn dot = VecDotRef(TensorType::F16);
  for (int q = 0; q < nq; ++q) out[q * out_stride] = dot(k, q16 + q * q_stride, n);
}
void DotF16Queries(const uint16_t* k, const uint16_t* q16, const float* qf, int64_t q_stride, int nq, int64_t n,
                   float* out, int64_t out_stride) {
  DotF16QueriesAt(IsaLevel::kScalar, k, q16, qf, q_stride, nq, n, out, out_stride);
}
void DotF16QueriesRowsAt(IsaLevel, const uint16_t* k, int64_t k_stride, int64_t rows, const uint16_t* q16,
                         const float* qf, int64_t q_stride, int nq, int64_t n, float* out, int64_t out_stride) {
  for (int64_t r = 0; r < rows; ++r)
    DotF16QueriesAt(IsaLevel::kScalar, k + r * k_stride, q16, qf, q_stride, nq, n, out + r, out_stride);
}
void DotF16QueriesRows(const uint16_t* k, int64_t k_stride, int64_t rows, const uint16_t* q16, const float* qf,
                       int64_t q_stride, int nq, int64_t n, float* out, int64_t out_stride) {
  DotF16QueriesRowsAt(IsaLevel::kScalar, k, k_stride, rows, q16, qf, q_stride, nq, n, out, out_stride);
}
}  // namespace uaii::kernels
#endif
