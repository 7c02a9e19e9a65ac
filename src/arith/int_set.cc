// The IntSet value type and the set operations callers combine results with (Union,
// Intersect, regions). Evaluating expressions over sets is in int_set_eval.cc.
#include "loom/arith/int_set.h"

#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/ir/structural.h"

namespace loom::arith {

namespace {

PrimExpr SimplifyEnd(Analyzer* analyzer, const PrimExpr& end) {
  if (!end.defined() || end.as<IntImmNode>()) return end;
  return analyzer->Simplify(end);
}

bool SameExpr(const PrimExpr& a, const PrimExpr& b) {
  return a.same_as(b) || StructuralEqual(a, b);
}

}  // namespace

IntSet IntSet::Interval(PrimExpr min, PrimExpr max) {
  int64_t lo = 0, hi = 0;
  if (IsConstInt(min, &lo) && IsConstInt(max, &hi) && lo > hi) return Nothing();
  IntSet set;
  set.min_ = std::move(min);
  set.max_ = std::move(max);
  return set;
}

IntSet IntSet::SinglePoint(PrimExpr point) {
  LOOM_ICHECK(point.defined()) << "IntSet::SinglePoint of an undefined expression";
  return Interval(point, point);
}

IntSet IntSet::FromRange(const Range& range) { return FromMinExtent(range->min, range->extent); }

IntSet IntSet::FromMinExtent(PrimExpr min, PrimExpr extent) {
  int64_t extent_value = 0;
  if (IsConstInt(extent, &extent_value) && extent_value == 1) return SinglePoint(min);
  PrimExpr max = min + (extent - 1);
  return Interval(std::move(min), std::move(max));
}

IntSet IntSet::Everything() { return IntSet(); }

IntSet IntSet::Nothing() {
  IntSet set;
  set.is_nothing_ = true;
  return set;
}

bool IntSet::is_single_point() const {
  return !is_nothing_ && min_.defined() && max_.defined() && SameExpr(min_, max_);
}

bool IntSet::CanProveSinglePoint(Analyzer* analyzer) const {
  if (is_single_point()) return true;
  return !is_nothing_ && min_.defined() && max_.defined() && analyzer->CanProveEqual(min_, max_);
}

Range IntSet::CoverRange(Analyzer* analyzer) const {
  if (is_nothing_) return Range(IntImm(DataType::Int(32), 0), IntImm(DataType::Int(32), 0));
  LOOM_CHECK_USER(has_lower_bound() && has_upper_bound())
      << "cannot cover the unbounded integer set " << str()
      << " by a Range: give the largest range allowed, CoverRange(analyzer, max_range)";
  if (is_single_point()) return Range(min_, make_const(min_.dtype(), int64_t{1}));
  return Range(min_, SimplifyEnd(analyzer, max_ - min_ + 1));
}

Range IntSet::CoverRange(Analyzer* analyzer, const Range& max_range) const {
  if (is_nothing_) return Range(max_range->min, make_zero(max_range->extent.dtype()));
  IntSet bounded = Interval(has_lower_bound() ? min_ : max_range->min,
                            has_upper_bound() ? max_ : max_range->min + (max_range->extent - 1));
  return bounded.CoverRange(analyzer);
}

std::string IntSet::str() const {
  if (is_nothing_) return "{}";
  return "[" + (min_.defined() ? ToScript(min_) : std::string("-inf")) + ", " +
         (max_.defined() ? ToScript(max_) : std::string("+inf")) + "]";
}

IntSet Union(Analyzer* analyzer, const IntSet& a, const IntSet& b) {
  if (a.is_nothing()) return b;
  if (b.is_nothing()) return a;
  auto end = [&](const PrimExpr& x, const PrimExpr& y, bool lower) -> PrimExpr {
    if (!x.defined() || !y.defined()) return PrimExpr();
    if (SameExpr(x, y)) return x;
    return SimplifyEnd(analyzer, lower ? min(x, y) : max(x, y));
  };
  return IntSet::Interval(end(a.min(), b.min(), true), end(a.max(), b.max(), false));
}

IntSet Intersect(Analyzer* analyzer, const IntSet& a, const IntSet& b) {
  if (a.is_nothing() || b.is_nothing()) return IntSet::Nothing();
  auto end = [&](const PrimExpr& x, const PrimExpr& y, bool lower) -> PrimExpr {
    if (!x.defined()) return y;
    if (!y.defined() || SameExpr(x, y)) return x;
    return SimplifyEnd(analyzer, lower ? max(x, y) : min(x, y));
  };
  PrimExpr lo = end(a.min(), b.min(), true), hi = end(a.max(), b.max(), false);
  if (lo.defined() && hi.defined() && analyzer->CanProve(hi < lo)) return IntSet::Nothing();
  return IntSet::Interval(lo, hi);
}

IntSet EvalSet(const PrimExpr& expr, const VarIntSetMap& dom_map) {
  Analyzer analyzer;
  return analyzer.int_set(expr, dom_map);
}

IntSet EvalSet(const Range& range, const VarIntSetMap& dom_map) {
  Analyzer analyzer;
  return analyzer.int_set(range, dom_map);
}

Array<IntSet> EvalRegion(Analyzer* analyzer, const Array<PrimExpr>& indices,
                         const VarIntSetMap& dom_map) {
  Array<IntSet> region;
  region.reserve(indices.size());
  for (const PrimExpr& index : indices) region.push_back(analyzer->int_set(index, dom_map));
  return region;
}

Array<IntSet> UnionRegion(Analyzer* analyzer, const Array<IntSet>& a, const Array<IntSet>& b) {
  LOOM_ICHECK(a.size() == b.size())
      << "UnionRegion of regions of rank " << a.size() << " and " << b.size();
  Array<IntSet> region;
  region.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) region.push_back(Union(analyzer, a[i], b[i]));
  return region;
}

}  // namespace loom::arith
