// Weight layouts on the device (vk_weights.cpp repacks the file's blocks into 32-bit
// words, so a block starts on a word):
//   F32   one word an element
//   F16   two elements a word (low half first); a row padded to whole words
//   Q8_0  9 words a block of 32: the f16 scale in word 0's low half, then 32 int8
//   Q4_0  5 words a block of 32: the f16 scale, then 16 bytes of nibbles (element
//         i < 16 in byte i's low nibble, element i + 16 in its high one), value - 8
// W is the words' buffer, `base` the row's first word, j the element.
#if defined(WTYPE_F32)
const uint kBlock = 1u, kBlockWords = 1u;
#elif defined(WTYPE_F16)
const uint kBlock = 2u, kBlockWords = 1u;
#elif defined(WTYPE_Q8_0)
const uint kBlock = 32u, kBlockWords = 9u;
#elif defined(WTYPE_Q4_0)
const uint kBlock = 32u, kBlockWords = 5u;
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
#endif
}
