// Integer sets for bound inference: an IntSet is an interval [min, max] whose ends are
// symbolic expressions (undefined end: unbounded on that side). Evaluating an expression
// over variable ranges gives the interval that contains all its values.
#pragma once

#include <string>
#include <unordered_map>

#include "loom/ir/node.h"

namespace loom::arith {

class Analyzer;

class IntSet {
 public:
  // The empty set is represented by min > max (both constant) or by Nothing().
  static IntSet Interval(PrimExpr min, PrimExpr max);
  static IntSet SinglePoint(PrimExpr point);
  static IntSet FromRange(const Range& range);
  static IntSet Everything();
  static IntSet Nothing();

  const PrimExpr& min() const { return min_; }  // undefined: -inf
  const PrimExpr& max() const { return max_; }  // undefined: +inf
  bool has_lower_bound() const { return min_.defined(); }
  bool has_upper_bound() const { return max_.defined(); }
  bool is_everything() const { return !min_.defined() && !max_.defined(); }
  bool is_nothing() const { return is_nothing_; }
  bool is_single_point() const;
  // [min, max] as a Range (min, max - min + 1); both ends must be bounded.
  Range CoverRange(Analyzer* analyzer) const;

  std::string str() const;

 private:
  PrimExpr min_, max_;
  bool is_nothing_ = false;
};

// Smallest interval covering both / within both (symbolic ends are simplified).
IntSet Union(Analyzer* analyzer, const IntSet& a, const IntSet& b);
IntSet Intersect(Analyzer* analyzer, const IntSet& a, const IntSet& b);

using VarIntSetMap = std::unordered_map<Var, IntSet, ObjectHash, ObjectEqual>;

class IntSetAnalyzer {
 public:
  explicit IntSetAnalyzer(Analyzer* parent) : parent_(parent) {}
  // The set of values `expr` takes when each variable in dom_map ranges over its set;
  // variables not in dom_map are taken as single points (or from Analyzer bindings).
  IntSet operator()(const PrimExpr& expr, const VarIntSetMap& dom_map);

 private:
  Analyzer* parent_;
};

}  // namespace loom::arith
