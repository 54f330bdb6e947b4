#include "kernels/quantize_act.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "formats/fp16.h"

namespace uaii::kernels {
namespace {
using namespace uaii::quant;

// ggml's nearest_int: round to nearest even by adding 1.5 * 2^23 (valid for
// |f| <= 2^22, which |iscale * x| <= 127 satisfies).
inline int NearestInt(float f) {
  const float v = f + 12582912.f;
  int32_t i;
  std::memcpy(&i, &v, sizeof(i));
  return (i & 0x007fffff) - 0x00400000;
}

// Shared body of the Q8_0 / Q8_1 reference quantizers; returns d and sum(q).
inline float QuantizeBlock32(const float* x, int8_t* qs, int* sum) {
  float amax = 0.0f;
  for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  int s = 0;
  for (int j = 0; j < kQK; ++j) {
    qs[j] = static_cast<int8_t>(std::roundf(x[j] * id));
    s += qs[j];
  }
  *sum = s;
  return d;
}

}  // namespace

void QuantizeRowQ8_0(const float* x, BlockQ8_0* y, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    int sum;
    y[i].d = Fp32ToFp16(QuantizeBlock32(x, y[i].qs, &sum));
  }
}

void QuantizeRowQ8_1(const float* x, BlockQ8_1* y, int64_t n) {
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
    int sum;
    const float d = QuantizeBlock32(x, y[i].qs, &sum);
    y[i].d = Fp32ToFp16(d);
    y[i].s = Fp32ToFp16(static_cast<float>(sum) * d);
  }
}

void QuantizeRowQ8_K(const float* x, BlockQ8_K* y, int64_t n) {
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    float max = 0.0f, amax = 0.0f;
    for (int j = 0; j < kQK_K; ++j) {
      const float ax = std::fabs(x[j]);
      if (ax > amax) {
        amax = ax;
        max = x[j];
      }
    }
    BlockQ8_K& b = y[i];
    if (amax == 0.0f) {
      b.d = 0.0f;
      std::memset(b.qs, 0, sizeof(b.qs));
      std::memset(b.bsums, 0, sizeof(b.bsums));
      continue;
    }
    const float iscale = -127.f / max;
    for (int j = 0; j < kQK_K; ++j) {
      b.qs[j] = static_cast<int8_t>(std::min(127, NearestInt(iscale * x[j])));
    }
    for (int j = 0; j < kQK_K / 16; ++j) {
      int sum = 0;
      for (int l = 0; l < 16; ++l) sum += b.qs[16 * j + l];
      b.bsums[j] = static_cast<int16_t>(sum);
    }
    b.d = 1 / iscale;
  }
}

void ConvertRowF16(const float* x, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = Fp32ToFp16(x[i]);
}

void ConvertRowBF16(const float* x, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = Fp32ToBf16(x[i]);
}

}  // namespace uaii::kernels
