#include "sampling/rng.h"

#include <cmath>

namespace uaii::sampling {

double Rng::NextUniform() {
  constexpr double kTwo32 = 4294967296.0;         // 2^32
  constexpr double kTwo64 = kTwo32 * kTwo32;      // 2^64
  const double a = static_cast<double>(NextU32());
  const double b = static_cast<double>(NextU32());
  // Same operation order as the reference: sum = a * 1 + b * 2^32, each step in
  // double, then one division.
  double sum = 0.0;
  sum += a * 1.0;
  sum += b * kTwo32;
  double u = sum / kTwo64;
  if (u >= 1.0) u = std::nextafter(1.0, 0.0);
  return u;
}

uint32_t RandomSeed() {
  std::random_device rd;
  return static_cast<uint32_t>(rd());
}

}  // namespace uaii::sampling
