// Scalar reference dot products (see vec_dot.h for the exact arithmetic). Built with
// -ffp-contract=off so that every f32 operation rounds where the source says.
#include <cmath>
#include <cstring>

#include "formats/fp16.h"
#include "formats/quant_blocks.h"
#include "kernels/vec_dot.h"

namespace uaii::kernels {
namespace {
using namespace uaii::quant;

inline uint16_t LoadU16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

// Float-like element loaders for the three plain formats.
struct F32Elems {
  const float* p;
  float operator[](int64_t i) const { float v; std::memcpy(&v, p + i, 4); return v; }
};
struct F16Elems {
  const uint8_t* p;
  float operator[](int64_t i) const { return Fp16ToFp32(LoadU16(p + 2 * i)); }
};
struct BF16Elems {
  const uint8_t* p;
  float operator[](int64_t i) const { return Bf16ToFp32(LoadU16(p + 2 * i)); }
};

template <typename Elems>
float DotFloat(Elems w, Elems x, int64_t n) {
  float acc[4][8] = {};
  const int64_t np = n & ~int64_t{31};
  for (int64_t i = 0; i < np; i += 32) {
    for (int k = 0; k < 4; ++k) {
      for (int l = 0; l < 8; ++l) {
        acc[k][l] = std::fma(w[i + 8 * k + l], x[i + 8 * k + l], acc[k][l]);
      }
    }
  }
  float s[8], t[4];
  for (int l = 0; l < 8; ++l) s[l] = (acc[0][l] + acc[2][l]) + (acc[1][l] + acc[3][l]);
  for (int k = 0; k < 4; ++k) t[k] = s[k] + s[k + 4];
  float r = (t[0] + t[1]) + (t[2] + t[3]);
  for (int64_t i = np; i < n; ++i) {
    const float p = w[i] * x[i];
    r += p;
  }
  return r;
}

float DotF32(const void* w, const void* x, int64_t n) {
  return DotFloat(F32Elems{static_cast<const float*>(w)}, F32Elems{static_cast<const float*>(x)}, n);
}
float DotF16(const void* w, const void* x, int64_t n) {
  return DotFloat(F16Elems{static_cast<const uint8_t*>(w)}, F16Elems{static_cast<const uint8_t*>(x)}, n);
}
float DotBF16(const void* w, const void* x, int64_t n) {
  return DotFloat(BF16Elems{static_cast<const uint8_t*>(w)}, BF16Elems{static_cast<const uint8_t*>(x)}, n);
}

// --- 32-element blocks. Weight element j of a block: see quant_blocks.h. ---

inline int Q4Elem(const uint8_t* qs, int j) {
  return j < 16 ? (qs[j] & 0xF) : (qs[j - 16] >> 4);
}
inline int Q5Elem(const uint8_t* qs, const uint8_t* qh, int j) {
  uint32_t h;
  std::memcpy(&h, qh, 4);
  return Q4Elem(qs, j) | (((h >> j) & 1) << 4);
}

float DotQ4_0(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const BlockQ4_0*>(wv);
  const auto* x = static_cast<const BlockQ8_0*>(xv);
  float sumf = 0;
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    int sumi = 0;
    for (int j = 0; j < kQK; ++j) sumi += (Q4Elem(w[ib].qs, j) - 8) * x[ib].qs[j];
    sumf += static_cast<float>(sumi) * Fp16ToFp32(w[ib].d) * Fp16ToFp32(x[ib].d);
  }
  return sumf;
}

float DotQ5_0(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const BlockQ5_0*>(wv);
  const auto* x = static_cast<const BlockQ8_0*>(xv);
  float sumf = 0;
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    int sumi = 0;
    for (int j = 0; j < kQK; ++j) sumi += (Q5Elem(w[ib].qs, w[ib].qh, j) - 16) * x[ib].qs[j];
    sumf += (Fp16ToFp32(w[ib].d) * Fp16ToFp32(x[ib].d)) * static_cast<float>(sumi);
  }
  return sumf;
}

float DotQ8_0(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const BlockQ8_0*>(wv);
  const auto* x = static_cast<const BlockQ8_0*>(xv);
  float sumf = 0;
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    int sumi = 0;
    for (int j = 0; j < kQK; ++j) sumi += w[ib].qs[j] * x[ib].qs[j];
    sumf += static_cast<float>(sumi) * (Fp16ToFp32(w[ib].d) * Fp16ToFp32(x[ib].d));
  }
  return sumf;
}

float DotQ4_1(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const BlockQ4_1*>(wv);
  const auto* x = static_cast<const BlockQ8_1*>(xv);
  float sumf = 0;
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    int sumi = 0;
    for (int j = 0; j < kQK; ++j) sumi += Q4Elem(w[ib].qs, j) * x[ib].qs[j];
    sumf += (Fp16ToFp32(w[ib].d) * Fp16ToFp32(x[ib].d)) * static_cast<float>(sumi) +
            Fp16ToFp32(w[ib].m) * Fp16ToFp32(x[ib].s);
  }
  return sumf;
}

float DotQ5_1(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const BlockQ5_1*>(wv);
  const auto* x = static_cast<const BlockQ8_1*>(xv);
  float sumf = 0;
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    int sumi = 0;
    for (int j = 0; j < kQK; ++j) sumi += Q5Elem(w[ib].qs, w[ib].qh, j) * x[ib].qs[j];
    sumf += (Fp16ToFp32(w[ib].d) * Fp16ToFp32(x[ib].d)) * static_cast<float>(sumi) +
            Fp16ToFp32(w[ib].m) * Fp16ToFp32(x[ib].s);
  }
  return sumf;
}

// --- K-quants. Decoded weights q[256] and per-16 scales, then one exact int32 sum per
// super-block (any summation order gives the same integer), scaled once in f32. ---

// sum over the super-block of scale16[p / 16] * q[p] * x[p]; |sum| < 2^31 for every
// K-quant (largest: Q6_K, 256 * 32 * 128 * 128 = 2^28).
inline int32_t ScaledSum(const int8_t* q, const int8_t* x, const int* scale16) {
  int32_t sum = 0;
  for (int p = 0; p < kQK_K; ++p) sum += scale16[p / 16] * (q[p] * x[p]);
  return sum;
}

// Q4_K / Q5_K share everything but the decode of q. Per super-block, in this order:
// sumf += (d_w * d_x) * isum; sumf -= (dmin_w * d_x) * summins.
template <typename Block, bool kFive>
float DotQ45K(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const Block*>(wv);
  const auto* x = static_cast<const BlockQ8_K*>(xv);
  float sumf = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int8_t q[kQK_K];
    int scale16[16];
    int summins = 0;
    for (int s = 0; s < 8; ++s) {
      uint8_t sc, m;
      ScaleMinK4(s, w[i].scales, &sc, &m);
      scale16[2 * s] = scale16[2 * s + 1] = sc;
      summins += (x[i].bsums[2 * s] + x[i].bsums[2 * s + 1]) * m;
      for (int l = 0; l < 32; ++l) {
        int v = (w[i].qs[32 * (s / 2) + l] >> (4 * (s % 2))) & 0xF;
        if constexpr (kFive) v |= ((reinterpret_cast<const BlockQ5_K*>(&w[i])->qh[l] >> s) & 1) << 4;
        q[32 * s + l] = static_cast<int8_t>(v);
      }
    }
    const int32_t isum = ScaledSum(q, x[i].qs, scale16);
    const float d = Fp16ToFp32(w[i].d) * x[i].d;
    sumf += d * static_cast<float>(isum);
    const float dmin = Fp16ToFp32(w[i].dmin) * x[i].d;
    sumf -= dmin * static_cast<float>(summins);
  }
  return sumf;
}

// Q2_K as ggml's generic vec_dot (no lanes): element e = 128k + 32j + l has
// q = (qs[32k + l] >> 2j) & 3 and sub-block byte sc = scales[e / 16] (low nibble: scale,
// high nibble: min); per block sumf += (d_w d_x) * sum(sc_lo q x) - (dmin_w d_x) * sum(sc_hi bsum).
float DotQ2_K(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const BlockQ2_K*>(wv);
  const auto* x = static_cast<const BlockQ8_K*>(xv);
  float sumf = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int summs = 0;
    for (int j = 0; j < 16; ++j) summs += x[i].bsums[j] * (w[i].scales[j] >> 4);
    const float dall = x[i].d * Fp16ToFp32(w[i].d);
    const float dmin = x[i].d * Fp16ToFp32(w[i].dmin);
    int isum = 0;
    for (int e = 0; e < kQK_K; ++e) {
      const int k = e / 128, j = (e / 32) % 4, l = e % 32;
      const int q = (w[i].qs[32 * k + l] >> (2 * j)) & 3;
      isum += (w[i].scales[e / 16] & 0xF) * (q * x[i].qs[e]);
    }
    sumf += dall * static_cast<float>(isum) - dmin * static_cast<float>(summs);
  }
  return sumf;
}

// Q3_K: element e = 128h + 32k + l has q = ((qs[32h + l] >> 2k) & 3) - 4 unless bit
// 4h + k of hmask[l] is set; signed 6-bit scale ScaleQ3K(e / 16); one scaled int32 sum per super-block as Q6_K.
float DotQ3_K(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const BlockQ3_K*>(wv);
  const auto* x = static_cast<const BlockQ8_K*>(xv);
  float sumf = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int8_t q[kQK_K];
    int scale16[16];
    for (int e = 0; e < kQK_K; ++e) {
      const int h = e / 128, k = (e / 32) % 4, l = e % 32;
      const int lo = (w[i].qs[32 * h + l] >> (2 * k)) & 3;
      q[e] = static_cast<int8_t>(lo - ((w[i].hmask[l] >> (4 * h + k)) & 1 ? 0 : 4));
    }
    for (int j = 0; j < 16; ++j) scale16[j] = ScaleQ3K(j, w[i].scales);
    const float d = Fp16ToFp32(w[i].d) * x[i].d;
    sumf += d * static_cast<float>(ScaledSum(q, x[i].qs, scale16));
  }
  return sumf;
}

float DotQ6_K(const void* wv, const void* xv, int64_t n) {
  const auto* w = static_cast<const BlockQ6_K*>(wv);
  const auto* x = static_cast<const BlockQ8_K*>(xv);
  float sumf = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int8_t q[kQK_K];
    int scale16[16];
    for (int e = 0; e < kQK_K; ++e) {
      const int h = e / 128, k = (e / 32) % 4, l = e % 32;
      const int lo = (w[i].ql[64 * h + 32 * (k % 2) + l] >> (4 * (k / 2))) & 0xF;
      const int hi = (w[i].qh[32 * h + l] >> (2 * k)) & 3;
      q[e] = static_cast<int8_t>((lo | (hi << 4)) - 32);
    }
    for (int j = 0; j < 16; ++j) scale16[j] = w[i].scales[j];
    const float d = Fp16ToFp32(w[i].d) * x[i].d;
    sumf += d * static_cast<float>(ScaledSum(q, x[i].qs, scale16));
  }
  return sumf;
}

}  // namespace

VecDotFn VecDotRef(TensorType type) {
  switch (type) {
    case TensorType::F32: return DotF32;
    case TensorType::F16: return DotF16;
    case TensorType::BF16: return DotBF16;
    case TensorType::Q4_0: return DotQ4_0;
    case TensorType::Q4_1: return DotQ4_1;
    case TensorType::Q5_0: return DotQ5_0;
    case TensorType::Q5_1: return DotQ5_1;
    case TensorType::Q8_0: return DotQ8_0;
    case TensorType::Q2_K: return DotQ2_K;
    case TensorType::Q3_K: return DotQ3_K;
    case TensorType::Q4_K: return DotQ45K<BlockQ4_K, false>;
    case TensorType::Q5_K: return DotQ45K<BlockQ5_K, true>;
    case TensorType::Q6_K: return DotQ6_K;
    default: return nullptr;
  }
}

}  // namespace uaii::kernels
