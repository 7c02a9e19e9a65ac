#include "loom/arith/int_set.h"
#include "loom/arith/analyzer.h"
namespace loom::arith {
IntSet IntSet::Interval(PrimExpr min, PrimExpr max) { IntSet s; s.min_ = min; s.max_ = max; return s; }
IntSet IntSet::SinglePoint(PrimExpr p) { return Interval(p, p); }
IntSet IntSet::FromRange(const Range& r) { return Interval(r->min, r->min); }
IntSet IntSet::Everything() { return IntSet(); }
IntSet IntSet::Nothing() { IntSet s; s.is_nothing_ = true; return s; }
bool IntSet::is_single_point() const { return min_.defined() && min_.same_as(max_); }
Range IntSet::CoverRange(Analyzer*) const { return Range(min_, max_); }
std::string IntSet::str() const { return ""; }
IntSet Union(Analyzer*, const IntSet& a, const IntSet&) { return a; }
IntSet Intersect(Analyzer*, const IntSet& a, const IntSet&) { return a; }
IntSet IntSetAnalyzer::operator()(const PrimExpr&, const VarIntSetMap&) { return IntSet::Everything(); }
}  // namespace loom::arith
