// Constant integer bounds: for an integer expression, an interval [min_value, max_value] of
// int64 that contains every value it can take given the bound variables, at every point
// where it is defined (a division by zero or a value that would wrap its type is undefined,
// as in EvalInt). A max_value of kPosInf or a min_value of kNegInf stands for "unbounded";
// arithmetic on them saturates instead of overflowing (kPosInf - 1 is kPosInf). Bounds are
// always non-empty (min_value <= max_value).
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>

#include "loom/ir/node.h"

namespace loom::arith {

class Analyzer;

struct ConstIntBound {
  static constexpr int64_t kPosInf = INT64_MAX;
  static constexpr int64_t kNegInf = INT64_MIN;
  int64_t min_value = kNegInf;
  int64_t max_value = kPosInf;

  static ConstIntBound Everything() { return {}; }
  static ConstIntBound Single(int64_t v) { return {v, v}; }
  bool is_const() const { return min_value == max_value; }
  bool operator==(const ConstIntBound& o) const {
    return min_value == o.min_value && max_value == o.max_value;
  }
};

// Prints "[min, max]", with -inf/+inf for unbounded ends.
std::ostream& operator<<(std::ostream& os, const ConstIntBound& bound);

class ConstIntBoundAnalyzer {
 public:
  explicit ConstIntBoundAnalyzer(Analyzer* parent);
  ~ConstIntBoundAnalyzer();

  // The bound of an expression (bool/int/uint; other types give Everything()).
  ConstIntBound operator()(const PrimExpr& expr);
  // Records var in [range.min, range.min + range.extent - 1] (bounds of the bounds).
  void Bind(const Var& var, const Range& range, bool allow_override = false);
  // Records var in bound directly.
  void Update(const Var& var, const ConstIntBound& bound, bool allow_override = false);
  // Narrows the bounds of variables according to `constraint` until the returned function is
  // called to undo it (scopes nest: undo them in reverse order). Understood: comparisons of
  // two integer expressions (x < n, 3 <= x, x == c, x != an end of x's range), solved
  // through +, -, * by a constant, min/max and widening casts down to variables
  // (x + 3 < 10 gives x <= 6); conjunctions, negations of those, and a bool variable. Other
  // facts are ignored; a fact that contradicts the current bounds leaves them unchanged.
  std::function<void()> EnterConstraint(const PrimExpr& constraint);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom::arith
