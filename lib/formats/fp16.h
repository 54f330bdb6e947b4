// Half-precision conversions, bit-exact with ggml (and numpy's float16 / the gguf
// package's BF16 codec). Pure integer bit manipulation: no dependence on F16C or on
// the floating-point environment, so scalar and SIMD kernels agree bit for bit.
#pragma once
#include <bit>
#include <cstdint>

namespace uaii {

// IEEE binary16 -> binary32, exact for every input (subnormals, inf, NaN payloads).
inline float Fp16ToFp32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  uint32_t bits;
  if (exp == 0x1F) {                 // inf / NaN: keep the payload
    bits = sign | 0x7F800000u | (mant << 13);
  } else if (exp != 0) {             // normal: rebias 15 -> 127
    bits = sign | ((exp + 112u) << 23) | (mant << 13);
  } else if (mant == 0) {            // signed zero
    bits = sign;
  } else {                           // subnormal: normalise the mantissa
    int e = -1;
    do { mant <<= 1; ++e; } while ((mant & 0x400u) == 0);
    bits = sign | ((112u - e) << 23) | ((mant & 0x3FFu) << 13);
  }
  return std::bit_cast<float>(bits);
}

// IEEE binary32 -> binary16 with round-to-nearest-even (what ggml's GGML_FP32_TO_FP16
// does through F16C `_cvtss_sh(x, 0)` and through its portable fallback).
// Overflow gives inf; NaN stays NaN (quiet).
inline uint16_t Fp32ToFp16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) return sign | 0x7E00u | static_cast<uint16_t>((ax >> 13) & 0x1FFu);
  if (ax >= 0x47800000u) return sign | 0x7C00u;  // >= 65536 (and inf): overflow
  if (ax < 0x38800000u) {                        // below 2^-14: half subnormal or zero
    if (ax < 0x33000000u) return sign;           // < 2^-25: rounds to zero
    const uint32_t e = ax >> 23;
    const uint32_t m = (ax & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126u - e;             // 14..24 (value = m * 2^(e-150))
    uint32_t h = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (h & 1u))) ++h;
    return sign | static_cast<uint16_t>(h);
  }
  // Normal range: rebias, then round the 13 dropped bits to nearest even; a carry
  // out of the mantissa correctly bumps the exponent (up to inf).
  uint32_t h = ((ax - 0x38000000u) >> 13);
  const uint32_t rem = ax & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return sign | static_cast<uint16_t>(h);
}

// bfloat16 -> binary32: the top 16 bits of a float.
inline float Bf16ToFp32(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

// binary32 -> bfloat16 as ggml_compute_fp32_to_bf16: NaN forced quiet, otherwise
// round to nearest even.
inline uint16_t Fp32ToBf16(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 64u);
  return static_cast<uint16_t>((u + (0x7FFFu + ((u >> 16) & 1u))) >> 16);
}

}  // namespace uaii
