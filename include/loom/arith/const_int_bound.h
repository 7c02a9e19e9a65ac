// Constant integer bounds: for an integer expression, an interval [min_value, max_value] of
// int64 that contains every value it can take given the bound variables. kPosInf/kNegInf
// stand for "unbounded"; arithmetic on them saturates instead of overflowing.
#pragma once

#include <cstdint>
#include <functional>
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
  // Narrows bounds of variables compared with constants in `constraint` (x < 8, 0 <= x,
  // conjunctions of those) until the returned function is called to undo it.
  std::function<void()> EnterConstraint(const PrimExpr& constraint);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom::arith
