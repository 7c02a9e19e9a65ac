// IntSet: the value type, Union/Intersect/CoverRange, and evaluation of expressions over
// variable sets: exact constant cases for every operator (both signs of divisors, truncated
// vs floored), symbolic ends as bound inference needs them, and soundness over random
// expressions checked against EvalInt.
#include "loom/arith/int_set.h"

#include <gtest/gtest.h>

#include <optional>
#include <random>

#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/int_eval.h"
#include "loom/ir/printer.h"
#include "loom/ir/structural.h"
#include "loom/support/error.h"
#include "random_expr.h"

namespace loom::arith {
namespace {

using Bound = std::optional<int64_t>;
constexpr std::nullopt_t kUnbounded = std::nullopt;

IntSet Set(int64_t lo, int64_t hi) {
  return IntSet::Interval(IntImm(DataType::Int(32), lo), IntImm(DataType::Int(32), hi));
}

// The set's ends are the constants lo and hi (nullopt: unbounded on that side).
::testing::AssertionResult IsConstSet(const IntSet& set, Bound lo, Bound hi) {
  auto end_matches = [](const PrimExpr& end, Bound want) {
    int64_t value = 0;
    if (!want) return !end.defined();
    return end.defined() && IsConstInt(end, &value) && value == *want;
  };
  if (!set.is_nothing() && end_matches(set.min(), lo) && end_matches(set.max(), hi)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "got " << set.str() << ", want [" << (lo ? std::to_string(*lo) : "-inf") << ", "
         << (hi ? std::to_string(*hi) : "+inf") << "]";
}

// The set's ends evaluate like `want_min` and `want_max` at every point of `free` (the
// variables outside dom_map that the ends may mention), each over [lo, hi].
struct FreeVar {
  Var var;
  int64_t lo, hi;
};
::testing::AssertionResult EndsAre(const IntSet& set, const PrimExpr& want_min,
                                   const PrimExpr& want_max, const std::vector<FreeVar>& free) {
  if (set.is_nothing() || !set.has_lower_bound() || !set.has_upper_bound()) {
    return ::testing::AssertionFailure() << "got " << set.str();
  }
  std::vector<VarValueMap> points(1);
  for (const FreeVar& v : free) {
    std::vector<VarValueMap> next;
    for (const VarValueMap& p : points) {
      for (int64_t x = v.lo; x <= v.hi; ++x) {
        VarValueMap q = p;
        q[v.var] = x;
        next.push_back(q);
      }
    }
    points = next;
  }
  for (const VarValueMap& p : points) {
    if (EvalInt(set.min(), p) != EvalInt(want_min, p) ||
        EvalInt(set.max(), p) != EvalInt(want_max, p)) {
      return ::testing::AssertionFailure()
             << "got " << set.str() << ", want [" << want_min << ", " << want_max << "]";
    }
  }
  return ::testing::AssertionSuccess();
}

class IntSetEval : public ::testing::Test {
 protected:
  IntSet Eval(const PrimExpr& e) { return ana.int_set(e, dom); }
  void Relax(const Var& v, int64_t lo, int64_t hi) { dom[v] = Set(lo, hi); }

  Analyzer ana;
  VarIntSetMap dom;
  Var x{"x"}, y{"y"}, i{"i"}, j{"j"}, n{"n"};
};

// ---------------------------------------------------------------- the value type

TEST(IntSetValue, FactoriesAndPredicates) {
  Var x("x");
  EXPECT_TRUE(IntSet::Everything().is_everything());
  EXPECT_FALSE(IntSet::Everything().is_nothing());
  EXPECT_TRUE(IntSet::Nothing().is_nothing());
  EXPECT_FALSE(IntSet::Nothing().is_everything());
  EXPECT_FALSE(IntSet::Nothing().is_single_point());
  IntSet point = IntSet::SinglePoint(x);
  EXPECT_TRUE(point.is_single_point());
  EXPECT_TRUE(point.min().same_as(x));
  EXPECT_TRUE(IsConstSet(Set(3, 9), 3, 9));
  EXPECT_TRUE(IsConstSet(IntSet::Interval(PrimExpr(), 4), kUnbounded, 4));
  EXPECT_FALSE(IntSet::Interval(PrimExpr(), 4).has_lower_bound());
  EXPECT_TRUE(IntSet::Interval(PrimExpr(), 4).has_upper_bound());
}

TEST(IntSetValue, ConstantEndsOutOfOrderAreEmpty) {
  EXPECT_TRUE(Set(5, 4).is_nothing());
  EXPECT_FALSE(Set(4, 4).is_nothing());
}

TEST(IntSetValue, SinglePointComparesEndsStructurally) {
  Var x("x"), y("y");
  EXPECT_TRUE(IntSet::Interval(x + 1, x + 1).is_single_point());
  EXPECT_FALSE(IntSet::Interval(x, y).is_single_point());
  EXPECT_FALSE(IntSet::Interval(x, PrimExpr()).is_single_point());
  EXPECT_TRUE(Set(7, 7).is_single_point());
}

TEST(IntSetValue, CanProveSinglePoint) {
  Analyzer ana;
  Var x("x"), y("y");
  EXPECT_TRUE(IntSet::Interval(x * 2, x * 2).CanProveSinglePoint(&ana));
  EXPECT_FALSE(IntSet::Interval(x, y).CanProveSinglePoint(&ana));
  EXPECT_FALSE(IntSet::Nothing().CanProveSinglePoint(&ana));
}

TEST(IntSetValue, FromRangeCoversMinToMinPlusExtentMinusOne) {
  EXPECT_TRUE(IsConstSet(IntSet::FromRange(Range(2, 5)), 2, 6));
  EXPECT_TRUE(IsConstSet(IntSet::FromMinExtent(-3, 4), -3, 0));
  Var x("x");
  IntSet one = IntSet::FromRange(Range(x, 1));
  EXPECT_TRUE(one.is_single_point());
  EXPECT_TRUE(one.min().same_as(x));
  EXPECT_TRUE(IntSet::FromRange(Range(4, 0)).is_nothing());
  Var n("n");
  EXPECT_TRUE(EndsAre(IntSet::FromRange(Range(0, n)), 0, n - 1, {{n, 1, 9}}));
}

TEST(IntSetValue, Str) {
  Var x("x");
  EXPECT_EQ(Set(0, 7).str(), "[0, 7]");
  EXPECT_EQ(IntSet::Everything().str(), "[-inf, +inf]");
  EXPECT_EQ(IntSet::Interval(PrimExpr(), x).str(), "[-inf, x]");
  EXPECT_EQ(IntSet::Interval(x, PrimExpr()).str(), "[x, +inf]");
  EXPECT_EQ(IntSet::Interval(x, x + 3).str(), "[x, x + 3]");
  EXPECT_EQ(IntSet::Nothing().str(), "{}");
}

TEST(IntSetValue, CoverRange) {
  Analyzer ana;
  Range r = Set(2, 6).CoverRange(&ana);
  EXPECT_EQ(ToScript(r->min), "2");
  EXPECT_EQ(ToScript(r->extent), "5");
  Var x("x");
  Range point = IntSet::SinglePoint(x).CoverRange(&ana);
  EXPECT_TRUE(point->min.same_as(x));
  EXPECT_EQ(ToScript(point->extent), "1");
  EXPECT_EQ(ToScript(IntSet::Nothing().CoverRange(&ana)->extent), "0");
  EXPECT_THROW(IntSet::Interval(0, PrimExpr()).CoverRange(&ana), Error);
}

TEST(IntSetValue, CoverRangeWithMaxRangeFillsUnboundedSides) {
  Analyzer ana;
  Range whole(0, 64);
  Range upper_open = IntSet::Interval(8, PrimExpr()).CoverRange(&ana, whole);
  EXPECT_EQ(ToScript(upper_open->min), "8");
  EXPECT_EQ(ToScript(upper_open->extent), "56");
  Range lower_open = IntSet::Interval(PrimExpr(), 9).CoverRange(&ana, whole);
  EXPECT_EQ(ToScript(lower_open->min), "0");
  EXPECT_EQ(ToScript(lower_open->extent), "10");
  Range everything = IntSet::Everything().CoverRange(&ana, whole);
  EXPECT_EQ(ToScript(everything->extent), "64");
  EXPECT_EQ(ToScript(IntSet::Nothing().CoverRange(&ana, whole)->extent), "0");
}

TEST(IntSetValue, UnionOfConstantSets) {
  Analyzer ana;
  EXPECT_TRUE(IsConstSet(Union(&ana, Set(0, 3), Set(8, 9)), 0, 9));
  EXPECT_TRUE(IsConstSet(Union(&ana, Set(-4, 3), Set(-1, 2)), -4, 3));
  EXPECT_TRUE(IsConstSet(Union(&ana, IntSet::Nothing(), Set(1, 2)), 1, 2));
  EXPECT_TRUE(IsConstSet(Union(&ana, Set(1, 2), IntSet::Nothing()), 1, 2));
  EXPECT_TRUE(Union(&ana, IntSet::Nothing(), IntSet::Nothing()).is_nothing());
  EXPECT_TRUE(Union(&ana, Set(1, 2), IntSet::Everything()).is_everything());
  EXPECT_TRUE(IsConstSet(Union(&ana, IntSet::Interval(PrimExpr(), 3), Set(1, 8)), kUnbounded, 8));
}

TEST(IntSetValue, UnionOfSymbolicSets) {
  Analyzer ana;
  Var x("x");
  IntSet u = Union(&ana, IntSet::Interval(x, x + 4), IntSet::Interval(x, x + 9));
  EXPECT_TRUE(u.min().same_as(x));
  EXPECT_TRUE(EndsAre(u, x, x + 9, {{x, -5, 5}}));
}

TEST(IntSetValue, IntersectOfConstantSets) {
  Analyzer ana;
  EXPECT_TRUE(IsConstSet(Intersect(&ana, Set(0, 10), Set(5, 20)), 5, 10));
  EXPECT_TRUE(Intersect(&ana, Set(0, 3), Set(5, 9)).is_nothing());
  EXPECT_TRUE(Intersect(&ana, Set(0, 3), IntSet::Nothing()).is_nothing());
  EXPECT_TRUE(IsConstSet(Intersect(&ana, IntSet::Everything(), Set(-2, 2)), -2, 2));
  EXPECT_TRUE(IsConstSet(
      Intersect(&ana, IntSet::Interval(PrimExpr(), 4), IntSet::Interval(-6, PrimExpr())), -6, 4));
}

// ---------------------------------------------------------------- bound inference cases

TEST_F(IntSetEval, FusedIndexOverConstantLoops) {
  Relax(i, 0, 7);
  Relax(j, 0, 15);
  EXPECT_TRUE(IsConstSet(Eval(i * 16 + j), 0, 127));
  EXPECT_TRUE(IsConstSet(Eval(floordiv(i * 16 + j, 4)), 0, 31));
  EXPECT_TRUE(IsConstSet(Eval(floormod(i * 16 + j, 16)), 0, 15));
}

TEST_F(IntSetEval, OuterLoopVariableStaysSymbolic) {
  dom[j] = IntSet::FromRange(Range(0, n));
  IntSet set = Eval(i * 16 + j);
  EXPECT_TRUE(EndsAre(set, i * 16, i * 16 + n - 1, {{i, 0, 7}, {n, 1, 8}}));
}

TEST_F(IntSetEval, VariableOutsideDomainIsItsOwnPoint) {
  IntSet set = Eval(x);
  EXPECT_TRUE(set.is_single_point());
  EXPECT_TRUE(set.min().same_as(x));
  PrimExpr e = x * 3 + y;
  ASSERT_TRUE(Eval(e).is_single_point());
  EXPECT_TRUE(EndsAre(Eval(e), e, e, {{x, -3, 3}, {y, -3, 3}}));
}

TEST_F(IntSetEval, SinglePointDomainIsSubstituted) {
  dom[x] = IntSet::SinglePoint(n);
  IntSet set = Eval(x + 1);
  ASSERT_TRUE(set.is_single_point());
  EXPECT_TRUE(EndsAre(set, n + 1, n + 1, {{n, -3, 3}}));
}

TEST_F(IntSetEval, TiledAccessRange) {
  Relax(j, 0, 3);
  IntSet set = ana.int_set(Range(i * 4 + j, 2), dom);
  EXPECT_TRUE(EndsAre(set, i * 4, i * 4 + 4, {{i, 0, 5}}));
  Relax(i, 0, 7);
  EXPECT_TRUE(IsConstSet(ana.int_set(Range(i * 4, 4), dom), 0, 31));
}

TEST_F(IntSetEval, RegionOfAnAccess) {
  Relax(i, 0, 7);
  Relax(j, 0, 3);
  Array<IntSet> region = EvalRegion(&ana, {i * 2, j + 1}, dom);
  ASSERT_EQ(region.size(), 2u);
  EXPECT_TRUE(IsConstSet(region[0], 0, 14));
  EXPECT_TRUE(IsConstSet(region[1], 1, 4));
  Array<IntSet> other = EvalRegion(&ana, {i * 2 + 1, j}, dom);
  Array<IntSet> both = UnionRegion(&ana, region, other);
  EXPECT_TRUE(IsConstSet(both[0], 0, 15));
  EXPECT_TRUE(IsConstSet(both[1], 0, 4));
}

TEST(IntSetEvalSet, FreeFunctionsUseAFreshAnalyzer) {
  Var x("x");
  VarIntSetMap dom{{x, Set(-2, 5)}};
  EXPECT_TRUE(IsConstSet(EvalSet(x * 2 - 1, dom), -5, 9));
  EXPECT_TRUE(IsConstSet(EvalSet(Range(x, 3), dom), -2, 7));
}

// ---------------------------------------------------------------- + - *

TEST_F(IntSetEval, AddAndSubtract) {
  Relax(x, -3, 5);
  Relax(y, 2, 4);
  EXPECT_TRUE(IsConstSet(Eval(x + y), -1, 9));
  EXPECT_TRUE(IsConstSet(Eval(x - y), -7, 3));
  EXPECT_TRUE(IsConstSet(Eval(x - x), -8, 8));  // an interval forgets that both are x
  EXPECT_TRUE(IsConstSet(Eval(x + 10), 7, 15));
}

TEST_F(IntSetEval, AddWithUnboundedSide) {
  dom[x] = IntSet::Interval(0, PrimExpr());
  Relax(y, 1, 2);
  EXPECT_TRUE(IsConstSet(Eval(x + y), 1, kUnbounded));
  // x's values are int32 values, at most 2^31 - 1.
  EXPECT_TRUE(IsConstSet(Eval(y - x), 1 - 2147483647, 2));
}

TEST_F(IntSetEval, MultiplyByConstantOfEitherSign) {
  Relax(x, -2, 5);
  EXPECT_TRUE(IsConstSet(Eval(x * 3), -6, 15));
  EXPECT_TRUE(IsConstSet(Eval(x * -3), -15, 6));
  EXPECT_TRUE(IsConstSet(Eval(x * 0), 0, 0));
}

TEST_F(IntSetEval, MultiplyTwoSetsTakesCorners) {
  Relax(x, -2, 3);
  Relax(y, -5, 4);
  EXPECT_TRUE(IsConstSet(Eval(x * y), -15, 12));
  EXPECT_TRUE(IsConstSet(Eval(x * x), -6, 9));
}

TEST_F(IntSetEval, MultiplySymbolicSetByConstant) {
  dom[j] = IntSet::FromRange(Range(0, n));
  EXPECT_TRUE(EndsAre(Eval(j * -2), (n - 1) * -2, 0, {{n, 1, 6}}));
}

TEST_F(IntSetEval, MultiplyByPointOfUnknownSignGivesUp) {
  Relax(x, 0, 3);
  EXPECT_TRUE(Eval(x * n).is_everything());
}

TEST_F(IntSetEval, MultiplyByPointOfKnownSign) {
  ana.Bind(n, Range(1, 100));
  Relax(x, 0, 3);
  EXPECT_TRUE(EndsAre(Eval(x * n), 0, n * 3, {{n, 1, 5}}));
  EXPECT_TRUE(EndsAre(Eval(x * (0 - n)), (0 - n) * 3, 0, {{n, 1, 5}}));
}

TEST_F(IntSetEval, OverflowingEndsBecomeUnbounded) {
  Relax(x, 0, 100000);
  EXPECT_TRUE(IsConstSet(Eval(x * 100000), 0, kUnbounded));
  Relax(y, -100000, 0);
  EXPECT_TRUE(IsConstSet(Eval(y * 100000), kUnbounded, 0));
  // Every value overflows int32: the expression is never defined.
  Relax(x, 100000, 200000);
  EXPECT_TRUE(Eval(x * 100000).is_nothing());
}

TEST_F(IntSetEval, UnboundedOperandsAreWithinTheirType) {
  dom[x] = IntSet::Everything();
  Relax(y, 1 << 30, (1 << 30) + 5);
  EXPECT_TRUE(IsConstSet(Eval(truncdiv(x, y)), -2, 1));
  EXPECT_TRUE(IsConstSet(Eval(floordiv(x, y)), -2, 1));
  Var u("u", DataType::UInt(8));
  dom[u] = IntSet::Everything();
  EXPECT_TRUE(IsConstSet(Eval(floordiv(u, make_const(DataType::UInt(8), int64_t{16}))), 0, 15));
}

// ---------------------------------------------------------------- division

TEST_F(IntSetEval, FloorDivByPositiveAndNegativeConstants) {
  Relax(x, -5, 9);
  EXPECT_TRUE(IsConstSet(Eval(floordiv(x, 4)), -2, 2));
  EXPECT_TRUE(IsConstSet(Eval(floordiv(x, -4)), -3, 1));
}

TEST_F(IntSetEval, TruncDivRoundsTowardZero) {
  Relax(x, -5, 9);
  EXPECT_TRUE(IsConstSet(Eval(truncdiv(x, 4)), -1, 2));
  EXPECT_TRUE(IsConstSet(Eval(truncdiv(x, -4)), -2, 1));
  Relax(x, -3, 3);  // spans zero inside one truncation step
  EXPECT_TRUE(IsConstSet(Eval(truncdiv(x, 4)), 0, 0));
  EXPECT_TRUE(IsConstSet(Eval(floordiv(x, 4)), -1, 0));
}

TEST_F(IntSetEval, DivisionOfSymbolicSetByConstant) {
  dom[j] = IntSet::FromRange(Range(0, n));
  EXPECT_TRUE(EndsAre(Eval(floordiv(i * 8 + j, 4)), floordiv(i * 8, 4), floordiv(i * 8 + n - 1, 4),
                      {{i, -3, 3}, {n, 1, 9}}));
  EXPECT_TRUE(EndsAre(Eval(floordiv(j, -2)), floordiv(n - 1, -2), 0, {{n, 1, 9}}));
  EXPECT_TRUE(EndsAre(Eval(truncdiv(i - j, -2)), truncdiv(i, -2), truncdiv(i - (n - 1), -2),
                      {{i, -4, 4}, {n, 1, 9}}));
}

TEST_F(IntSetEval, DivisionByPointOfKnownSign) {
  ana.Bind(n, Range(1, 50));
  Relax(x, -7, 10);
  EXPECT_TRUE(EndsAre(Eval(floordiv(x, n)), floordiv(-7, n), floordiv(10, n), {{n, 1, 12}}));
  EXPECT_TRUE(
      EndsAre(Eval(truncdiv(x, 0 - n)), truncdiv(10, 0 - n), truncdiv(-7, 0 - n), {{n, 1, 12}}));
}

TEST_F(IntSetEval, DivisionByConstantZeroHasNoValue) {
  Relax(x, 0, 10);
  EXPECT_TRUE(Eval(FloorDiv(x, 0)).is_nothing());
  EXPECT_TRUE(Eval(Div(x, 0)).is_nothing());
  EXPECT_TRUE(Eval(FloorMod(x, 0)).is_nothing());
  EXPECT_TRUE(Eval(Mod(x, 0)).is_nothing());
  EXPECT_TRUE(Eval(FloorDiv(x, 0) + 1).is_nothing());
  // Only the other branch of a select can give a value.
  EXPECT_TRUE(IsConstSet(Eval(select(x < 5, FloorDiv(x, 0), x + 1)), 1, 11));
}

TEST_F(IntSetEval, DivisionBySetSpanningZeroSkipsZero) {
  Relax(x, 10, 20);
  Relax(y, -2, 3);
  EXPECT_TRUE(IsConstSet(Eval(floordiv(x, y)), -20, 20));
  EXPECT_TRUE(IsConstSet(Eval(truncdiv(x, y)), -20, 20));
  Relax(y, 0, 3);
  EXPECT_TRUE(IsConstSet(Eval(floordiv(x, y)), 3, 20));
  Relax(y, -4, 0);
  EXPECT_TRUE(IsConstSet(Eval(floordiv(x, y)), -20, -3));
  EXPECT_TRUE(IsConstSet(Eval(truncdiv(x, y)), -20, -2));
}

// ---------------------------------------------------------------- remainders

TEST_F(IntSetEval, FloorModWithinOnePeriodIsExact) {
  Relax(x, 5, 6);
  EXPECT_TRUE(IsConstSet(Eval(floormod(x, 4)), 1, 2));
  Relax(x, -3, -1);
  EXPECT_TRUE(IsConstSet(Eval(floormod(x, 4)), 1, 3));
  Relax(x, 1, 2);
  EXPECT_TRUE(IsConstSet(Eval(floormod(x, -4)), -3, -2));
}

TEST_F(IntSetEval, FloorModAcrossPeriodsHasTheDivisorsSign) {
  Relax(x, -7, 9);
  EXPECT_TRUE(IsConstSet(Eval(floormod(x, 4)), 0, 3));
  EXPECT_TRUE(IsConstSet(Eval(floormod(x, -4)), -3, 0));
  Relax(x, 2, 5);  // non-negative: never above the dividend
  EXPECT_TRUE(IsConstSet(Eval(floormod(x, 8)), 2, 5));
  Relax(x, 0, 100);
  EXPECT_TRUE(IsConstSet(Eval(floormod(x, 8)), 0, 7));
}

TEST_F(IntSetEval, TruncModTakesTheDividendsSign) {
  Relax(x, -9, 9);
  EXPECT_TRUE(IsConstSet(Eval(truncmod(x, 4)), -3, 3));
  EXPECT_TRUE(IsConstSet(Eval(truncmod(x, -4)), -3, 3));
  Relax(x, 0, 9);
  EXPECT_TRUE(IsConstSet(Eval(truncmod(x, 4)), 0, 3));
  Relax(x, -9, -1);
  EXPECT_TRUE(IsConstSet(Eval(truncmod(x, -4)), -3, 0));
  Relax(x, -2, 2);
  EXPECT_TRUE(IsConstSet(Eval(truncmod(x, 4)), -2, 2));
  Relax(x, 5, 6);
  EXPECT_TRUE(IsConstSet(Eval(truncmod(x, -4)), 1, 2));
  Relax(x, -6, -5);
  EXPECT_TRUE(IsConstSet(Eval(truncmod(x, 4)), -2, -1));
}

TEST_F(IntSetEval, RemainderBySetOfDivisors) {
  Relax(x, 0, 100);
  Relax(y, 1, 8);
  EXPECT_TRUE(IsConstSet(Eval(floormod(x, y)), 0, 7));
  Relax(x, -50, 100);
  Relax(y, -8, 3);
  EXPECT_TRUE(IsConstSet(Eval(truncmod(x, y)), -7, 7));
  EXPECT_TRUE(IsConstSet(Eval(floormod(x, y)), -7, 2));
}

TEST_F(IntSetEval, RemainderBySymbolicDivisorOfKnownSign) {
  ana.Bind(n, Range(1, 50));
  Relax(x, -20, 20);
  EXPECT_TRUE(EndsAre(Eval(floormod(x, n)), 0, n - 1, {{n, 1, 9}}));
  EXPECT_TRUE(EndsAre(Eval(floormod(x, 0 - n)), 1 - n, 0, {{n, 1, 9}}));
  EXPECT_TRUE(EndsAre(Eval(truncmod(x, n)), 1 - n, n - 1, {{n, 1, 9}}));
  Relax(x, 0, 20);
  EXPECT_TRUE(EndsAre(Eval(truncmod(x, 0 - n)), 0, n - 1, {{n, 1, 9}}));
}

TEST_F(IntSetEval, SymbolicDividendInOnePeriod) {
  // [i*16 + 2, i*16 + 5] lies in one period of 16 only once the simplifier sees that
  // floordiv(i*16 + 2, 16) == floordiv(i*16 + 5, 16).
  if (!ana.CanProve(floordiv(i * 16 + 2, 16) == floordiv(i * 16 + 5, 16))) {
    GTEST_SKIP() << "needs the rewrite simplifier";
  }
  Relax(j, 2, 5);
  EXPECT_TRUE(IsConstSet(Eval(floormod(i * 16 + j, 16)), 2, 5));
}

TEST_F(IntSetEval, SymbolicDividendFallsBackToThePeriod) {
  dom[j] = IntSet::FromRange(Range(0, n));
  EXPECT_TRUE(IsConstSet(Eval(floormod(i + j, 6)), 0, 5));
  EXPECT_TRUE(IsConstSet(Eval(floormod(i + j, -6)), -5, 0));
  EXPECT_TRUE(IsConstSet(Eval(truncmod(i + j, 6)), -5, 5));
}

// ---------------------------------------------------------------- min, max, select, logic

TEST_F(IntSetEval, MinAndMaxAreComponentWise) {
  Relax(x, 0, 10);
  Relax(y, 5, 7);
  EXPECT_TRUE(IsConstSet(Eval(min(x, y)), 0, 7));
  EXPECT_TRUE(IsConstSet(Eval(max(x, y)), 5, 10));
  EXPECT_TRUE(IsConstSet(Eval(max(min(x, 4), -1)), 0, 4));
}

TEST_F(IntSetEval, MinWithSymbolicPoint) {
  Relax(x, 0, 10);
  EXPECT_TRUE(EndsAre(Eval(min(x, n)), min(0, n), min(10, n), {{n, -5, 15}}));
  EXPECT_TRUE(EndsAre(Eval(max(x, n)), max(0, n), max(10, n), {{n, -5, 15}}));
}

TEST_F(IntSetEval, MinMaxWithUnboundedSides) {
  dom[x] = IntSet::Interval(3, PrimExpr());
  Relax(y, 0, 5);
  EXPECT_TRUE(IsConstSet(Eval(min(x, y)), 0, 5));
  EXPECT_TRUE(IsConstSet(Eval(max(x, y)), 3, kUnbounded));
}

TEST_F(IntSetEval, SelectUnionsBranchesUnlessDecided) {
  Relax(x, 0, 3);
  EXPECT_TRUE(IsConstSet(Eval(select(x < 5, x, 100)), 0, 3));
  EXPECT_TRUE(IsConstSet(Eval(select(x > 5, x, 100)), 100, 100));
  Relax(x, 0, 10);
  EXPECT_TRUE(IsConstSet(Eval(select(x < 5, x, 100)), 0, 100));
  EXPECT_TRUE(
      IsConstSet(Eval(call_intrin(DataType::Int(32), "if_then_else", {x < 5, x, 100})), 0, 100));
}

TEST_F(IntSetEval, ComparisonsAreDecidedWhenSetsDoNotOverlap) {
  Relax(x, 0, 3);
  Relax(y, 4, 6);
  EXPECT_TRUE(IsConstSet(Eval(x < y), 1, 1));
  EXPECT_TRUE(IsConstSet(Eval(x <= y), 1, 1));
  EXPECT_TRUE(IsConstSet(Eval(x >= y), 0, 0));
  EXPECT_TRUE(IsConstSet(Eval(x > y), 0, 0));
  EXPECT_TRUE(IsConstSet(Eval(x == y), 0, 0));
  EXPECT_TRUE(IsConstSet(Eval(x != y), 1, 1));
  Relax(x, 0, 5);
  EXPECT_TRUE(IsConstSet(Eval(x < y), 0, 1));
  EXPECT_TRUE(IsConstSet(Eval(x == y), 0, 1));
  EXPECT_TRUE(IsConstSet(Eval(x <= 5), 1, 1));
  EXPECT_EQ(Eval(x < y).min().dtype(), DataType::Bool());
}

TEST_F(IntSetEval, LogicOfDecidedAndUndecidedParts) {
  Relax(x, 0, 3);
  Relax(y, 0, 10);
  EXPECT_TRUE(IsConstSet(Eval(x < 4 && y < 5), 0, 1));
  EXPECT_TRUE(IsConstSet(Eval(x > 4 && y < 5), 0, 0));
  EXPECT_TRUE(IsConstSet(Eval(x < 4 || y < 5), 1, 1));
  EXPECT_TRUE(IsConstSet(Eval(x > 4 || y < 5), 0, 1));
  EXPECT_TRUE(IsConstSet(Eval(!(x < 4)), 0, 0));
  EXPECT_TRUE(IsConstSet(Eval(!(y < 4)), 0, 1));
}

// ---------------------------------------------------------------- cast, let, vectors, calls

TEST_F(IntSetEval, WideningCastKeepsEnds) {
  dom[j] = IntSet::FromRange(Range(0, n));
  IntSet set = Eval(cast(DataType::Int(64), j));
  ASSERT_TRUE(set.has_lower_bound() && set.has_upper_bound());
  EXPECT_EQ(set.max().dtype(), DataType::Int(64));
  EXPECT_TRUE(EndsAre(set, make_const(DataType::Int(64), int64_t{0}),
                      cast(DataType::Int(64), n - 1), {{n, 1, 5}}));
}

TEST_F(IntSetEval, NarrowingCastKeepsOnlyValuesThatFit) {
  Relax(x, -5, 100);
  EXPECT_TRUE(IsConstSet(Eval(cast(DataType::Int(8), x)), -5, 100));
  Relax(x, 0, 300);
  EXPECT_TRUE(Eval(cast(DataType::Int(8), x)).is_everything());
  EXPECT_TRUE(IsConstSet(Eval(cast(DataType::UInt(8), x)), 0, kUnbounded));
  EXPECT_TRUE(IsConstSet(Eval(cast(DataType::Bool(), x)), 0, 1));
}

TEST_F(IntSetEval, LetBindsTheValuesSet) {
  Relax(x, 0, 3);
  Var v("v");
  EXPECT_TRUE(IsConstSet(Eval(Let(v, x * 2, v + 1)), 1, 7));
  EXPECT_TRUE(IsConstSet(Eval(Let(v, x * 2, Let(v, v + 10, v))), 10, 16));
}

TEST_F(IntSetEval, RampCoversAllLanes) {
  Relax(x, 0, 3);
  EXPECT_TRUE(IsConstSet(Eval(Ramp(x, 2, 4)), 0, 9));
  EXPECT_TRUE(IsConstSet(Eval(Ramp(x, -1, 4)), -3, 3));
  Relax(y, 1, 1);
  EXPECT_TRUE(IsConstSet(Eval(Ramp(x * 4, 1, 4) + Broadcast(y, 4)), 1, 16));
}

TEST_F(IntSetEval, LikelyIsTransparent) {
  Relax(x, 2, 3);
  EXPECT_TRUE(IsConstSet(Eval(call_intrin(DataType::Bool(), "likely", {x < 5})), 1, 1));
}

TEST_F(IntSetEval, OpaqueExpressionsArePointsUnlessRelaxed) {
  PrimExpr shifted = call_intrin(DataType::Int(32), "shift_right", {n, 2});
  IntSet set = Eval(shifted);
  EXPECT_TRUE(set.is_single_point());
  EXPECT_TRUE(StructuralEqual(set.min(), shifted));
  dom[n] = IntSet::SinglePoint(x);
  EXPECT_EQ(ToScript(Eval(shifted).min()),
            ToScript(call_intrin(DataType::Int(32), "shift_right", {x, 2})));
  Relax(n, 0, 100);
  EXPECT_FALSE(Eval(shifted).is_single_point());
  EXPECT_TRUE(Eval(call_intrin(DataType::Float(32), "exp", {cast(DataType::Float(32), n)}))
                  .is_everything());
}

TEST_F(IntSetEval, MemoryReadsAreNeverPoints) {
  Buffer buffer = DeclBuffer({16}, DataType::Int(32), "A");
  IntSet set = Eval(BufferLoad(buffer, {x}));
  EXPECT_FALSE(set.is_single_point());
  EXPECT_FALSE(set.is_nothing());
}

// ---------------------------------------------------------------- properties

// Every value of a random expression at sample points of the variables' ranges lies in
// the set evaluated over those ranges; and with constant ends the set is never looser
// than the constant bound of the expression.
TEST(IntSetProperty, RandomExpressionsStayInTheirSet) {
  std::mt19937_64 rng(4242);
  int checked = 0, tighter_or_equal = 0;
  for (int index = 0; index < 3000; ++index) {
    std::vector<testing::RangedVar> vars = testing::RandomRangedVars(&rng, 3);
    testing::RandomExprGenerator gen(&rng, &vars);
    int depth = std::uniform_int_distribution<int>(1, 5)(rng);
    PrimExpr e = index % 10 == 0 ? gen.Condition(depth) : gen.Integer(depth);
    Analyzer ana;
    VarIntSetMap dom;
    for (const testing::RangedVar& v : vars) {
      Range range(IntImm(DataType::Int(32), v.lo), IntImm(DataType::Int(32), v.extent));
      ana.Bind(v.var, range);
      dom.emplace(v.var, IntSet::FromRange(range));
    }
    IntSet set = ana.int_set(e, dom);
    for (const VarValueMap& point : testing::SamplePoints(&rng, vars, 8)) {
      std::optional<int64_t> value = EvalInt(e, point);
      if (!value) continue;
      ASSERT_FALSE(set.is_nothing()) << e << " = " << *value << " but its set is empty";
      ++checked;
      if (set.has_lower_bound()) {
        std::optional<int64_t> lo = EvalInt(set.min(), point);
        ASSERT_TRUE(lo) << e << ": lower end " << set.min() << " undefined";
        ASSERT_LE(*lo, *value) << e << " over " << set.str();
      }
      if (set.has_upper_bound()) {
        std::optional<int64_t> hi = EvalInt(set.max(), point);
        ASSERT_TRUE(hi) << e << ": upper end " << set.max() << " undefined";
        ASSERT_GE(*hi, *value) << e << " over " << set.str();
      }
    }
    // Precision: never looser than const_int_bound (an unbounded end counts as the type's
    // limit, which is what it stands for).
    if (set.is_nothing()) continue;
    ConstIntBound bound = ana.const_int_bound(e);
    DataType t = e.dtype();
    int64_t lo = t.min_int_value(), hi = t.max_int_value();
    if (set.has_lower_bound()) {
      ASSERT_TRUE(IsConstInt(set.min(), &lo)) << set.str();
    }
    if (set.has_upper_bound()) {
      ASSERT_TRUE(IsConstInt(set.max(), &hi)) << set.str();
    }
    EXPECT_GE(lo, std::max(bound.min_value, t.min_int_value())) << e << ": set " << set.str();
    EXPECT_LE(hi, std::min(bound.max_value, t.max_int_value())) << e << ": set " << set.str();
    ++tighter_or_equal;
  }
  EXPECT_GT(checked, 10000);
  EXPECT_GT(tighter_or_equal, 2500);
}

// Bound inference relaxes only some variables: the others stay in the ends, which must
// bound the value at every point when evaluated there too.
TEST(IntSetProperty, PartiallyRelaxedExpressionsStayBetweenTheirEnds) {
  std::mt19937_64 rng(777);
  int checked = 0;
  for (int index = 0; index < 2000; ++index) {
    std::vector<testing::RangedVar> vars = testing::RandomRangedVars(&rng, 3);
    testing::RandomExprGenerator gen(&rng, &vars);
    PrimExpr e = gen.Integer(std::uniform_int_distribution<int>(1, 4)(rng));
    Analyzer ana;
    VarIntSetMap dom;
    for (size_t k = 0; k < vars.size(); ++k) {
      const testing::RangedVar& v = vars[k];
      Range range(IntImm(DataType::Int(32), v.lo), IntImm(DataType::Int(32), v.extent));
      ana.Bind(v.var, range);  // every variable is known to stay in its range
      if (k != 0) dom.emplace(v.var, IntSet::FromRange(range));
    }
    IntSet set = ana.int_set(e, dom);
    for (const VarValueMap& point : testing::SamplePoints(&rng, vars, 8)) {
      std::optional<int64_t> value = EvalInt(e, point);
      if (!value) continue;
      ASSERT_FALSE(set.is_nothing()) << e;
      ++checked;
      std::optional<int64_t> lo = set.has_lower_bound() ? EvalInt(set.min(), point) : std::nullopt;
      std::optional<int64_t> hi = set.has_upper_bound() ? EvalInt(set.max(), point) : std::nullopt;
      // An end that overflows its type at this point bounds nothing there.
      if (lo) {
        ASSERT_LE(*lo, *value) << e << " over " << set.str();
      }
      if (hi) {
        ASSERT_GE(*hi, *value) << e << " over " << set.str();
      }
    }
  }
  EXPECT_GT(checked, 10000);
}

}  // namespace
}  // namespace loom::arith
