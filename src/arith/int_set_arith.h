// Interval arithmetic on IntSets with symbolic ends: given the sets of an operator's
// operands, a set holding every value of the operator. Used by the IntSet evaluator.
//
// Each function takes the operand sets and the result's (element) type. When every end is
// constant the work is done exactly on ConstIntBound (bound_math); otherwise the ends are
// combined symbolically where the operator is monotone in them, and where it is not, the
// operands are relaxed to constant intervals through the analyzer's const_int_bound.
#pragma once

#include <optional>

#include "loom/arith/const_int_bound.h"
#include "loom/arith/int_set.h"

namespace loom::arith {

class IntervalArith {
 public:
  explicit IntervalArith(Analyzer* analyzer) : analyzer_(analyzer) {}

  IntSet Add(const IntSet& a, const IntSet& b, DataType t) const;
  IntSet Sub(const IntSet& a, const IntSet& b, DataType t) const;
  IntSet Mul(const IntSet& a, const IntSet& b, DataType t) const;
  IntSet TruncDiv(const IntSet& a, const IntSet& b, DataType t) const;
  IntSet TruncMod(const IntSet& a, const IntSet& b, DataType t) const;
  IntSet FloorDiv(const IntSet& a, const IntSet& b, DataType t) const;
  IntSet FloorMod(const IntSet& a, const IntSet& b, DataType t) const;
  IntSet Min(const IntSet& a, const IntSet& b) const;
  IntSet Max(const IntSet& a, const IntSet& b) const;
  // Union without simplifying the ends (the evaluator simplifies once, at the end).
  IntSet Hull(const IntSet& a, const IntSet& b) const;

  // A constant interval holding the values of type t in the set (not Nothing): each
  // symbolic end is replaced by its const_int_bound on the outer side. Values of an operand
  // lie in its type's range wherever it is defined, so unbounded ends become the type's
  // limits.
  ConstIntBound Relax(const IntSet& set, DataType t) const;
  // The set's constant ends (within t's range), when both are constants or unbounded (not
  // Nothing).
  static std::optional<ConstIntBound> ExactConst(const IntSet& set, DataType t);
  // The set of a constant interval for an expression of integer type t. An end at or past
  // the type's limit says nothing a value of type t does not, so it becomes unbounded;
  // except that unsigned and bool values keep their lower end 0 and bools their upper end 1.
  // An interval wholly outside the type holds only overflows, which are undefined: Nothing.
  static IntSet FromConst(const ConstIntBound& bound, DataType t);

 private:
  enum class Rounding { kTrunc, kFloor };
  IntSet Divide(const IntSet& a, const IntSet& b, DataType t, Rounding rounding) const;
  IntSet Remainder(const IntSet& a, const IntSet& b, DataType t, Rounding rounding) const;
  // The sign of a single-point set when const_int_bound decides it: +1 for >= 0, -1 for
  // <= 0, 0 when unknown. `strict` asks for > 0 / < 0 instead (a divisor).
  int KnownSign(const IntSet& point, bool strict) const;
  // The set scaled by a single point of known sign (monotone, so the ends map over).
  static IntSet Scale(const IntSet& set, const PrimExpr& factor, int sign);

  Analyzer* analyzer_;
};

}  // namespace loom::arith
