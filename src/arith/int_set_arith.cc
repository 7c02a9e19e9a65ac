#include "arith/int_set_arith.h"

#include "arith/bound_math.h"
#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"

namespace loom::arith {

namespace {

bool IsConstPoint(const IntSet& set, int64_t value) {
  int64_t v = 0;
  return set.is_single_point() && IsConstInt(set.min(), &v) && v == value;
}

IntSet FromOptionalConst(const std::optional<ConstIntBound>& bound, DataType t) {
  // No bound: the divisor is zero wherever the operands are defined, so the operator never
  // has a value.
  if (!bound) return IntSet::Nothing();
  return IntervalArith::FromConst(*bound, t);
}

// Where an operand is defined its value fits its type, so its bound narrows to the type's
// range; a bound disjoint from that range (ends of a wider type) is kept as it is.
ConstIntBound NarrowToType(const ConstIntBound& bound, DataType t) {
  ConstIntBound narrowed = bound_math::Intersect(bound, bound_math::TypeRange(t));
  return bound_math::IsEmpty(narrowed) ? bound : narrowed;
}

}  // namespace

std::optional<ConstIntBound> IntervalArith::ExactConst(const IntSet& set, DataType t) {
  LOOM_ICHECK(!set.is_nothing()) << "constant ends of the empty set";
  ConstIntBound bound;
  if (set.has_lower_bound() && !IsConstInt(set.min(), &bound.min_value)) return std::nullopt;
  if (set.has_upper_bound() && !IsConstInt(set.max(), &bound.max_value)) return std::nullopt;
  return NarrowToType(bound, t);
}

ConstIntBound IntervalArith::Relax(const IntSet& set, DataType t) const {
  LOOM_ICHECK(!set.is_nothing()) << "constant relaxation of the empty set";
  ConstIntBound bound;
  if (set.has_lower_bound() && !IsConstInt(set.min(), &bound.min_value)) {
    bound.min_value = analyzer_->const_int_bound(set.min()).min_value;
  }
  if (set.has_upper_bound() && !IsConstInt(set.max(), &bound.max_value)) {
    bound.max_value = analyzer_->const_int_bound(set.max()).max_value;
  }
  return NarrowToType(bound, t);
}

IntSet IntervalArith::FromConst(const ConstIntBound& bound, DataType t) {
  LOOM_ICHECK(t.is_integer_like() && t.is_scalar()) << "constant set of type " << t;
  const int64_t type_min = t.min_int_value(), type_max = t.max_int_value();
  // Values outside the type are overflows, undefined: none left means no value at all.
  if (bound_math::IsEmpty(bound) || bound.max_value < type_min || bound.min_value > type_max) {
    return IntSet::Nothing();
  }
  PrimExpr lower, upper;
  if (bound.min_value > type_min && bound.min_value <= type_max) {
    lower = IntImm(t, bound.min_value);
  } else if (bound.min_value <= type_min && !t.is_int()) {
    lower = IntImm(t, type_min);
  }
  if (bound.max_value >= type_min && bound.max_value < type_max) {
    upper = IntImm(t, bound.max_value);
  } else if (bound.max_value >= type_max && t.is_bool()) {
    upper = IntImm(t, type_max);
  }
  if (lower.defined() && upper.defined() && bound.min_value == bound.max_value) {
    return IntSet::SinglePoint(lower);
  }
  return IntSet::Interval(lower, upper);
}

int IntervalArith::KnownSign(const IntSet& point, bool strict) const {
  ConstIntBound bound = analyzer_->const_int_bound(point.min());
  const int64_t threshold = strict ? 1 : 0;
  if (bound.min_value >= threshold) return 1;
  if (bound.max_value <= -threshold) return -1;
  return 0;
}

IntSet IntervalArith::Scale(const IntSet& set, const PrimExpr& factor, int sign) {
  const PrimExpr& from_lower = sign > 0 ? set.min() : set.max();
  const PrimExpr& from_upper = sign > 0 ? set.max() : set.min();
  return IntSet::Interval(from_lower.defined() ? from_lower * factor : PrimExpr(),
                          from_upper.defined() ? from_upper * factor : PrimExpr());
}

IntSet IntervalArith::Add(const IntSet& a, const IntSet& b, DataType t) const {
  if (a.is_nothing() || b.is_nothing()) return IntSet::Nothing();
  auto ca = ExactConst(a, t), cb = ExactConst(b, t);
  if (ca && cb) return FromConst(bound_math::Add(*ca, *cb), t);
  if (a.is_single_point() && b.is_single_point()) return IntSet::SinglePoint(a.min() + b.min());
  bool lower = a.has_lower_bound() && b.has_lower_bound();
  bool upper = a.has_upper_bound() && b.has_upper_bound();
  return IntSet::Interval(lower ? a.min() + b.min() : PrimExpr(),
                          upper ? a.max() + b.max() : PrimExpr());
}

IntSet IntervalArith::Sub(const IntSet& a, const IntSet& b, DataType t) const {
  if (a.is_nothing() || b.is_nothing()) return IntSet::Nothing();
  auto ca = ExactConst(a, t), cb = ExactConst(b, t);
  if (ca && cb) return FromConst(bound_math::Sub(*ca, *cb), t);
  if (a.is_single_point() && b.is_single_point()) return IntSet::SinglePoint(a.min() - b.min());
  bool lower = a.has_lower_bound() && b.has_upper_bound();
  bool upper = a.has_upper_bound() && b.has_lower_bound();
  return IntSet::Interval(lower ? a.min() - b.max() : PrimExpr(),
                          upper ? a.max() - b.min() : PrimExpr());
}

IntSet IntervalArith::Mul(const IntSet& a, const IntSet& b, DataType t) const {
  if (a.is_nothing() || b.is_nothing()) return IntSet::Nothing();
  auto ca = ExactConst(a, t), cb = ExactConst(b, t);
  if (ca && cb) return FromConst(bound_math::Mul(*ca, *cb), t);
  if (IsConstPoint(a, 0) || IsConstPoint(b, 0)) return IntSet::SinglePoint(make_zero(t));
  if (a.is_single_point() && b.is_single_point()) return IntSet::SinglePoint(a.min() * b.min());
  if (b.is_single_point()) {
    if (int sign = KnownSign(b, false)) return Scale(a, b.min(), sign);
  }
  if (a.is_single_point()) {
    if (int sign = KnownSign(a, false)) return Scale(b, a.min(), sign);
  }
  ConstIntBound ra = Relax(a, t), rb = Relax(b, t);
  if (ra.min_value >= 0 && rb.min_value >= 0) {
    // Both factors non-negative: the product grows with each, so the ends multiply.
    bool lower = a.has_lower_bound() && b.has_lower_bound();
    bool upper = a.has_upper_bound() && b.has_upper_bound();
    return IntSet::Interval(lower ? a.min() * b.min() : PrimExpr(),
                            upper ? a.max() * b.max() : PrimExpr());
  }
  return FromConst(bound_math::Mul(ra, rb), t);
}

IntSet IntervalArith::Divide(const IntSet& a, const IntSet& b, DataType t,
                             Rounding rounding) const {
  if (a.is_nothing() || b.is_nothing() || IsConstPoint(b, 0)) return IntSet::Nothing();
  auto quotient = [rounding](const PrimExpr& x, const PrimExpr& y) {
    return rounding == Rounding::kFloor ? floordiv(x, y) : truncdiv(x, y);
  };
  auto const_quotient = [rounding](const ConstIntBound& x, const ConstIntBound& y) {
    return rounding == Rounding::kFloor ? bound_math::FloorDiv(x, y) : bound_math::TruncDiv(x, y);
  };
  auto ca = ExactConst(a, t), cb = ExactConst(b, t);
  if (ca && cb) return FromOptionalConst(const_quotient(*ca, *cb), t);
  if (a.is_single_point() && b.is_single_point()) {
    return IntSet::SinglePoint(quotient(a.min(), b.min()));
  }
  if (b.is_single_point()) {
    // A divisor of fixed sign makes the quotient monotone in the dividend (both roundings).
    if (int sign = KnownSign(b, true)) {
      const PrimExpr& from_lower = sign > 0 ? a.min() : a.max();
      const PrimExpr& from_upper = sign > 0 ? a.max() : a.min();
      return IntSet::Interval(from_lower.defined() ? quotient(from_lower, b.min()) : PrimExpr(),
                              from_upper.defined() ? quotient(from_upper, b.min()) : PrimExpr());
    }
  }
  return FromOptionalConst(const_quotient(Relax(a, t), Relax(b, t)), t);
}

IntSet IntervalArith::Remainder(const IntSet& a, const IntSet& b, DataType t,
                                Rounding rounding) const {
  if (a.is_nothing() || b.is_nothing() || IsConstPoint(b, 0)) return IntSet::Nothing();
  const bool floored = rounding == Rounding::kFloor;
  auto const_remainder = [floored](const ConstIntBound& x, const ConstIntBound& y) {
    return floored ? bound_math::FloorMod(x, y) : bound_math::TruncMod(x, y);
  };
  auto ca = ExactConst(a, t), cb = ExactConst(b, t);
  if (ca && cb) return FromOptionalConst(const_remainder(*ca, *cb), t);
  if (a.is_single_point() && b.is_single_point()) {
    return IntSet::SinglePoint(floored ? floormod(a.min(), b.min()) : truncmod(a.min(), b.min()));
  }
  if (cb && cb->is_const() && a.has_lower_bound() && a.has_upper_bound()) {
    // Ends in one period of a constant divisor: the remainder is the dividend shifted by
    // that period's start (for truncation the period of the dividend's sign).
    PrimExpr divisor = b.min();
    PrimExpr q_lower = floored ? floordiv(a.min(), divisor) : truncdiv(a.min(), divisor);
    PrimExpr q_upper = floored ? floordiv(a.max(), divisor) : truncdiv(a.max(), divisor);
    if (analyzer_->CanProve(q_lower == q_upper)) {
      PrimExpr offset = q_lower * divisor;
      return IntSet::Interval(a.min() - offset, a.max() - offset);
    }
  }
  if (!cb && b.is_single_point()) {
    // A symbolic divisor of known sign bounds the remainder by itself: floored remainders
    // take the divisor's sign, truncated ones the dividend's.
    if (int sign = KnownSign(b, true)) {
      const PrimExpr& p = b.min();
      PrimExpr toward_divisor = sign > 0 ? p - 1 : p + 1;
      if (floored) {
        return sign > 0 ? IntSet::Interval(make_zero(t), toward_divisor)
                        : IntSet::Interval(toward_divisor, make_zero(t));
      }
      ConstIntBound ra = Relax(a, t);
      PrimExpr magnitude = sign > 0 ? p - 1 : -1 - p;
      return IntSet::Interval(ra.min_value >= 0 ? make_zero(t) : 0 - magnitude,
                              ra.max_value <= 0 ? make_zero(t) : magnitude);
    }
  }
  return FromOptionalConst(const_remainder(Relax(a, t), Relax(b, t)), t);
}

IntSet IntervalArith::TruncDiv(const IntSet& a, const IntSet& b, DataType t) const {
  return Divide(a, b, t, Rounding::kTrunc);
}

IntSet IntervalArith::FloorDiv(const IntSet& a, const IntSet& b, DataType t) const {
  return Divide(a, b, t, Rounding::kFloor);
}

IntSet IntervalArith::TruncMod(const IntSet& a, const IntSet& b, DataType t) const {
  return Remainder(a, b, t, Rounding::kTrunc);
}

IntSet IntervalArith::FloorMod(const IntSet& a, const IntSet& b, DataType t) const {
  return Remainder(a, b, t, Rounding::kFloor);
}

IntSet IntervalArith::Min(const IntSet& a, const IntSet& b) const {
  if (a.is_nothing() || b.is_nothing()) return IntSet::Nothing();
  if (a.is_single_point() && b.is_single_point()) return IntSet::SinglePoint(min(a.min(), b.min()));
  bool lower = a.has_lower_bound() && b.has_lower_bound();
  PrimExpr upper = !a.has_upper_bound()   ? b.max()
                   : !b.has_upper_bound() ? a.max()
                                          : min(a.max(), b.max());
  return IntSet::Interval(lower ? min(a.min(), b.min()) : PrimExpr(), upper);
}

IntSet IntervalArith::Max(const IntSet& a, const IntSet& b) const {
  if (a.is_nothing() || b.is_nothing()) return IntSet::Nothing();
  if (a.is_single_point() && b.is_single_point()) return IntSet::SinglePoint(max(a.min(), b.min()));
  bool upper = a.has_upper_bound() && b.has_upper_bound();
  PrimExpr lower = !a.has_lower_bound()   ? b.min()
                   : !b.has_lower_bound() ? a.min()
                                          : max(a.min(), b.min());
  return IntSet::Interval(lower, upper ? max(a.max(), b.max()) : PrimExpr());
}

IntSet IntervalArith::Hull(const IntSet& a, const IntSet& b) const {
  if (a.is_nothing()) return b;
  if (b.is_nothing()) return a;
  bool lower = a.has_lower_bound() && b.has_lower_bound();
  bool upper = a.has_upper_bound() && b.has_upper_bound();
  return IntSet::Interval(lower ? min(a.min(), b.min()) : PrimExpr(),
                          upper ? max(a.max(), b.max()) : PrimExpr());
}

}  // namespace loom::arith
