// Sweeps of float32 inputs and errors in float32 ulps, for the math-function accuracy tests
// (the interpreted polynomials in tests/unit/tir, the compiled ones in tests/unit/target).
// A sweep steps through the ordered bit patterns of an interval, so every binade gets
// samples. Header-only.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

namespace loom::testing {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr float kMaxFloat = std::numeric_limits<float>::max();

// A total order on float bit patterns: -inf ... -0, +0 ... +inf as consecutive integers.
inline int64_t OrderedFromFloat(float f) {
  auto bits = static_cast<int64_t>(std::bit_cast<uint32_t>(f));
  return bits & 0x80000000 ? -(bits & 0x7FFFFFFF) : bits;
}
inline float FloatFromOrdered(int64_t ordered) {
  uint32_t bits = ordered < 0 ? (static_cast<uint32_t>(-ordered) | 0x80000000u)
                              : static_cast<uint32_t>(ordered);
  return std::bit_cast<float>(bits);
}

// About `points` floats from lo to hi, evenly spaced in bit-pattern order (both ends kept).
inline std::vector<float> FixedSweep(float lo, float hi, int64_t points) {
  int64_t first = OrderedFromFloat(lo), last = OrderedFromFloat(hi);
  int64_t stride = std::max<int64_t>(1, (last - first) / points);
  std::vector<float> values;
  for (int64_t ordered = first; ordered < last; ordered += stride) {
    values.push_back(FloatFromOrdered(ordered));
  }
  values.push_back(hi);
  return values;
}

inline std::vector<float> Concat(std::vector<std::vector<float>> parts) {
  std::vector<float> all;
  for (const auto& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

inline const std::vector<float> kSpecialValues = {
    0.0f, -0.0f, 1.0f, -1.0f, static_cast<float>(kInf), static_cast<float>(-kInf),
    static_cast<float>(kNaN), std::numeric_limits<float>::max(),
    -std::numeric_limits<float>::max(), std::numeric_limits<float>::min(),
    std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min()};

// The (base, exponent) grid of the pow accuracy tests: positive bases across all binades
// against exponents of both signs up to the overflow range, bases near 2 and near 1 against
// large exponents, negative bases against integers (and two non-integers). The grid grows
// linearly in `base_points` (the bases densify); `exponent_points` exponents per range.
struct PowGrid {
  std::vector<float> bases, exponents;
};

inline PowGrid MakePowGrid(int64_t base_points, int64_t exponent_points) {
  PowGrid grid;
  auto add = [&](const std::vector<float>& xs, const std::vector<float>& ys) {
    for (float x : xs) {
      for (float y : ys) {
        grid.bases.push_back(x);
        grid.exponents.push_back(y);
      }
    }
  };
  add(FixedSweep(0.0f, kMaxFloat, 2 * base_points),
      Concat({FixedSweep(-160.0f, 160.0f, exponent_points), kSpecialValues}));
  add(FixedSweep(0.5f, 2.0f, base_points), FixedSweep(-3000.0f, 3000.0f, exponent_points));
  add(FixedSweep(0.999f, 1.001f, base_points / 2), FixedSweep(-1e7f, 1e7f, exponent_points));
  add(Concat({FixedSweep(-300.0f, -0.0f, base_points), kSpecialValues}),
      {-7.0f, -2.0f, -1.0f, 0.5f, 2.0f, 3.0f, 17.0f, 0x1p24f, 0x1p24f + 2});
  return grid;
}

// d rounded to float32 (to nearest even), overflowing to infinity as IEEE does.
inline float RoundToFloat(double d) {
  if (std::fabs(d) >= 0x1.ffffffp127) return static_cast<float>(std::copysign(kInf, d));
  return static_cast<float>(d);
}

// |result - reference| in units of the float32 ulp at the reference (subnormal ulps below
// 2^-126). NaN must match NaN; an infinite result or reference must match exactly.
inline double UlpError(float result, double reference) {
  if (std::isnan(reference) || std::isnan(result)) {
    return std::isnan(reference) && std::isnan(result) ? 0 : kInf;
  }
  float rounded = RoundToFloat(reference);
  if (std::isinf(result) || std::isinf(rounded)) return result == rounded ? 0 : kInf;
  int exponent = reference == 0 ? -126 : std::max(std::ilogb(reference), -126);
  return std::fabs(static_cast<double>(result) - reference) / std::ldexp(1.0, exponent - 23);
}

// Enough digits to name a float32 exactly.
inline std::string FloatText(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", value);
  return text;
}

}  // namespace loom::testing
