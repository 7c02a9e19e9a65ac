#include "arith/bound_math.h"

#include <algorithm>

namespace loom::arith::bound_math {

namespace {

// 128 bits hold every product of two int64 values, so finite arithmetic is exact; kInf is
// far beyond any such product and stands for an unbounded end.
using Wide = __int128;
constexpr Wide kInf = Wide{1} << 100;
constexpr Wide kWideMax = INT64_MAX;
constexpr Wide kWideMin = INT64_MIN;

struct Interval {
  Wide lo;
  Wide hi;
};

bool IsInfinite(Wide v) { return v == kInf || v == -kInf; }

// A finite result outside int64 saturates to the infinity on its side.
Wide Saturate(Wide v) {
  if (v > kWideMax) return kInf;
  if (v < kWideMin) return -kInf;
  return v;
}

int Sign(Wide v) { return v > 0 ? 1 : (v < 0 ? -1 : 0); }

Interval Widen(const ConstIntBound& b) {
  return {b.min_value == ConstIntBound::kNegInf ? -kInf : Wide{b.min_value},
          b.max_value == ConstIntBound::kPosInf ? kInf : Wide{b.max_value}};
}

ConstIntBound ToBound(const Interval& i) {
  int64_t lo = i.lo <= kWideMin ? ConstIntBound::kNegInf
                                : static_cast<int64_t>(std::min(i.lo, kWideMax));
  int64_t hi = i.hi >= kWideMax ? ConstIntBound::kPosInf
                                : static_cast<int64_t>(std::max(i.hi, kWideMin));
  return {lo, hi};
}

// Sums of ends: on a lower end an unbounded operand (-inf) wins over anything, on an upper
// end +inf does; an infinity of the other sign can only come from an empty set.
Wide AddLower(Wide a, Wide b) {
  if (a == -kInf || b == -kInf) return -kInf;
  if (a == kInf || b == kInf) return kInf;
  return Saturate(a + b);
}

Wide AddUpper(Wide a, Wide b) {
  if (a == kInf || b == kInf) return kInf;
  if (a == -kInf || b == -kInf) return -kInf;
  return Saturate(a + b);
}

Interval AddWide(const Interval& a, const Interval& b) {
  return {AddLower(a.lo, b.lo), AddUpper(a.hi, b.hi)};
}

Interval NegateWide(const Interval& a) { return {Saturate(-a.hi), Saturate(-a.lo)}; }

Interval UnionWide(const Interval& a, const Interval& b) {
  return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
}

// Zero times an unbounded factor is zero: a factor that is exactly zero wins.
Wide Product(Wide a, Wide b) {
  if (a == 0 || b == 0) return 0;
  if (IsInfinite(a) || IsInfinite(b)) return Sign(a) * Sign(b) * kInf;
  return Saturate(a * b);
}

Wide FloorDivFinite(Wide a, Wide b) {
  Wide q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

Wide FloorModFinite(Wide a, Wide b) { return a - b * FloorDivFinite(a, b); }

enum class Rounding { kTrunc, kFloor };

// The values a quotient can approach at one corner of the (dividend, divisor) box, with
// divisor != 0. Only an infinite-over-infinite corner is not a single value.
Interval CornerQuotient(Wide a, Wide b, Rounding rounding) {
  const bool opposite_signs = Sign(a) * Sign(b) < 0;
  // A finite dividend over an unbounded divisor: the quotient tends to 0 from one side.
  const Wide tiny = (rounding == Rounding::kFloor && opposite_signs) ? -1 : 0;
  if (!IsInfinite(a) && !IsInfinite(b)) {
    Wide q = rounding == Rounding::kFloor ? FloorDivFinite(a, b) : a / b;
    Wide s = Saturate(q);
    return {s, s};
  }
  if (!IsInfinite(b)) {
    Wide s = Sign(a) * Sign(b) * kInf;
    return {s, s};
  }
  if (!IsInfinite(a)) return {tiny, tiny};
  Wide huge = Sign(a) * Sign(b) * kInf;
  return {std::min(tiny, huge), std::max(tiny, huge)};
}

// The quotient is monotone in each operand while the divisor keeps one sign, so its
// extremes lie at the corners.
Interval DivideBySignedPart(const Interval& a, const Interval& part, Rounding rounding) {
  Interval result = CornerQuotient(a.lo, part.lo, rounding);
  result = UnionWide(result, CornerQuotient(a.lo, part.hi, rounding));
  result = UnionWide(result, CornerQuotient(a.hi, part.lo, rounding));
  return UnionWide(result, CornerQuotient(a.hi, part.hi, rounding));
}

// The divisor's range without zero, as its negative and its positive part.
struct DivisorParts {
  std::optional<Interval> negative;
  std::optional<Interval> positive;
};

DivisorParts SplitAtZero(const Interval& b) {
  DivisorParts parts;
  if (b.lo <= -1) parts.negative = Interval{b.lo, std::min<Wide>(b.hi, -1)};
  if (b.hi >= 1) parts.positive = Interval{std::max<Wide>(b.lo, 1), b.hi};
  return parts;
}

template <typename PerPart>
std::optional<ConstIntBound> OverDivisorParts(const Interval& b, PerPart per_part) {
  DivisorParts parts = SplitAtZero(b);
  std::optional<Interval> result;
  for (const std::optional<Interval>& part : {parts.negative, parts.positive}) {
    if (!part) continue;
    Interval r = per_part(*part);
    result = result ? UnionWide(*result, r) : r;
  }
  if (!result) return std::nullopt;
  return ToBound(*result);
}

bool IsFiniteConstant(const Interval& i) { return i.lo == i.hi && !IsInfinite(i.lo); }
bool IsFinite(const Interval& i) { return !IsInfinite(i.lo) && !IsInfinite(i.hi); }

Interval FloorModBySignedPart(const Interval& a, const Interval& part) {
  // Within one period of a constant divisor the remainder just follows the dividend.
  if (IsFiniteConstant(part) && IsFinite(a) &&
      FloorDivFinite(a.lo, part.lo) == FloorDivFinite(a.hi, part.lo)) {
    return {FloorModFinite(a.lo, part.lo), FloorModFinite(a.hi, part.lo)};
  }
  if (part.lo > 0) {
    Interval r{0, part.hi == kInf ? kInf : part.hi - 1};
    if (a.lo >= 0) r.hi = std::min(r.hi, a.hi);  // a non-negative remainder never exceeds a
    return r;
  }
  Interval r{part.lo == -kInf ? -kInf : part.lo + 1, 0};
  if (a.hi <= 0) r.lo = std::max(r.lo, a.lo);
  return r;
}

Wide FloorDivAllowingInfinity(Wide a, Wide b) {
  if (IsInfinite(a)) return Sign(a) * Sign(b) * kInf;
  return FloorDivFinite(a, b);
}

Wide CeilDivAllowingInfinity(Wide a, Wide b) { return -FloorDivAllowingInfinity(-a, b); }

}  // namespace

ConstIntBound TypeRange(DataType t) {
  if (!t.is_integer_like()) return ConstIntBound::Everything();
  return {t.min_int_value(), t.max_int_value()};
}

ConstIntBound Intersect(const ConstIntBound& a, const ConstIntBound& b) {
  return {std::max(a.min_value, b.min_value), std::min(a.max_value, b.max_value)};
}

ConstIntBound Union(const ConstIntBound& a, const ConstIntBound& b) {
  return {std::min(a.min_value, b.min_value), std::max(a.max_value, b.max_value)};
}

bool IsEmpty(const ConstIntBound& a) { return a.min_value > a.max_value; }

ConstIntBound Add(const ConstIntBound& a, const ConstIntBound& b) {
  return ToBound(AddWide(Widen(a), Widen(b)));
}

ConstIntBound Sub(const ConstIntBound& a, const ConstIntBound& b) {
  return ToBound(AddWide(Widen(a), NegateWide(Widen(b))));
}

ConstIntBound Negate(const ConstIntBound& a) { return ToBound(NegateWide(Widen(a))); }

ConstIntBound Mul(const ConstIntBound& a, const ConstIntBound& b) {
  Interval x = Widen(a), y = Widen(b);
  const Wide corners[] = {Product(x.lo, y.lo), Product(x.lo, y.hi), Product(x.hi, y.lo),
                          Product(x.hi, y.hi)};
  return ToBound({*std::min_element(std::begin(corners), std::end(corners)),
                  *std::max_element(std::begin(corners), std::end(corners))});
}

std::optional<ConstIntBound> TruncDiv(const ConstIntBound& a, const ConstIntBound& b) {
  Interval x = Widen(a);
  return OverDivisorParts(Widen(b), [&](const Interval& part) {
    return DivideBySignedPart(x, part, Rounding::kTrunc);
  });
}

std::optional<ConstIntBound> FloorDiv(const ConstIntBound& a, const ConstIntBound& b) {
  Interval x = Widen(a);
  return OverDivisorParts(Widen(b), [&](const Interval& part) {
    return DivideBySignedPart(x, part, Rounding::kFloor);
  });
}

std::optional<ConstIntBound> TruncMod(const ConstIntBound& a, const ConstIntBound& b) {
  Interval x = Widen(a), y = Widen(b);
  // The remainder has the dividend's sign, and a magnitude below the divisor's and at most
  // the dividend's.
  Wide magnitude = std::max<Wide>(y.lo < 0 ? -y.lo : 0, y.hi > 0 ? y.hi : 0);
  if (magnitude == 0) return std::nullopt;
  if (IsFiniteConstant(y) && IsFinite(x) && (x.lo >= 0 || x.hi <= 0) &&
      x.lo / y.lo == x.hi / y.lo) {
    return ToBound({x.lo % y.lo, x.hi % y.lo});
  }
  Wide limit = magnitude == kInf ? kInf : magnitude - 1;
  Interval r{x.lo >= 0 ? 0 : std::max(x.lo, -limit), x.hi <= 0 ? 0 : std::min(x.hi, limit)};
  return ToBound(r);
}

std::optional<ConstIntBound> FloorMod(const ConstIntBound& a, const ConstIntBound& b) {
  Interval x = Widen(a);
  return OverDivisorParts(Widen(b),
                          [&](const Interval& part) { return FloorModBySignedPart(x, part); });
}

ConstIntBound DivideExactly(const ConstIntBound& product, int64_t factor) {
  Interval p = Widen(product);
  Wide f = factor;
  // Dividing by a negative factor swaps which end of the product bounds which end of x.
  const Wide low_end = f > 0 ? p.lo : p.hi, high_end = f > 0 ? p.hi : p.lo;
  return ToBound({Saturate(CeilDivAllowingInfinity(low_end, f)),
                  Saturate(FloorDivAllowingInfinity(high_end, f))});
}

bool CastPreservesValues(DataType from, DataType to) {
  if (!from.is_integer_like() || !to.is_integer_like()) return false;
  if (from.is_bool()) return true;
  if (to.is_bool()) return false;
  if (from.is_int()) return to.is_int() && to.bits() >= from.bits();
  return to.is_uint() ? to.bits() >= from.bits() : to.bits() > from.bits();
}

}  // namespace loom::arith::bound_math
