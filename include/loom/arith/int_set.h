// Integer sets for bound inference: an IntSet is an interval [min, max] whose ends are
// symbolic expressions (an undefined end: unbounded on that side), or the empty set.
// Evaluating an expression over variable sets gives an interval holding all its values:
//
//   arith::Analyzer ana;
//   VarIntSetMap dom{{j, IntSet::FromRange(Range(0, n))}};   // j in [0, n - 1]
//   ana.int_set(i * 16 + j, dom)                             // [i * 16, i * 16 + (n - 1)]
//
// Variables missing from the map stand for themselves (single points), so the ends may
// mention them: that is how a consumer's outer loop variables appear in the region of a
// producer that bound inference computes.
#pragma once

#include <string>
#include <unordered_map>

#include "loom/ir/node.h"

namespace loom::arith {

class Analyzer;

class IntSet {
 public:
  // [min, max]; an undefined end is unbounded. Constant ends with min > max give Nothing().
  static IntSet Interval(PrimExpr min, PrimExpr max);
  static IntSet SinglePoint(PrimExpr point);
  // [range.min, range.min + range.extent - 1].
  static IntSet FromRange(const Range& range);
  static IntSet FromMinExtent(PrimExpr min, PrimExpr extent);
  static IntSet Everything();
  static IntSet Nothing();

  // Undefined when unbounded on that side, and for Nothing (check is_nothing() first).
  const PrimExpr& min() const { return min_; }
  const PrimExpr& max() const { return max_; }
  bool has_lower_bound() const { return min_.defined(); }
  bool has_upper_bound() const { return max_.defined(); }
  bool is_everything() const { return !is_nothing_ && !min_.defined() && !max_.defined(); }
  bool is_nothing() const { return is_nothing_; }
  // Both ends bounded and structurally equal.
  bool is_single_point() const;
  // Single point, or ends the analyzer proves equal (i * 4 and 4 * i).
  bool CanProveSinglePoint(Analyzer* analyzer) const;

  // [min, max] as Range(min, max - min + 1), extent simplified. Both ends must be bounded
  // (loom::Error otherwise); Nothing() gives Range(0, 0).
  Range CoverRange(Analyzer* analyzer) const;
  // As above, but an unbounded side takes that side of `max_range` (the whole tensor
  // dimension, for bound inference); Nothing() gives Range(max_range.min, 0).
  Range CoverRange(Analyzer* analyzer, const Range& max_range) const;

  // "[min, max]" with ends printed as IR text, "-inf"/"+inf" when unbounded; "{}" if empty.
  std::string str() const;

 private:
  PrimExpr min_, max_;
  bool is_nothing_ = false;
};

// Smallest interval covering both / the interval within both; symbolic ends are simplified.
IntSet Union(Analyzer* analyzer, const IntSet& a, const IntSet& b);
IntSet Intersect(Analyzer* analyzer, const IntSet& a, const IntSet& b);

using VarIntSetMap = std::unordered_map<Var, IntSet, ObjectHash, ObjectEqual>;

// Evaluates expressions over variable sets (Analyzer::int_set).
//
// Soundness: every value the expression takes, wherever it is defined, lies in the result.
// Arithmetic that would overflow the expression's type is undefined (as in EvalInt). A
// computed constant end at or beyond its type's limits is reported as unbounded (unsigned
// and bool sets keep their lower end 0, bool sets their upper end 1). Facts the parent
// Analyzer holds (bindings, constraints) are taken to be true, so dom_map must not widen a
// variable beyond what those facts say about it.
class IntSetAnalyzer {
 public:
  explicit IntSetAnalyzer(Analyzer* parent) : parent_(parent) {}
  // The set of values `expr` takes when each variable in dom_map ranges over its set;
  // variables not in dom_map are single points. Symbolic ends are simplified.
  IntSet operator()(const PrimExpr& expr, const VarIntSetMap& dom_map);
  // Every value in [range.min, range.min + range.extent) for some choice of the variables.
  IntSet operator()(const Range& range, const VarIntSetMap& dom_map);

 private:
  Analyzer* parent_;
};

// The same with a fresh Analyzer that knows no facts.
IntSet EvalSet(const PrimExpr& expr, const VarIntSetMap& dom_map);
IntSet EvalSet(const Range& range, const VarIntSetMap& dom_map);

// The region an access A[indices...] touches while dom_map's variables range over their
// sets: one set per dimension. Bound inference unions the regions of a producer's accesses
// (UnionRegion) and covers them with Ranges clipped to the producer's shape (CoverRange).
Array<IntSet> EvalRegion(Analyzer* analyzer, const Array<PrimExpr>& indices,
                         const VarIntSetMap& dom_map);
// Dimension-wise Union of two regions of the same rank.
Array<IntSet> UnionRegion(Analyzer* analyzer, const Array<IntSet>& a, const Array<IntSet>& b);

}  // namespace loom::arith
