// Weight layouts on the device (vk_weights.cpp repacks the file's blocks into 32-bit
// words, so a block starts on a word):
//   F32   one word an element
//   F16   two elements a word (low half first); a row padded to whole words
//   BF16  as F16, each half the high 16 bits of an f32
//   Q8_0  9 words a block of 32: the f16 scale in word 0's low half, then 32 int8
//   Q4_0  5 words a block of 32: the f16 scale, then 16 bytes of nibbles (element
//         i < 16 in byte i's low nibble, element i + 16 in its high one), value - 8
//   Q4_1, Q5_0, Q5_1, Q2_K - Q6_K: the file's block bytes as they are, each block
//         padded to whole words (Q5_0 22 -> 24 bytes, Q3_K 110 -> 112, Q6_K 210 -> 212),
//         read a byte or an f16 at a time (Byte, Half) at the offsets of
//         formats/quant_blocks.h.
// The kernels walk a row in units of kBlock elements (BlockDot); a K-quant super-block
// of 256 is 8 units of 32 sharing its scales, so a row of K elements has K / 32 units
// to spread over a group's invocations, as the 32-wide formats.
// W is the words' buffer, `base` the row's first word, j the element.
#if defined(WTYPE_F32)
const uint kBlock = 1u, kBlockWords = 1u;
#elif defined(WTYPE_F16)
const uint kBlock = 2u, kBlockWords = 1u;
#elif defined(WTYPE_Q8_0)
const uint kBlock = 32u, kBlockWords = 9u;
#elif defined(WTYPE_Q4_0)
const uint kBlock = 32u, kBlockWords = 5u;
#elif defined(WTYPE_BF16)
const uint kBlock = 2u, kBlockWords = 1u;
#else
#define WTYPE_BYTES  // a file block read byte by byte: kUnits units of 32 per block
#if defined(WTYPE_Q4_1)
const uint kUnits = 1u, kBlockWords = 5u;
#elif defined(WTYPE_Q5_0) || defined(WTYPE_Q5_1)
const uint kUnits = 1u, kBlockWords = 6u;
#elif defined(WTYPE_Q2_K)
const uint kUnits = 8u, kBlockWords = 21u;
#elif defined(WTYPE_Q3_K)
const uint kUnits = 8u, kBlockWords = 28u;
#elif defined(WTYPE_Q4_K)
const uint kUnits = 8u, kBlockWords = 36u;
#elif defined(WTYPE_Q5_K)
const uint kUnits = 8u, kBlockWords = 44u;
#elif defined(WTYPE_Q6_K)
const uint kUnits = 8u, kBlockWords = 53u;
#endif
const uint kBlock = 32u;

uint Byte(uint b, uint off) { return (W[b + off / 4u] >> (8u * (off % 4u))) & 0xFFu; }
float Half(uint b, uint off) { return unpackHalf2x16(W[b + off / 4u] >> (8u * (off % 4u))).x; }

// Q4_K / Q5_K: sub-block j's 6-bit scale and min from the 12 bytes at offset 4
// (ggml's get_scale_min_k4).
void ScaleMinK4(uint b, uint j, out float sc, out float m) {
  if (j < 4u) {
    sc = float(Byte(b, 4u + j) & 63u);
    m = float(Byte(b, 8u + j) & 63u);
  } else {
    sc = float((Byte(b, 8u + j) & 15u) | ((Byte(b, j) >> 6) << 4));
    m = float((Byte(b, 8u + j) >> 4) | ((Byte(b, 4u + j) >> 6) << 4));
  }
}

// Unit u (32 elements) of the block at word b, half h (elements 16h .. 16h + 15):
// element l's value is dl * Code(b, u, l) - ml.
void Scales(uint b, uint u, uint h, out float dl, out float ml) {
#if defined(WTYPE_Q4_1) || defined(WTYPE_Q5_1)
  dl = Half(b, 0u);
  ml = -Half(b, 2u);
#elif defined(WTYPE_Q5_0)
  dl = Half(b, 0u);
  ml = 16.0 * dl;
#elif defined(WTYPE_Q2_K)
  const uint s = Byte(b, 2u * u + h);  // scales[e / 16]
  dl = Half(b, 80u) * float(s & 15u);
  ml = Half(b, 82u) * float(s >> 4);
#elif defined(WTYPE_Q3_K)
  const uint i = 2u * u + h;
  const uint lo = (i < 8u ? Byte(b, 96u + i) : Byte(b, 88u + i) >> 4) & 15u;
  const uint hi = (Byte(b, 104u + (i & 3u)) >> (2u * (i >> 2))) & 3u;
  dl = Half(b, 108u) * float(int(lo | (hi << 4)) - 32);
  ml = 0.0;
#elif defined(WTYPE_Q4_K) || defined(WTYPE_Q5_K)
  float sc, m;
  ScaleMinK4(b, u, sc, m);
  dl = Half(b, 0u) * sc;
  ml = Half(b, 2u) * m;
#elif defined(WTYPE_Q6_K)
  dl = Half(b, 208u) * float(int(Byte(b, 192u + 2u * u + h) << 24) >> 24);
  ml = 32.0 * dl;
#endif
}

// Element l (< 32) of unit u's quantized code (formats/dequant_*.cpp's formulas).
float Code(uint b, uint u, uint l) {
#if defined(WTYPE_Q4_1)
  return float((Byte(b, 4u + l % 16u) >> (4u * (l / 16u))) & 15u);
#elif defined(WTYPE_Q5_0) || defined(WTYPE_Q5_1)
#if defined(WTYPE_Q5_0)
  const uint o = 6u;  // qs; the 32 high bits qh just before it
#else
  const uint o = 8u;
#endif
  const uint qh = Byte(b, o - 4u + l / 8u) >> (l % 8u);
  return float(((Byte(b, o + l % 16u) >> (4u * (l / 16u))) & 15u) | ((qh & 1u) << 4));
#elif defined(WTYPE_Q2_K)
  return float((Byte(b, 16u + 32u * (u / 4u) + l) >> (2u * (u % 4u))) & 3u);
#elif defined(WTYPE_Q3_K)
  const uint lo = (Byte(b, 32u + 32u * (u / 4u) + l) >> (2u * (u % 4u))) & 3u;
  return float(int(lo) - (((Byte(b, l) >> u) & 1u) != 0u ? 0 : 4));
#elif defined(WTYPE_Q4_K)
  return float((Byte(b, 16u + 32u * (u / 2u) + l) >> (4u * (u % 2u))) & 15u);
#elif defined(WTYPE_Q5_K)
  const uint lo = (Byte(b, 48u + 32u * (u / 2u) + l) >> (4u * (u % 2u))) & 15u;
  return float(lo | (((Byte(b, 16u + l) >> u) & 1u) << 4));
#elif defined(WTYPE_Q6_K)
  const uint n = u / 4u, k = u % 4u;
  const uint lo = (Byte(b, 64u * n + 32u * (k % 2u) + l) >> (4u * (k / 2u))) & 15u;
  const uint hi = (Byte(b, 128u + 32u * n + l) >> (2u * k)) & 3u;
  return float(lo | (hi << 4));
#endif
}
#endif

float Dequant(uint base, uint j) {
#if defined(WTYPE_F32)
  return uintBitsToFloat(W[base + j]);
#elif defined(WTYPE_F16)
  return unpackHalf2x16(W[base + j / 2u])[j & 1u];
#elif defined(WTYPE_Q8_0)
  const uint b = base + (j / 32u) * 9u, q = j % 32u;
  const float d = unpackHalf2x16(W[b]).x;
  const int v = int(W[b + 1u + q / 4u] << (24u - 8u * (q % 4u))) >> 24;
  return d * float(v);
#elif defined(WTYPE_Q4_0)
  const uint b = base + (j / 32u) * 5u, q = j % 32u;
  const float d = unpackHalf2x16(W[b]).x;
  const uint byte = (W[b + 1u + (q % 16u) / 4u] >> (8u * (q % 4u))) & 0xFFu;
  return d * (float(q < 16u ? byte & 15u : byte >> 4u) - 8.0);
#elif defined(WTYPE_BF16)
  const uint w = W[base + j / 2u];
  return uintBitsToFloat((j & 1u) == 0u ? w << 16 : w & 0xFFFF0000u);
#elif defined(WTYPE_BYTES)
  const uint unit = j / 32u, u = unit % kUnits, l = j % 32u;
  const uint b = base + (unit / kUnits) * kBlockWords;
  float dl, ml;
  Scales(b, u, l / 16u, dl, ml);
  return dl * Code(b, u, l) - ml;
#endif
}

// The dot of block `blk` of the row at `base` with x[xo .. xo + kBlock).
float BlockDot(uint base, uint blk, uint xo) {
#if defined(WTYPE_F32)
  return uintBitsToFloat(W[base + blk]) * X[xo];
#elif defined(WTYPE_F16)
  const vec2 w = unpackHalf2x16(W[base + blk]);
  return w.x * X[xo] + w.y * X[xo + 1u];
#elif defined(WTYPE_Q8_0)
  const uint b = base + blk * 9u;
  float s = 0.0;
  for (uint i = 0u; i < 8u; ++i) {
    const uint w = W[b + 1u + i];
    const uint xi = xo + i * 4u;
    s += float(int(w << 24) >> 24) * X[xi] + float(int(w << 16) >> 24) * X[xi + 1u] +
         float(int(w << 8) >> 24) * X[xi + 2u] + float(int(w) >> 24) * X[xi + 3u];
  }
  return unpackHalf2x16(W[b]).x * s;
#elif defined(WTYPE_Q4_0)
  const uint b = base + blk * 5u;
  float s = 0.0;
  for (uint i = 0u; i < 4u; ++i) {
    const uint w = W[b + 1u + i];
    for (uint k = 0u; k < 4u; ++k) {
      const uint byte = (w >> (8u * k)) & 0xFFu;
      const uint q = i * 4u + k;
      s += (float(byte & 15u) - 8.0) * X[xo + q] + (float(byte >> 4u) - 8.0) * X[xo + q + 16u];
    }
  }
  return unpackHalf2x16(W[b]).x * s;
#elif defined(WTYPE_BF16)
  const uint w = W[base + blk];
  return uintBitsToFloat(w << 16) * X[xo] + uintBitsToFloat(w & 0xFFFF0000u) * X[xo + 1u];
#elif defined(WTYPE_BYTES)
  // Per half of 16: dl * sum(code * x) - ml * sum(x).
  const uint u = blk % kUnits, b = base + (blk / kUnits) * kBlockWords;
  float s = 0.0;
  for (uint h = 0u; h < 2u; ++h) {
    float dl, ml, qx = 0.0, sx = 0.0;
    Scales(b, u, h, dl, ml);
    for (uint l = 16u * h; l < 16u * h + 16u; ++l) {
      const float x = X[xo + l];
      qx += Code(b, u, l) * x;
      sx += x;
    }
    s += dl * qx - ml * sx;
  }
  return s;
#endif
}
