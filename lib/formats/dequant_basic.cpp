// Dequantizers for the plain float formats and the 32-element block formats.
#include <cstring>

#include "formats/dequant.h"
#include "formats/fp16.h"
#include "formats/quant_blocks.h"

namespace uaii::dequant {
namespace {
using namespace uaii::quant;

// Bit 4 of element j of a Q5 block (little-endian u32 qh).
inline uint32_t Q5High(const uint8_t qh[4]) {
  uint32_t h;
  std::memcpy(&h, qh, 4);
  return h;
}
}  // namespace

void F32(const void* src, float* dst, int64_t n) {
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void F16(const void* src, float* dst, int64_t n) {
  const uint8_t* p = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, p + 2 * i, 2);
    dst[i] = Fp16ToFp32(h);
  }
}

void BF16(const void* src, float* dst, int64_t n) {
  const uint8_t* p = static_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, p + 2 * i, 2);
    dst[i] = Bf16ToFp32(h);
  }
}

// x = d * (q - 8), q a nibble.
void Q4_0(const void* src, float* dst, int64_t n_blocks) {
  const auto* b = static_cast<const BlockQ4_0*>(src);
  for (int64_t i = 0; i < n_blocks; ++i, ++b, dst += kQK) {
    const float d = Fp16ToFp32(b->d);
    for (int j = 0; j < kQK / 2; ++j) {
      dst[j] = d * static_cast<float>((b->qs[j] & 0xF) - 8);
      dst[j + kQK / 2] = d * static_cast<float>((b->qs[j] >> 4) - 8);
    }
  }
}

// x = (d * q) + m, q a nibble.
void Q4_1(const void* src, float* dst, int64_t n_blocks) {
  const auto* b = static_cast<const BlockQ4_1*>(src);
  for (int64_t i = 0; i < n_blocks; ++i, ++b, dst += kQK) {
    const float d = Fp16ToFp32(b->d), m = Fp16ToFp32(b->m);
    for (int j = 0; j < kQK / 2; ++j) {
      const float x0 = d * static_cast<float>(b->qs[j] & 0xF);
      const float x1 = d * static_cast<float>(b->qs[j] >> 4);
      dst[j] = x0 + m;
      dst[j + kQK / 2] = x1 + m;
    }
  }
}

// x = d * (q - 16), q five bits.
void Q5_0(const void* src, float* dst, int64_t n_blocks) {
  const auto* b = static_cast<const BlockQ5_0*>(src);
  for (int64_t i = 0; i < n_blocks; ++i, ++b, dst += kQK) {
    const float d = Fp16ToFp32(b->d);
    const uint32_t qh = Q5High(b->qh);
    for (int j = 0; j < kQK / 2; ++j) {
      const int q0 = (b->qs[j] & 0xF) | (((qh >> j) & 1) << 4);
      const int q1 = (b->qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4);
      dst[j] = d * static_cast<float>(q0 - 16);
      dst[j + kQK / 2] = d * static_cast<float>(q1 - 16);
    }
  }
}

// x = (d * q) + m, q five bits.
void Q5_1(const void* src, float* dst, int64_t n_blocks) {
  const auto* b = static_cast<const BlockQ5_1*>(src);
  for (int64_t i = 0; i < n_blocks; ++i, ++b, dst += kQK) {
    const float d = Fp16ToFp32(b->d), m = Fp16ToFp32(b->m);
    const uint32_t qh = Q5High(b->qh);
    for (int j = 0; j < kQK / 2; ++j) {
      const int q0 = (b->qs[j] & 0xF) | (((qh >> j) & 1) << 4);
      const int q1 = (b->qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4);
      const float x0 = d * static_cast<float>(q0);
      const float x1 = d * static_cast<float>(q1);
      dst[j] = x0 + m;
      dst[j + kQK / 2] = x1 + m;
    }
  }
}

// x = d * q, q int8.
void Q8_0(const void* src, float* dst, int64_t n_blocks) {
  const auto* b = static_cast<const BlockQ8_0*>(src);
  for (int64_t i = 0; i < n_blocks; ++i, ++b, dst += kQK) {
    const float d = Fp16ToFp32(b->d);
    for (int j = 0; j < kQK; ++j) dst[j] = d * static_cast<float>(b->qs[j]);
  }
}

}  // namespace uaii::dequant
