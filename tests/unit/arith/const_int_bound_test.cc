// Constant integer bounds: exact expectations per node kind (negative divisors, divisor
// ranges through zero, infinities, int64 extremes, constraint scopes), soundness against
// EvalInt on thousands of random expressions, and exactness where interval arithmetic is
// exact (independent operands).
#include "loom/arith/const_int_bound.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/int_eval.h"
#include "loom/ir/printer.h"
#include "random_expr.h"

namespace loom::arith {
namespace {

constexpr int64_t kPosInf = ConstIntBound::kPosInf;
constexpr int64_t kNegInf = ConstIntBound::kNegInf;
constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

ConstIntBound B(int64_t lo, int64_t hi) { return {lo, hi}; }
PrimExpr I64(int64_t v) { return IntImm(DataType::Int(64), v); }

class ConstIntBoundTest : public ::testing::Test {
 protected:
  ConstIntBound Bound(const PrimExpr& e) { return ana.const_int_bound(e); }
  void BindRange(const Var& v, int64_t lo, int64_t hi) {
    ana.const_int_bound.Update(v, B(lo, hi));
  }
  Analyzer ana;
  Var x{"x"}, y{"y"}, z{"z"};
};

// ------------------------------------------------------------------ leaves and casts

TEST_F(ConstIntBoundTest, ConstantsAreExact) {
  EXPECT_EQ(Bound(PrimExpr(7)), B(7, 7));
  EXPECT_EQ(Bound(I64(-5)), B(-5, -5));
  EXPECT_EQ(Bound(FloatImm(DataType::Float(32), 1.5)), ConstIntBound::Everything());
}

TEST_F(ConstIntBoundTest, UnboundVariablesTakeTheirTypeRange) {
  EXPECT_EQ(Bound(x), B(kInt32Min, kInt32Max));
  EXPECT_EQ(Bound(Var("w", DataType::Int(64))), ConstIntBound::Everything());
  EXPECT_EQ(Bound(Var("u", DataType::UInt(8))), B(0, 255));
  EXPECT_EQ(Bound(Var("b", DataType::Bool())), B(0, 1));
  EXPECT_EQ(Bound(SizeVar("n")), B(0, kInt32Max));
  EXPECT_EQ(Bound(SizeVar("n", DataType::Int(64))), B(0, kPosInf));
}

TEST_F(ConstIntBoundTest, RangeBindingGivesFirstAndLast) {
  ana.const_int_bound.Bind(x, Range(0, 16));
  EXPECT_EQ(Bound(x), B(0, 15));
  ana.const_int_bound.Bind(y, Range(x, 4));  // a symbolic start: [x.min, x.max + 3]
  EXPECT_EQ(Bound(y), B(0, 18));
}

TEST_F(ConstIntBoundTest, RebindingNeedsOverrideOnlyWhenDifferent) {
  ana.const_int_bound.Bind(x, Range(0, 16));
  EXPECT_NO_THROW(ana.const_int_bound.Bind(x, Range(0, 16)));
  EXPECT_THROW(ana.const_int_bound.Bind(x, Range(0, 8)), InternalError);
  ana.const_int_bound.Bind(x, Range(0, 8), /*allow_override=*/true);
  EXPECT_EQ(Bound(x), B(0, 7));
  EXPECT_THROW(ana.const_int_bound.Update(x, B(1, 2)), InternalError);
}

TEST_F(ConstIntBoundTest, CastsKeepValuesThatFitAndWrapOthers) {
  BindRange(x, 0, 300);
  EXPECT_EQ(Bound(Cast(DataType::Int(16), x)), B(0, 300));
  EXPECT_EQ(Bound(Cast(DataType::Int(64), x)), B(0, 300));
  EXPECT_EQ(Bound(Cast(DataType::Int(8), x)), B(-128, 127));
  EXPECT_EQ(Bound(Cast(DataType::UInt(8), x)), B(0, 255));
  BindRange(y, -1, 5);
  EXPECT_EQ(Bound(Cast(DataType::UInt(16), y)), B(0, 65535));
  EXPECT_EQ(Bound(Cast(DataType::Bool(), y)), B(0, 1));
  BindRange(z, 1, 5);
  EXPECT_EQ(Bound(Cast(DataType::Bool(), z)), B(1, 1));
  EXPECT_EQ(Bound(Cast(DataType::Int(32), Var("f", DataType::Float(32)))),
            B(kInt32Min, kInt32Max));
}

// ------------------------------------------------------------------ arithmetic

TEST_F(ConstIntBoundTest, IndexExpressionsAreTight) {
  ana.const_int_bound.Bind(x, Range(0, 16));
  EXPECT_EQ(Bound(x * 4 + 3), B(3, 63));
  EXPECT_EQ(Bound(floordiv(x, 4)), B(0, 3));
  EXPECT_EQ(Bound(floormod(x - 20, 8)), B(0, 7));
  EXPECT_EQ(Bound(floormod(x, 32)), B(0, 15));
  EXPECT_EQ(Bound(15 - x), B(0, 15));
  BindRange(y, -7, 7);
  EXPECT_EQ(Bound(truncmod(y, 5)), B(-4, 4));
  EXPECT_EQ(Bound(truncdiv(y, 2)), B(-3, 3));
  EXPECT_EQ(Bound(floordiv(y, 2)), B(-4, 3));
}

TEST_F(ConstIntBoundTest, MultiplicationUsesAllFourCorners) {
  BindRange(x, -3, 2);
  BindRange(y, -5, 4);
  EXPECT_EQ(Bound(x * y), B(-12, 15));
  EXPECT_EQ(Bound(x * -2), B(-4, 6));
  // An int32 product can exceed int32 only where it is undefined.
  EXPECT_EQ(Bound(z * z), B(kInt32Min, kInt32Max));
}

TEST_F(ConstIntBoundTest, DivisionByNegativeConstants) {
  BindRange(x, -7, 9);
  EXPECT_EQ(Bound(truncdiv(x, -4)), B(-2, 1));
  EXPECT_EQ(Bound(floordiv(x, -4)), B(-3, 1));
  EXPECT_EQ(Bound(truncmod(x, -4)), B(-3, 3));
  EXPECT_EQ(Bound(floormod(x, -4)), B(-3, 0));
}

TEST_F(ConstIntBoundTest, DivisorRangesThroughZeroSkipZero) {
  BindRange(x, 0, 10);
  BindRange(y, -2, 3);
  // Positive divisors give [0, 10], negative ones [-10, 0].
  EXPECT_EQ(Bound(floordiv(x, y)), B(-10, 10));
  EXPECT_EQ(Bound(truncdiv(x, y)), B(-10, 10));
  EXPECT_EQ(Bound(floormod(x, y)), B(-1, 2));
  EXPECT_EQ(Bound(truncmod(x, y)), B(0, 2));
  BindRange(z, 0, 4);
  EXPECT_EQ(Bound(truncdiv(PrimExpr(8), z)), B(2, 8));
  EXPECT_EQ(Bound(floordiv(PrimExpr(-8), z)), B(-8, -2));
}

TEST_F(ConstIntBoundTest, DivisionByAlwaysZeroGivesTheTypeRange) {
  BindRange(x, 0, 10);
  BindRange(y, 0, 0);
  EXPECT_EQ(Bound(FloorDiv(x, y)), B(kInt32Min, kInt32Max));
  EXPECT_EQ(Bound(Mod(x, y)), B(kInt32Min, kInt32Max));
}

TEST_F(ConstIntBoundTest, RemaindersWithinOnePeriodFollowTheDividend) {
  BindRange(x, 10, 12);
  EXPECT_EQ(Bound(floormod(x, 8)), B(2, 4));
  EXPECT_EQ(Bound(truncmod(x, 8)), B(2, 4));
  EXPECT_EQ(Bound(floormod(x, -8)), B(-6, -4));
  BindRange(y, -3, -1);
  EXPECT_EQ(Bound(floormod(y, -8)), B(-3, -1));
  EXPECT_EQ(Bound(floormod(y, 8)), B(5, 7));
  EXPECT_EQ(Bound(truncmod(y, 8)), B(-3, -1));
}

TEST_F(ConstIntBoundTest, RemainderBySymbolicDivisor) {
  BindRange(x, 0, 3);
  BindRange(y, 1, 10);
  EXPECT_EQ(Bound(floormod(x, y)), B(0, 3));
  BindRange(z, -4, 6);
  EXPECT_EQ(Bound(floormod(Var("w"), z)), B(-3, 5));
}

// ------------------------------------------------------------------ infinities, int64

TEST_F(ConstIntBoundTest, InfinitiesSaturate) {
  Var n = SizeVar("n", DataType::Int(64));
  Var w("w", DataType::Int(64));
  EXPECT_EQ(Bound(n - 1), B(-1, kPosInf));
  EXPECT_EQ(Bound(n * 2), B(0, kPosInf));
  EXPECT_EQ(Bound(n * -2), B(kNegInf, 0));
  EXPECT_EQ(Bound(0 - n), B(kNegInf, 0));
  EXPECT_EQ(Bound(floordiv(n, 2)), B(0, kPosInf));
  EXPECT_EQ(Bound(floormod(n, 8)), B(0, 7));
  EXPECT_EQ(Bound(truncmod(w, 8)), B(-7, 7));
  EXPECT_EQ(Bound(w + 1), ConstIntBound::Everything());
  EXPECT_EQ(Bound(Mul(w, I64(0))), B(0, 0));
  EXPECT_EQ(Bound(Sub(w, w)), ConstIntBound::Everything());
  EXPECT_EQ(Bound(min(n, 5)), B(0, 5));
  EXPECT_EQ(Bound(max(n, 5)), B(5, kPosInf));
}

TEST_F(ConstIntBoundTest, DivisionByUnboundedDivisor) {
  Var w("w", DataType::Int(64));
  ana.const_int_bound.Update(x, B(-5, 5));
  PrimExpr a = Cast(DataType::Int(64), x);
  EXPECT_EQ(Bound(FloorDiv(a, w)), B(-5, 5));
  EXPECT_EQ(Bound(Div(a, w)), B(-5, 5));
  EXPECT_EQ(Bound(FloorMod(a, w)), ConstIntBound::Everything());
  EXPECT_EQ(Bound(Mod(a, w)), B(-5, 5));
  EXPECT_EQ(Bound(FloorDiv(w, w)), ConstIntBound::Everything());
}

TEST_F(ConstIntBoundTest, Int64ExtremesStaySound) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  const int64_t min = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(Bound(Sub(I64(max), I64(10))).min_value, max - 10);
  EXPECT_EQ(Bound(Add(I64(min), I64(10))).max_value, min + 10);
  Var w("w", DataType::Int(64));
  ana.const_int_bound.Update(w, B(-(int64_t{1} << 62), int64_t{1} << 62));
  EXPECT_EQ(Bound(Mul(w, I64(4))), ConstIntBound::Everything());
  EXPECT_EQ(Bound(Mul(w, I64(2))), B(min, kPosInf));
  EXPECT_EQ(Bound(Add(w, w)), B(min, kPosInf));
  EXPECT_EQ(Bound(FloorDiv(w, I64(-1))), B(-(int64_t{1} << 62), int64_t{1} << 62));
  // The constant INT64_MAX reads as "at least INT64_MAX", so only one end stays exact.
  EXPECT_EQ(Bound(Div(I64(max), I64(-1))).max_value, -max);
}

// ------------------------------------------------------------------ logic and choice

TEST_F(ConstIntBoundTest, ComparisonsDecidedByBounds) {
  BindRange(x, 0, 10);
  BindRange(y, 20, 30);
  EXPECT_EQ(Bound(x < y), B(1, 1));
  EXPECT_EQ(Bound(x <= 10), B(1, 1));
  EXPECT_EQ(Bound(x >= y), B(0, 0));
  EXPECT_EQ(Bound(x > 10), B(0, 0));
  EXPECT_EQ(Bound(EQ(x, y)), B(0, 0));
  EXPECT_EQ(Bound(NE(x, y)), B(1, 1));
  EXPECT_EQ(Bound(x < 5), B(0, 1));
  EXPECT_EQ(Bound(EQ(x, x)), B(0, 1));
  EXPECT_EQ(Bound(EQ(PrimExpr(3), PrimExpr(3))), B(1, 1));
  EXPECT_EQ(Bound(And(x < y, x < 5)), B(0, 1));
  EXPECT_EQ(Bound(And(x < y, x > 10)), B(0, 0));
  EXPECT_EQ(Bound(Or(x < y, x < 5)), B(1, 1));
  EXPECT_EQ(Bound(Or(x > y, x > 10)), B(0, 0));
  EXPECT_EQ(Bound(Not(x < y)), B(0, 0));
  EXPECT_EQ(Bound(Not(x < 5)), B(0, 1));
}

TEST_F(ConstIntBoundTest, MinMaxSelect) {
  BindRange(x, 0, 10);
  BindRange(y, 20, 30);
  EXPECT_EQ(Bound(min(x, y)), B(0, 10));
  EXPECT_EQ(Bound(max(x, y - 25)), B(0, 10));
  EXPECT_EQ(Bound(Select(x < 5, x, y)), B(0, 30));
  EXPECT_EQ(Bound(Select(x < y, x, y)), B(0, 10));  // the condition is decided
  EXPECT_EQ(Bound(call_intrin(DataType::Int(32), "if_then_else", {x > y, x, y})), B(20, 30));
  EXPECT_EQ(Bound(call_intrin(DataType::Bool(), "likely", {x < 5})), B(0, 1));
}

TEST_F(ConstIntBoundTest, LetBindsItsVariableForTheBodyOnly) {
  BindRange(x, 0, 10);
  Var t("t");
  EXPECT_EQ(Bound(Let(t, x * 2, t + 1)), B(1, 21));
  EXPECT_EQ(Bound(t), B(kInt32Min, kInt32Max));
  // An inner Let of the same variable shadows the outer one, then gives it back.
  PrimExpr nested = Let(t, x, Let(t, t + 100, t) + t);
  EXPECT_EQ(Bound(nested), B(100, 120));
  EXPECT_EQ(Bound(t), B(kInt32Min, kInt32Max));
}

TEST_F(ConstIntBoundTest, BitOperations) {
  BindRange(x, 0, 63);
  EXPECT_EQ(Bound(call_intrin(DataType::Int(32), "shift_right", {x, 2})), B(0, 15));
  BindRange(y, -8, 7);
  EXPECT_EQ(Bound(call_intrin(DataType::Int(32), "shift_right", {y, 2})), B(-2, 1));
  EXPECT_EQ(Bound(call_intrin(DataType::Int(32), "shift_right", {y, z})),
            B(kInt32Min, kInt32Max));
  EXPECT_EQ(Bound(call_intrin(DataType::Int(32), "bitwise_and", {z, 7})), B(0, 7));
  EXPECT_EQ(Bound(call_intrin(DataType::Int(32), "bitwise_and", {x, 100})), B(0, 63));
  EXPECT_EQ(Bound(call_intrin(DataType::Int(32), "bitwise_and", {y, z})),
            B(kInt32Min, kInt32Max));
  EXPECT_EQ(Bound(call_intrin(DataType::Int(32), "shift_left", {x, 2})),
            B(kInt32Min, kInt32Max));
}

TEST_F(ConstIntBoundTest, VectorsAreBoundedOverTheirLanes) {
  BindRange(x, 0, 10);
  EXPECT_EQ(Bound(Ramp(x, 4, 8)), B(0, 38));
  EXPECT_EQ(Bound(Ramp(x, -1, 4)), B(-3, 10));
  EXPECT_EQ(Bound(Broadcast(x * 2, 4)), B(0, 20));
  EXPECT_EQ(Bound(Ramp(x, 1, 4) + Broadcast(PrimExpr(1), 4)), B(1, 14));
}

TEST_F(ConstIntBoundTest, OpaqueValuesTakeTheirTypeRange) {
  Buffer buf = DeclBuffer({16}, DataType::Int(8), "A");
  EXPECT_EQ(Bound(BufferLoad(buf, {x})), B(-128, 127));
  EXPECT_EQ(Bound(call_extern(DataType::UInt(8), "f", {x})), B(0, 255));
}

// ------------------------------------------------------------------ constraints

TEST_F(ConstIntBoundTest, ConstraintScopesNestAndRestore) {
  ana.const_int_bound.Bind(x, Range(0, 100));
  std::function<void()> exit_outer = ana.const_int_bound.EnterConstraint(x < 50);
  EXPECT_EQ(Bound(x), B(0, 49));
  std::function<void()> exit_inner =
      ana.const_int_bound.EnterConstraint(And(x >= 10, PrimExpr(20) > x));
  EXPECT_EQ(Bound(x), B(10, 19));
  exit_inner();
  EXPECT_EQ(Bound(x), B(0, 49));
  exit_outer();
  EXPECT_EQ(Bound(x), B(0, 99));
}

TEST_F(ConstIntBoundTest, ConstraintOnAnUnboundVariableIsRemovedAfterwards) {
  std::function<void()> exit = ana.const_int_bound.EnterConstraint(y < 8);
  EXPECT_EQ(Bound(y), B(kInt32Min, 7));
  exit();
  EXPECT_EQ(Bound(y), B(kInt32Min, kInt32Max));
  // A binding made after the scope's exit is untouched by it.
  ana.const_int_bound.Bind(y, Range(0, 4));
  EXPECT_EQ(Bound(y), B(0, 3));
}

TEST_F(ConstIntBoundTest, ConstraintForms) {
  ana.const_int_bound.Bind(x, Range(0, 101));
  auto bound_under = [&](const PrimExpr& constraint, const PrimExpr& e) {
    std::function<void()> exit = ana.const_int_bound.EnterConstraint(constraint);
    ConstIntBound b = Bound(e);
    exit();
    EXPECT_EQ(Bound(x), B(0, 100)) << "not restored after " << constraint;
    return b;
  };
  EXPECT_EQ(bound_under(EQ(x, 7), x), B(7, 7));
  EXPECT_EQ(bound_under(EQ(PrimExpr(7), x), x * 2), B(14, 14));
  EXPECT_EQ(bound_under(NE(x, 0), x), B(1, 100));
  EXPECT_EQ(bound_under(NE(x, 100), x), B(0, 99));
  EXPECT_EQ(bound_under(NE(x, 50), x), B(0, 100));
  EXPECT_EQ(bound_under(Not(x < 5), x), B(5, 100));
  EXPECT_EQ(bound_under(Not(Or(x < 5, x > 9)), x), B(5, 9));
  EXPECT_EQ(bound_under(Or(x < 5, x > 9), x), B(0, 100));
  EXPECT_EQ(bound_under(x + 3 < 10, x), B(0, 6));
  EXPECT_EQ(bound_under(20 - x <= 5, x), B(15, 100));
  EXPECT_EQ(bound_under(x * 2 <= 9, x), B(0, 4));
  EXPECT_EQ(bound_under(x * -3 >= -10, x), B(0, 3));
  EXPECT_EQ(bound_under(min(x, 50) >= 20, x), B(20, 100));
  EXPECT_EQ(bound_under(max(x, 3) <= 20, x), B(0, 20));
  EXPECT_EQ(bound_under(Cast(DataType::Int(64), x) < I64(12), x), B(0, 11));
  // An impossible fact leaves the (unreachable) scope with the old bound.
  EXPECT_EQ(bound_under(x > 200, x), B(0, 100));
}

TEST_F(ConstIntBoundTest, ConstraintBetweenVariablesNarrowsBoth) {
  ana.const_int_bound.Bind(x, Range(0, 101));
  ana.const_int_bound.Bind(y, Range(0, 31));
  std::function<void()> exit = ana.const_int_bound.EnterConstraint(x < y);
  EXPECT_EQ(Bound(x), B(0, 29));
  EXPECT_EQ(Bound(y), B(1, 30));
  exit();
  EXPECT_EQ(Bound(x), B(0, 100));
  EXPECT_EQ(Bound(y), B(0, 30));
}

TEST_F(ConstIntBoundTest, BooleanVariableAsConstraint) {
  Var flag("flag", DataType::Bool());
  std::function<void()> exit = ana.const_int_bound.EnterConstraint(flag);
  EXPECT_EQ(Bound(flag), B(1, 1));
  exit();
  exit = ana.const_int_bound.EnterConstraint(Not(flag));
  EXPECT_EQ(Bound(flag), B(0, 0));
  exit();
  EXPECT_EQ(Bound(flag), B(0, 1));
}

// ------------------------------------------------------------------ properties

using testing::RandomExprGenerator;
using testing::RangedVar;

std::string Describe(const PrimExpr& e, const std::vector<RangedVar>& vars,
                     const VarValueMap& point) {
  std::string s = ToScript(e) + "  at";
  for (const RangedVar& v : vars) {
    s += " " + v.var->name_hint + "=" + std::to_string(point.at(v.var)) + " in [" +
         std::to_string(v.lo) + ", " + std::to_string(v.lo + v.extent - 1) + "]";
  }
  return s;
}

void BindAll(Analyzer* ana, const std::vector<RangedVar>& vars) {
  for (const RangedVar& v : vars) {
    ana->const_int_bound.Bind(v.var, Range(IntImm(DataType::Int(32), v.lo),
                                           IntImm(DataType::Int(32), v.extent)));
  }
}

bool Within(int64_t value, const ConstIntBound& b) {
  return b.min_value <= value && value <= b.max_value;
}

TEST(ConstIntBoundProperty, RandomExpressionsStayWithinTheirBounds) {
  std::mt19937_64 rng(20240611);
  int64_t checked = 0;
  for (int i = 0; i < 4000; ++i) {
    std::vector<RangedVar> vars = testing::RandomRangedVars(&rng, 3);
    RandomExprGenerator gen(&rng, &vars);
    int depth = std::uniform_int_distribution<int>(1, 6)(rng);
    PrimExpr e = i % 8 == 0 ? gen.Condition(depth) : gen.Integer(depth);
    Analyzer ana;
    BindAll(&ana, vars);
    ConstIntBound b = ana.const_int_bound(e);
    for (const VarValueMap& point : testing::SamplePoints(&rng, vars, 8)) {
      std::optional<int64_t> value = EvalInt(e, point);
      if (!value) continue;
      ++checked;
      ASSERT_TRUE(Within(*value, b)) << "value " << *value << " outside " << b << " for "
                                     << Describe(e, vars, point);
    }
  }
  EXPECT_GT(checked, 20000);
}

TEST(ConstIntBoundProperty, LetBodiesStayWithinTheirBounds) {
  std::mt19937_64 rng(77);
  int64_t checked = 0;
  for (int i = 0; i < 1500; ++i) {
    std::vector<RangedVar> vars = testing::RandomRangedVars(&rng, 2);
    RandomExprGenerator outer(&rng, &vars);
    Var t("t");
    std::vector<RangedVar> body_vars = vars;
    body_vars.push_back({t, 0, 1});
    RandomExprGenerator inner(&rng, &body_vars);
    PrimExpr e = Let(t, outer.Integer(3), inner.Integer(4));
    Analyzer ana;
    BindAll(&ana, vars);
    ConstIntBound b = ana.const_int_bound(e);
    for (const VarValueMap& point : testing::SamplePoints(&rng, vars, 8)) {
      std::optional<int64_t> value = EvalInt(e, point);
      if (!value) continue;
      ++checked;
      ASSERT_TRUE(Within(*value, b)) << "value " << *value << " outside " << b << " for "
                                     << Describe(e, vars, point);
    }
  }
  EXPECT_GT(checked, 5000);
}

// Inside nested constraint scopes every point satisfying the constraints stays in bounds,
// and leaving each scope gives back exactly the bound from before it.
TEST(ConstIntBoundProperty, ConstraintScopesAreSoundAndRestore) {
  std::mt19937_64 rng(4242);
  int64_t checked = 0;
  for (int i = 0; i < 2000; ++i) {
    std::vector<RangedVar> vars = testing::RandomRangedVars(&rng, 3);
    RandomExprGenerator gen(&rng, &vars);
    PrimExpr e = gen.Integer(std::uniform_int_distribution<int>(1, 5)(rng));
    PrimExpr outer = gen.Condition(2), inner = gen.Condition(2);
    Analyzer ana;
    BindAll(&ana, vars);
    ConstIntBound before = ana.const_int_bound(e);
    std::function<void()> exit_outer = ana.const_int_bound.EnterConstraint(outer);
    ConstIntBound under_outer = ana.const_int_bound(e);
    std::function<void()> exit_inner = ana.const_int_bound.EnterConstraint(inner);
    ConstIntBound under_both = ana.const_int_bound(e);
    for (const VarValueMap& point : testing::SamplePoints(&rng, vars, 40)) {
      std::optional<int64_t> value = EvalInt(e, point);
      if (!value || EvalInt(outer, point) != 1) continue;
      ASSERT_TRUE(Within(*value, under_outer))
          << "value " << *value << " outside " << under_outer << " under " << outer
          << " for " << Describe(e, vars, point);
      if (EvalInt(inner, point) != 1) continue;
      ++checked;
      ASSERT_TRUE(Within(*value, under_both))
          << "value " << *value << " outside " << under_both << " under " << outer
          << " and " << inner << " for " << Describe(e, vars, point);
    }
    exit_inner();
    ASSERT_EQ(ana.const_int_bound(e), under_outer) << e;
    exit_outer();
    ASSERT_EQ(ana.const_int_bound(e), before) << e;
  }
  EXPECT_GT(checked, 5000);
}

// With independent operands interval arithmetic is exact: the bound must equal the true
// minimum and maximum over all defined points.
TEST(ConstIntBoundProperty, IndependentOperandsGiveExactBounds) {
  std::mt19937_64 rng(99);
  Var a("a"), b("b");
  using Builder = PrimExpr (*)(PrimExpr, PrimExpr);
  const std::vector<std::pair<const char*, Builder>> binary = {
      {"add", [](PrimExpr p, PrimExpr q) -> PrimExpr { return Add(p, q); }},
      {"sub", [](PrimExpr p, PrimExpr q) -> PrimExpr { return Sub(p, q); }},
      {"mul", [](PrimExpr p, PrimExpr q) -> PrimExpr { return Mul(p, q); }},
      {"min", [](PrimExpr p, PrimExpr q) -> PrimExpr { return Min(p, q); }},
      {"max", [](PrimExpr p, PrimExpr q) -> PrimExpr { return Max(p, q); }},
      {"truncdiv", [](PrimExpr p, PrimExpr q) -> PrimExpr { return Div(p, q); }},
      {"floordiv", [](PrimExpr p, PrimExpr q) -> PrimExpr { return FloorDiv(p, q); }},
  };
  const std::vector<std::pair<const char*, Builder>> by_constant = {
      {"truncmod", [](PrimExpr p, PrimExpr q) -> PrimExpr { return Mod(p, q); }},
      {"floormod", [](PrimExpr p, PrimExpr q) -> PrimExpr { return FloorMod(p, q); }},
  };
  auto range = [&](int64_t span) {
    int64_t lo = std::uniform_int_distribution<int64_t>(-span, span)(rng);
    return B(lo, lo + std::uniform_int_distribution<int64_t>(0, span)(rng));
  };
  auto check = [&](const char* op, const PrimExpr& e, const ConstIntBound& ra,
                   const ConstIntBound& rb) {
    Analyzer ana;
    ana.const_int_bound.Update(a, ra);
    ana.const_int_bound.Update(b, rb);
    std::optional<ConstIntBound> exact;
    for (int64_t va = ra.min_value; va <= ra.max_value; ++va) {
      for (int64_t vb = rb.min_value; vb <= rb.max_value; ++vb) {
        std::optional<int64_t> v = EvalInt(e, {{a, va}, {b, vb}});
        if (!v) continue;
        exact = exact ? B(std::min(exact->min_value, *v), std::max(exact->max_value, *v))
                      : B(*v, *v);
      }
    }
    if (exact) {
      EXPECT_EQ(ana.const_int_bound(e), *exact)
          << op << ": " << e << " with a in " << ra << ", b in " << rb;
    }
  };
  for (int i = 0; i < 300; ++i) {
    for (const auto& [name, build] : binary) check(name, build(a, b), range(12), range(12));
    int magnitude = std::uniform_int_distribution<int>(1, 9)(rng);
    PrimExpr divisor(i % 2 ? -magnitude : magnitude);
    for (const auto& [name, build] : by_constant) {
      check(name, build(a, divisor), range(30), B(0, 0));
    }
    for (const auto& [name, build] : binary) check(name, build(a, divisor), range(30), B(0, 0));
  }
}

}  // namespace
}  // namespace loom::arith
