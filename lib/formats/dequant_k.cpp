// Dequantizers for the K-quant super-block formats (256 elements per block).
#include "formats/dequant.h"
#include "formats/fp16.h"
#include "formats/quant_blocks.h"

namespace uaii::dequant {
namespace {
using namespace uaii::quant;
}  // namespace

// Element 128n + 32j + l (n < 2, j < 4, l < 32) is bits 2j..2j+1 of qs[32n + l];
// it belongs to sub-block 8n + 2j + l/16 with scale (s & 15) and min (s >> 4).
// x = (d * sc) * q - (dmin * m).
void Q2_K(const void* src, float* dst, int64_t n_blocks) {
  const auto* b = static_cast<const BlockQ2_K*>(src);
  for (int64_t i = 0; i < n_blocks; ++i, ++b, dst += kQK_K) {
    const float d = Fp16ToFp32(b->d), dmin = Fp16ToFp32(b->dmin);
    for (int e = 0; e < kQK_K; ++e) {
      const int n = e / 128, j = (e / 32) % 4, l = e % 32;
      const uint8_t s = b->scales[e / 16];
      const float dl = d * static_cast<float>(s & 0xF);
      const float ml = dmin * static_cast<float>(s >> 4);
      const int q = (b->qs[32 * n + l] >> (2 * j)) & 3;
      dst[e] = dl * static_cast<float>(q) - ml;
    }
  }
}

// Element 32k + l (k < 8, l < 32): low bits (qs[32(k/4) + l] >> 2(k%4)) & 3, minus 4
// when bit k of hmask[l] is clear. Scale index e/16. x = (d * sc) * q.
void Q3_K(const void* src, float* dst, int64_t n_blocks) {
  const auto* b = static_cast<const BlockQ3_K*>(src);
  for (int64_t i = 0; i < n_blocks; ++i, ++b, dst += kQK_K) {
    const float d = Fp16ToFp32(b->d);
    for (int e = 0; e < kQK_K; ++e) {
      const int k = e / 32, l = e % 32;
      const int lo = (b->qs[32 * (k / 4) + l] >> (2 * (k % 4))) & 3;
      const int q = lo - (((b->hmask[l] >> k) & 1) ? 0 : 4);
      const float dl = d * static_cast<float>(ScaleQ3K(e / 16, b->scales));
      dst[e] = dl * static_cast<float>(q);
    }
  }
}

// Element 64c + 32h + l (c < 4, h < 2, l < 32): nibble h of qs[32c + l], sub-block
// 2c + h. x = (d * sc) * q - (dmin * m).
void Q4_K(const void* src, float* dst, int64_t n_blocks) {
  const auto* b = static_cast<const BlockQ4_K*>(src);
  for (int64_t i = 0; i < n_blocks; ++i, ++b, dst += kQK_K) {
    const float d = Fp16ToFp32(b->d), dmin = Fp16ToFp32(b->dmin);
    for (int s = 0; s < 8; ++s) {
      uint8_t sc, m;
      ScaleMinK4(s, b->scales, &sc, &m);
      const float dl = d * static_cast<float>(sc), ml = dmin * static_cast<float>(m);
      const uint8_t* q = b->qs + 32 * (s / 2);
      const int shift = 4 * (s % 2);
      for (int l = 0; l < 32; ++l) {
        dst[32 * s + l] = dl * static_cast<float>((q[l] >> shift) & 0xF) - ml;
      }
    }
  }
}

// As Q4_K, plus bit s of qh[l] is bit 4 of element 32s + l.
void Q5_K(const void* src, float* dst, int64_t n_blocks) {
  const auto* b = static_cast<const BlockQ5_K*>(src);
  for (int64_t i = 0; i < n_blocks; ++i, ++b, dst += kQK_K) {
    const float d = Fp16ToFp32(b->d), dmin = Fp16ToFp32(b->dmin);
    for (int s = 0; s < 8; ++s) {
      uint8_t sc, m;
      ScaleMinK4(s, b->scales, &sc, &m);
      const float dl = d * static_cast<float>(sc), ml = dmin * static_cast<float>(m);
      const uint8_t* q = b->qs + 32 * (s / 2);
      const int shift = 4 * (s % 2);
      for (int l = 0; l < 32; ++l) {
        const int v = ((q[l] >> shift) & 0xF) | (((b->qh[l] >> s) & 1) << 4);
        dst[32 * s + l] = dl * static_cast<float>(v) - ml;
      }
    }
  }
}

// Element 128n + 32k + l (n < 2, k < 4, l < 32): low nibble k/2 of ql[64n + 32(k%2) + l],
// high bits (qh[32n + l] >> 2k) & 3, minus 32. Scale index e/16. x = (d * sc) * q.
void Q6_K(const void* src, float* dst, int64_t n_blocks) {
  const auto* b = static_cast<const BlockQ6_K*>(src);
  for (int64_t i = 0; i < n_blocks; ++i, ++b, dst += kQK_K) {
    const float d = Fp16ToFp32(b->d);
    for (int e = 0; e < kQK_K; ++e) {
      const int n = e / 128, k = (e / 32) % 4, l = e % 32;
      const int lo = (b->ql[64 * n + 32 * (k % 2) + l] >> (4 * (k / 2))) & 0xF;
      const int hi = (b->qh[32 * n + l] >> (2 * k)) & 3;
      const float dl = d * static_cast<float>(b->scales[e / 16]);
      dst[e] = dl * static_cast<float>((lo | (hi << 4)) - 32);
    }
  }
}

// x = d * q (bsums are redundant for dequantization).
void Q8_K(const void* src, float* dst, int64_t n_blocks) {
  const auto* b = static_cast<const BlockQ8_K*>(src);
  for (int64_t i = 0; i < n_blocks; ++i, ++b, dst += kQK_K) {
    const float d = b->d;
    for (int j = 0; j < kQK_K; ++j) dst[j] = d * static_cast<float>(b->qs[j]);
  }
}

}  // namespace uaii::dequant
