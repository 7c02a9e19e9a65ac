#include "loom/runtime/float_codec.h"

#include <bit>
#include <cmath>

namespace loom {

uint16_t FloatToHalfBits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exponent = static_cast<int32_t>((x >> 23) & 0xffu);
  uint32_t mantissa = x & 0x7fffffu;
  if (exponent == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u : 0));
  int32_t half_exponent = exponent - 127 + 15;
  if (half_exponent >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);
  if (half_exponent <= 0) {
    // A half subnormal (or zero): the 24-bit significand shifted into the 10 low bits.
    if (half_exponent < -10) return static_cast<uint16_t>(sign);
    uint32_t significand = mantissa | 0x800000u;
    int shift = 14 - half_exponent;
    uint32_t kept = significand >> shift;
    uint32_t rest = significand & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (kept & 1))) ++kept;
    return static_cast<uint16_t>(sign | kept);
  }
  uint32_t half = sign | (static_cast<uint32_t>(half_exponent) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fffu;
  // Rounding up may carry into the exponent, which is exactly right (up to infinity).
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1))) ++half;
  return static_cast<uint16_t>(half);
}

float HalfBitsToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t FloatToBFloat16Bits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1);  // round to nearest even
  return static_cast<uint16_t>(x >> 16);
}

float BFloat16BitsToFloat(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

double RoundToFloatType(double value, DataType t) {
  if (t.bits() == 64) return value;
  float single = static_cast<float>(value);
  if (t.is_bfloat16()) return BFloat16BitsToFloat(FloatToBFloat16Bits(single));
  if (t.bits() == 16) return HalfBitsToFloat(FloatToHalfBits(single));
  return single;
}

}  // namespace loom
