// K-quant scales unpacked all at once for the SIMD kernels, from three little-endian
// 32-bit words instead of byte-wise calls (same values as quant_blocks.h's helpers).
//
// Q4_K / Q5_K: the same values as quant::ScaleMinK4(j, ...) for j = 0..7:
//   bytes 0..3  (u0): sc[0..3] in bits 0..5, high bits 4..5 of sc[4..7] in bits 6..7
//   bytes 4..7  (u1): mn[0..3] in bits 0..5, high bits 4..5 of mn[4..7] in bits 6..7
//   bytes 8..11 (u2): low nibble sc[4..7], high nibble mn[4..7]
// so per byte b: sc[4+b] = (u2_b & 0xF) | ((u0_b >> 6) << 4), i.e. word-wise
// (u2 & 0x0F0F0F0F) | ((u0 >> 2) & 0x30303030) (the mask keeps each byte's own bits).
#pragma once
#include <cstdint>
#include <cstring>

namespace uaii::kernels {

// out[0..7]: scales of sub-blocks 0..7; out[8..15]: their mins.
inline void UnpackScalesMinsK4(const uint8_t* scales, uint8_t out[16]) {
  uint32_t u[3];
  std::memcpy(u, scales, 12);
  const uint32_t w[4] = {u[0] & 0x3F3F3F3Fu, (u[2] & 0x0F0F0F0Fu) | ((u[0] >> 2) & 0x30303030u),
                         u[1] & 0x3F3F3F3Fu, ((u[2] >> 4) & 0x0F0F0F0Fu) | ((u[1] >> 2) & 0x30303030u)};
  std::memcpy(out, w, 16);
}

// The 16 scales of a Q3_K block plus 32 (0..63; quant::ScaleQ3K(i, ...) + 32), from its
// 12 packed bytes: low nibbles in bytes 0..7 (scale i < 8: low nibble of byte i,
// i >= 8: high nibble of byte i - 8), 2 high bits of scale i in bits 2 (i / 4) ..
// 2 (i / 4) + 1 of byte 8 + i % 4. Word-wise with u0, u1, u2 = bytes 0..3, 4..7, 8..11:
//   scales 0..3:   (u0 & 0x0F0F0F0F)        | ((u2 << 4) & 0x30303030)
//   scales 4..7:   (u1 & 0x0F0F0F0F)        | ((u2 << 2) & 0x30303030)
//   scales 8..11:  ((u0 >> 4) & 0x0F0F0F0F) | (u2 & 0x30303030)
//   scales 12..15: ((u1 >> 4) & 0x0F0F0F0F) | ((u2 >> 2) & 0x30303030)
inline void UnpackScalesQ3K(const uint8_t* scales, uint8_t out[16]) {
  uint32_t u[3];
  std::memcpy(u, scales, 12);
  const uint32_t w[4] = {(u[0] & 0x0F0F0F0Fu) | ((u[2] << 4) & 0x30303030u),
                         (u[1] & 0x0F0F0F0Fu) | ((u[2] << 2) & 0x30303030u),
                         ((u[0] >> 4) & 0x0F0F0F0Fu) | (u[2] & 0x30303030u),
                         ((u[1] >> 4) & 0x0F0F0F0Fu) | ((u[2] >> 2) & 0x30303030u)};
  std::memcpy(out, w, 16);
}

}  // namespace uaii::kernels
