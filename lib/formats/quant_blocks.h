// Byte layouts of ggml's block-quantized formats (ggml-common.h), pinned with
// static_assert. Structs are packed so that a block may sit at any byte address
// (GGUF only promises the tensor's start is aligned, and tests use odd offsets).
// Scales are stored as raw IEEE half bits (`uint16_t`), read with Fp16ToFp32.
//
// Element order inside a block (what dequantization and the dot kernels assume):
//  Q4_0/Q4_1: element j < 16 is the low nibble of qs[j], element j + 16 the high one.
//  Q5_0/Q5_1: as Q4, plus bit j of little-endian u32 qh is bit 4 of element j.
//  Q8_0/Q8_1/Q8_K: qs[j] is element j.
//  K-quants: see the dequantizers in dequant_k.cpp.
#pragma once
#include <cstdint>

namespace uaii::quant {

inline constexpr int kQK = 32;    // elements per block of the 32-wide formats
inline constexpr int kQK_K = 256; // elements per K-quant super-block

#pragma pack(push, 1)
struct BlockQ4_0 { uint16_t d; uint8_t qs[kQK / 2]; };
struct BlockQ4_1 { uint16_t d, m; uint8_t qs[kQK / 2]; };
struct BlockQ5_0 { uint16_t d; uint8_t qh[4]; uint8_t qs[kQK / 2]; };
struct BlockQ5_1 { uint16_t d, m; uint8_t qh[4]; uint8_t qs[kQK / 2]; };
struct BlockQ8_0 { uint16_t d; int8_t qs[kQK]; };
// Activation format for Q4_1/Q5_1 dot products: s = d * sum(qs) (as half).
struct BlockQ8_1 { uint16_t d, s; int8_t qs[kQK]; };

// 16 sub-blocks of 16; scales[i] = scale (low nibble) | min (high nibble).
struct BlockQ2_K { uint8_t scales[kQK_K / 16]; uint8_t qs[kQK_K / 4]; uint16_t d, dmin; };
// 16 sub-blocks of 16; 6-bit signed scales (offset 32) packed in 12 bytes.
struct BlockQ3_K { uint8_t hmask[kQK_K / 8]; uint8_t qs[kQK_K / 4]; uint8_t scales[12]; uint16_t d; };
// 8 sub-blocks of 32; 6-bit scales and mins packed in 12 bytes (get_scale_min_k4).
struct BlockQ4_K { uint16_t d, dmin; uint8_t scales[12]; uint8_t qs[kQK_K / 2]; };
struct BlockQ5_K { uint16_t d, dmin; uint8_t scales[12]; uint8_t qh[kQK_K / 8]; uint8_t qs[kQK_K / 2]; };
// 16 sub-blocks of 16 with int8 scales; 6-bit quants, offset 32.
struct BlockQ6_K { uint8_t ql[kQK_K / 2]; uint8_t qh[kQK_K / 4]; int8_t scales[kQK_K / 16]; uint16_t d; };
// Activation format for K-quant dot products: f32 scale, bsums[i] = sum of qs[16i..16i+15].
struct BlockQ8_K { float d; int8_t qs[kQK_K]; int16_t bsums[kQK_K / 16]; };
#pragma pack(pop)

static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ8_1) == 36);
static_assert(sizeof(BlockQ2_K) == 84);
static_assert(sizeof(BlockQ3_K) == 110);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ8_K) == 292);

// Unpacks sub-block `j` (0..7) of the 12-byte Q4_K/Q5_K scale field into a 6-bit
// scale and min (ggml's get_scale_min_k4).
inline void ScaleMinK4(int j, const uint8_t* q, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// Signed scale `i` (0..15) of a Q3_K block: 4 low bits from bytes 0..7, 2 high bits
// from bytes 8..11, minus 32.
inline int ScaleQ3K(int i, const uint8_t* s) {
  const int lo = (i < 8 ? s[i] : s[i - 8] >> 4) & 0xF;
  const int hi = (s[8 + (i & 3)] >> (2 * (i >> 2))) & 3;
  return (lo | (hi << 4)) - 32;
}

}  // namespace uaii::quant
