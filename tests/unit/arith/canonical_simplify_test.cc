// The canonical simplifier alone (Analyzer::canonical_simplify): exact printed results for
// the normal form, the division and split rules, comparisons and the guards, each also
// checked for value preservation on a grid of points; then a property test over random
// expressions.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/int_eval.h"
#include "loom/ir/printer.h"
#include "loom/ir/structural.h"
#include "random_expr.h"

namespace loom::arith {
namespace {

class CanonicalSimplifyTest : public ::testing::Test {
 protected:
  void Bind(const Var& v, int64_t lo, int64_t extent) {
    ana.Bind(v, Range(make_const(v.dtype(), lo), make_const(v.dtype(), extent)));
    ranges_[v.get()] = {lo, extent};
  }

  // The printed canonical form of `input`, after checking that it agrees with `input` at
  // every grid point where `input` is defined.
  std::string Simplify(const PrimExpr& input) {
    PrimExpr output = ana.canonical_simplify(input);
    ExpectSameValues(input, output);
    return ToScript(output);
  }

  void ExpectSameValues(const PrimExpr& input, const PrimExpr& output) {
    std::vector<std::pair<Var, std::vector<int64_t>>> axes;
    for (const Var& v : {x, y, z}) {
      std::vector<int64_t> values;
      auto it = ranges_.find(v.get());
      if (it == ranges_.end()) {
        for (int64_t value = -9; value <= 9; ++value) values.push_back(value);
      } else {
        const auto& [lo, extent] = it->second;
        for (int64_t k = 0; k < extent && k < 40; ++k) values.push_back(lo + k);
      }
      axes.emplace_back(v, values);
    }
    VarValueMap point;
    for (int64_t a : axes[0].second) {
      for (int64_t b : axes[1].second) {
        for (int64_t c : axes[2].second) {
          point[x] = a;
          point[y] = b;
          point[z] = c;
          std::optional<int64_t> expected = EvalInt(input, point);
          if (!expected) continue;
          ASSERT_EQ(EvalInt(output, point), expected)
              << input << " => " << output << " at x=" << a << " y=" << b << " z=" << c;
        }
      }
    }
  }

  Var x{"x"}, y{"y"}, z{"z"};
  Analyzer ana;
  std::map<const Object*, std::pair<int64_t, int64_t>> ranges_;
};

// ---------------------------------------------------------------- linear sums

TEST_F(CanonicalSimplifyTest, LikeTermsCancel) {
  EXPECT_EQ(Simplify(x * 3 + y - x * 3), "y");
  EXPECT_EQ(Simplify(Sub(x, x)), "0");
  EXPECT_EQ(Simplify(Add(x, x)), "x * 2");
  EXPECT_EQ(Simplify(x * 2 + y * 2 + x), "x * 3 + y * 2");
  EXPECT_EQ(Simplify((x + y) * 4 - x * 4), "y * 4");
  EXPECT_EQ(Simplify(x * 16 + y - (y + x * 16)), "0");
}

TEST_F(CanonicalSimplifyTest, ConstantsFold) {
  EXPECT_EQ(Simplify(Sub(Add(x, 5), 3)), "x + 2");
  EXPECT_EQ(Simplify(Sub(Add(Sub(x, 3), 5), 2)), "x");
  EXPECT_EQ(Simplify(Add(Mul(IntImm(DataType::Int(32), 3), 4), x)), "x + 12");
}

TEST_F(CanonicalSimplifyTest, TermsKeepFirstAppearanceWithinEqualWeights) {
  EXPECT_EQ(Simplify(Add(x, y)), "x + y");
  EXPECT_EQ(Simplify(Add(y, x)), "y + x");
  // Heavier coefficients first, positive terms before negative ones.
  EXPECT_EQ(Simplify(Add(x, y * 2)), "y * 2 + x");
  EXPECT_EQ(Simplify(Sub(x * 2, y * 4)), "x * 2 - y * 4");
  EXPECT_EQ(Simplify(Sub(Sub(x, y * 2), 5)), "x - y * 2 - 5");
}

TEST_F(CanonicalSimplifyTest, NegativeSums) {
  EXPECT_EQ(Simplify(Sub(0, x)), "x * -1");
  EXPECT_EQ(Simplify(Sub(3, x * 2)), "3 - x * 2");
  EXPECT_EQ(Simplify(Sub(-16, x)), "-16 - x");
  EXPECT_EQ(Simplify(Sub(Sub(0, x), y * 3)), "y * -3 - x");
}

TEST_F(CanonicalSimplifyTest, EqualInputsPrintEqual) {
  auto build = [&]() { return floordiv(x * 8 + y, 4) * 4 + floormod(y + x * 8, 4) + z; };
  EXPECT_EQ(Simplify(build()), Simplify(build()));
  EXPECT_EQ(Simplify(build()), "x * 8 + y + z");
}

// ---------------------------------------------------------------- products

TEST_F(CanonicalSimplifyTest, ProductsExpand) {
  EXPECT_EQ(Simplify((x + 1) * (y - 1)), "x * y + y - x - 1");
  EXPECT_EQ(Simplify((x + 1) * (x + 1)), "x * 2 + x * x + 1");
  EXPECT_EQ(Simplify(Mul(Mul(Mul(x, 4), y), 2)), "x * y * 8");
  EXPECT_EQ(Simplify(Sub(Mul(x * 2, y * 3), x * y * 6)), "0");
}

TEST_F(CanonicalSimplifyTest, LargeProductsStayProducts) {
  PrimExpr a = x, b = y;
  for (int k = 2; k <= 9; ++k) {
    a = a + floordiv(x, k);
    b = b + floordiv(y, k);
  }
  PrimExpr out = ana.canonical_simplify(a * b);
  ASSERT_TRUE(out.as<MulNode>()) << out;
  ExpectSameValues(a * b, out);
}

// ---------------------------------------------------------------- floordiv / floormod

TEST_F(CanonicalSimplifyTest, DivisibleTermsLeaveTheDivision) {
  EXPECT_EQ(Simplify(floordiv(x * 4 + 8, 4)), "x + 2");
  EXPECT_EQ(Simplify(floormod(x * 4 + y * 8 + 3, 4)), "3");
  EXPECT_EQ(Simplify(floordiv(x * 6 + y * 4, 2)), "x * 3 + y * 2");
  EXPECT_EQ(Simplify(floordiv(x * 8 + y, 4)), "x * 2 + y // 4");
  EXPECT_EQ(Simplify(floordiv(x * y * 4 + z, 4)), "x * y + z // 4");
  EXPECT_EQ(Simplify(floormod(x * 3, 3)), "0");
}

TEST_F(CanonicalSimplifyTest, CommonFactorsCancel) {
  EXPECT_EQ(Simplify(floordiv(x * 6 + y * 4 + 2, 4)), "y + (x * 3 + 1) // 2");
  EXPECT_EQ(Simplify(floormod(x * 6 + 2, 4)), "(x * 3 + 1) % 2 * 2");
  EXPECT_EQ(Simplify(floordiv(x * 2, 4)), "x // 2");
  EXPECT_EQ(Simplify(floormod(x * 4 + 2, 8)), "(x * 2 + 1) % 4 * 2");
}

TEST_F(CanonicalSimplifyTest, ConstantsReduceTowardZero) {
  EXPECT_EQ(Simplify(floordiv(x + 5, 4)), "(x + 1) // 4 + 1");
  EXPECT_EQ(Simplify(floordiv(x - 5, 4)), "(x - 1) // 4 - 1");
  EXPECT_EQ(Simplify(floordiv(x - 1, 4)), "(x - 1) // 4");
  EXPECT_EQ(Simplify(floormod(x + 5, 4)), "(x + 1) % 4");
  EXPECT_EQ(Simplify(floormod(x - 6, 4)), "(x - 2) % 4");
}

TEST_F(CanonicalSimplifyTest, TrivialDivisors) {
  EXPECT_EQ(Simplify(FloorDiv(x + x, 1)), "x * 2");
  EXPECT_EQ(Simplify(FloorMod(x, 1)), "0");
  EXPECT_EQ(Simplify(FloorDiv(x, -1)), "x * -1");
  EXPECT_EQ(Simplify(FloorMod(x, -1)), "0");
}

TEST_F(CanonicalSimplifyTest, NestedSplitsCollapse) {
  EXPECT_EQ(Simplify(floordiv(floordiv(x, 4), 8)), "x // 32");
  EXPECT_EQ(Simplify(floormod(floordiv(x, 4), 8)), "x // 4 % 8");
  EXPECT_EQ(Simplify(floordiv(floormod(x, 32), 4)), "x // 4 % 8");
  EXPECT_EQ(Simplify(floordiv(floormod(x, 32), 4) - floormod(floordiv(x, 4), 8)), "0");
  EXPECT_EQ(Simplify(floormod(floormod(x, 32), 8)), "x % 8");
  EXPECT_EQ(Simplify(floormod(floormod(x, 8), 32)), "x % 8");
  EXPECT_EQ(Simplify(floordiv(floormod(x, 8), 16)), "0");
  EXPECT_EQ(Simplify(floordiv(floordiv(x, 4) + 1, 2)), "(x + 4) // 8");
  EXPECT_EQ(Simplify(floordiv(floormod(x, 16) * 4, 8)), "x // 2 % 8");
  EXPECT_EQ(Simplify(floormod(floordiv(x, 4) + 1, 8)), "(x + 4) // 4 % 8");
}

TEST_F(CanonicalSimplifyTest, NestedSplitsThatDoNotAlignStayNested) {
  EXPECT_EQ(Simplify(floordiv(floormod(x, 10), 4)), "x % 10 // 4");
  EXPECT_EQ(Simplify(floormod(floormod(x, 10), 4)), "x % 10 % 4");
}

TEST_F(CanonicalSimplifyTest, NegativeDivisors) {
  EXPECT_EQ(Simplify(floordiv(x, -4)), "x * -1 // 4");
  EXPECT_EQ(Simplify(floormod(x, -4)), "x * -1 % 4 * -1");
  EXPECT_EQ(Simplify(floordiv(x * 8 + 4, -4)), "-1 - x * 2");
  EXPECT_EQ(Simplify(floormod(x * 8 + 4, -4)), "0");
  EXPECT_EQ(Simplify(floordiv(x, -4) * -4 + floormod(x, -4)), "x");
}

// ---------------------------------------------------------------- merging split terms

TEST_F(CanonicalSimplifyTest, SplitsMergeBack) {
  EXPECT_EQ(Simplify(floordiv(x, 4) * 4 + floormod(x, 4)), "x");
  EXPECT_EQ(Simplify(floormod(floordiv(x, 4), 8) * 4 + floormod(x, 4)), "x % 32");
  EXPECT_EQ(Simplify(floormod(floordiv(x, 4), 8) + floordiv(x, 32) * 8), "x // 4");
  EXPECT_EQ(Simplify(floordiv(x * 4 + y, 4) * 4 + floormod(x * 4 + y, 4)), "x * 4 + y");
  EXPECT_EQ(Simplify(floordiv(x + 5, 4) * 4 + floormod(x + 5, 4)), "x + 5");
  EXPECT_EQ(Simplify(floordiv(x - 1, 4) * 4 + floormod(x - 1, 4)), "x - 1");
  EXPECT_EQ(Simplify(floordiv(x * 2, 4) * 4 + floormod(x * 2, 4)), "x * 2");
  EXPECT_EQ(Simplify(floordiv(x, 4) * 8 + floormod(x, 4) * 2), "x * 2");
}

TEST_F(CanonicalSimplifyTest, SplitsMergeUnderACommonFactor) {
  EXPECT_EQ(Simplify(y * floordiv(x, 4) * 4 + y * floormod(x, 4)), "y * x");
  EXPECT_EQ(Simplify(floordiv(x, 4) * 12 + floormod(x, 4) * 3 + y), "x * 3 + y");
}

TEST_F(CanonicalSimplifyTest, SplitsSubtractOut) {
  EXPECT_EQ(Simplify(x - floordiv(x, 4) * 4), "x % 4");
  EXPECT_EQ(Simplify(x - floormod(x, 4)), "x // 4 * 4");
  EXPECT_EQ(Simplify(floormod(x, 32) - floordiv(floormod(x, 32), 4) * 4), "x % 4");
  EXPECT_EQ(Simplify(x * 4 + y - floordiv(x * 4 + y, 4) * 4), "y % 4");
}

TEST_F(CanonicalSimplifyTest, MismatchedSplitsStay) {
  EXPECT_EQ(Simplify(floordiv(x, 4) * 8 + floormod(x, 4)), "x // 4 * 8 + x % 4");
  EXPECT_EQ(Simplify(floordiv(x, 4) * 4 + floormod(y, 4)), "x // 4 * 4 + y % 4");
}

// ---------------------------------------------------------------- bounds

TEST_F(CanonicalSimplifyTest, DemoIndexExpression) {
  Var i("i"), j("j");
  ana.Bind(i, Range(0, 32));
  ana.Bind(j, Range(0, 16));
  PrimExpr fused = i * 16 + j;
  PrimExpr index = floordiv(fused, 16) * 64 + floormod(fused, 16) * 4 + 3;
  EXPECT_EQ(ToScript(ana.canonical_simplify(index)), "i * 64 + j * 4 + 3");
}

TEST_F(CanonicalSimplifyTest, BoundsDecideDivisions) {
  Bind(x, 0, 8);
  EXPECT_EQ(Simplify(floordiv(x, 8)), "0");
  EXPECT_EQ(Simplify(floormod(x, 8)), "x");
  EXPECT_EQ(Simplify(floormod(x + 4, 16)), "x + 4");
  EXPECT_EQ(Simplify(floordiv(x + 8, 8)), "1");
}

TEST_F(CanonicalSimplifyTest, BoundsShiftARemainderWithinOnePeriod) {
  Bind(x, 8, 8);
  EXPECT_EQ(Simplify(floormod(x, 8)), "x - 8");
  EXPECT_EQ(Simplify(floordiv(x, 8)), "1");
  Bind(y, -4, 4);
  EXPECT_EQ(Simplify(floordiv(y, 4)), "-1");
  EXPECT_EQ(Simplify(floormod(y, 4)), "y + 4");
}

TEST_F(CanonicalSimplifyTest, BoundsDropSmallRemainders) {
  Bind(x, 0, 16);
  Bind(y, 0, 4);
  EXPECT_EQ(Simplify(floordiv(x * 8 + y, 4)), "x * 2");
  EXPECT_EQ(Simplify(floordiv(x * 16 + y, 16)), "x");
  EXPECT_EQ(Simplify(floormod(x * 16 + y, 16)), "y");
}

// ---------------------------------------------------------------- truncated division

TEST_F(CanonicalSimplifyTest, TruncatedDivisionOfUnknownSignIsKept) {
  EXPECT_EQ(Simplify(truncdiv(x * 4 + 8, 4)), "x + 2");
  EXPECT_EQ(Simplify(truncmod(x * 4, 4)), "0");
  EXPECT_EQ(Simplify(truncdiv(x, 4)), "T.truncdiv(x, 4)");
  EXPECT_EQ(Simplify(truncmod(x + x, 3)), "T.truncmod(x * 2, 3)");
  EXPECT_EQ(Simplify(truncmod(x * 4 + 2, 8)), "T.truncmod(x * 2 + 1, 4) * 2");
  EXPECT_EQ(Simplify(truncdiv(x * 4 + 2, 8)), "T.truncdiv(x * 2 + 1, 4)");
}

TEST_F(CanonicalSimplifyTest, TruncatedDivisionOfKnownSignIsFloored) {
  Bind(x, 0, 100);
  EXPECT_EQ(Simplify(truncdiv(x, 4)), "x // 4");
  EXPECT_EQ(Simplify(truncmod(x, 4)), "x % 4");
  EXPECT_EQ(Simplify(truncdiv(x, -4)), "x // 4 * -1");
  EXPECT_EQ(Simplify(truncmod(x, -4)), "x % 4");
  EXPECT_EQ(Simplify(truncdiv(x, 4) * 4 + truncmod(x, 4)), "x");
  Bind(y, -100, 101);
  EXPECT_EQ(Simplify(truncdiv(y, 4)), "y * -1 // 4 * -1");
  EXPECT_EQ(Simplify(truncmod(y, 4)), "y * -1 % 4 * -1");
}

// ---------------------------------------------------------------- other divisors

TEST_F(CanonicalSimplifyTest, DivisionByExpressions) {
  EXPECT_EQ(Simplify(floordiv(x * 2 + x, y)), "x * 3 // y");
  EXPECT_EQ(Simplify(floordiv(x, y - y + 4)), "x // 4");
  EXPECT_EQ(Simplify(truncmod(x, y * 2 - y)), "T.truncmod(x, y)");
}

TEST_F(CanonicalSimplifyTest, DivisionByZeroIsKept) {
  EXPECT_EQ(Simplify(FloorDiv(x + x, 0)), "x * 2 // 0");
  EXPECT_EQ(Simplify(Mod(x, y - y)), "T.truncmod(x, 0)");
}

// ---------------------------------------------------------------- min, max, select

TEST_F(CanonicalSimplifyTest, MinMaxDecidedByTheDifference) {
  EXPECT_EQ(Simplify(min(x + 3, x + 5)), "x + 3");
  EXPECT_EQ(Simplify(max(x + 3, x + 5)), "x + 5");
  EXPECT_EQ(Simplify(min(x * 2 - x, y)), "T.min(x, y)");
  Bind(z, 0, 8);
  EXPECT_EQ(Simplify(min(z, 10)), "z");
  EXPECT_EQ(Simplify(max(z, 10)), "10");
  EXPECT_EQ(Simplify(max(z * 2, z)), "z * 2");
}

TEST_F(CanonicalSimplifyTest, Selects) {
  EXPECT_EQ(Simplify(select(x < 5, y + y, y * 2)), "y * 2");
  EXPECT_EQ(Simplify(select(x * 2 + 1 < x * 2 + 3, y, z)), "y");
  EXPECT_EQ(Simplify(select(x < y, x + x, 1)), "T.Select(x < y, x * 2, 1)");
}

// ---------------------------------------------------------------- comparisons

TEST_F(CanonicalSimplifyTest, ComparisonsFold) {
  EXPECT_EQ(Simplify(x * 2 + 1 < x * 2 + 3), "T.bool(True)");
  EXPECT_EQ(Simplify(x * 2 == y * 2 + 1), "T.bool(False)");
  EXPECT_EQ(Simplify(x * 2 != 3), "T.bool(True)");
  EXPECT_EQ(Simplify(x + y >= y + x), "T.bool(True)");
  Bind(z, 0, 8);
  EXPECT_EQ(Simplify(z < 8), "T.bool(True)");
  EXPECT_EQ(Simplify(z >= 8), "T.bool(False)");
}

TEST_F(CanonicalSimplifyTest, ComparisonsBalance) {
  EXPECT_EQ(Simplify(x * 2 + 1 < y * 2 + 4), "x < y + 2");
  EXPECT_EQ(Simplify(x * 4 + 8 == y * 4), "x + 2 == y");
  EXPECT_EQ(Simplify(x - y < 0), "x < y");
  EXPECT_EQ(Simplify(x + 3 <= 10), "x <= 7");
  EXPECT_EQ(Simplify(10 > x - 2), "12 > x");
  EXPECT_EQ(Simplify(-2 < z), "-2 < z");
  EXPECT_EQ(Simplify(x * 3 >= y * 3 + 1), "x >= y + 1");
  EXPECT_EQ(Simplify(x < y), "x < y");
}

TEST_F(CanonicalSimplifyTest, LogicFoldsAroundComparisons) {
  EXPECT_EQ(Simplify((x < 5) && (x * 2 + 1 < x * 2 + 3)), "x < 5");
  EXPECT_EQ(Simplify(!(x - x == 0)), "T.bool(False)");
  EXPECT_EQ(Simplify((x - x == 1) || (y + y > 1)), "y > 0");
}

// ---------------------------------------------------------------- other types

TEST_F(CanonicalSimplifyTest, NonIntegerExpressionsAreOnlyWalkedInto) {
  Var f("f", DataType::Float(32));
  PrimExpr sum = f + f;
  EXPECT_TRUE(ana.canonical_simplify(sum).same_as(sum));
  Var u("u", DataType::UInt(32));
  PrimExpr unsigned_sum = u + u - u;
  EXPECT_TRUE(ana.canonical_simplify(unsigned_sum).same_as(unsigned_sum));
  EXPECT_EQ(ToScript(ana.canonical_simplify(cast(DataType::Float(32), x + x) + f)),
            ToScript(cast(DataType::Float(32), x * 2) + f));
}

TEST_F(CanonicalSimplifyTest, IndicesInsideLoadsAndVectors) {
  Buffer b = DeclBuffer({64}, DataType::Float(32), "B");
  PrimExpr load = BufferLoad(b, {floordiv(x, 4) * 4 + floormod(x, 4)});
  EXPECT_EQ(ToScript(ana.canonical_simplify(load)), ToScript(BufferLoad(b, {x})));
  PrimExpr ramp = Ramp(x + x - x, 1, 4);
  EXPECT_EQ(ToScript(ana.canonical_simplify(ramp)), ToScript(Ramp(x, 1, 4)));
}

TEST_F(CanonicalSimplifyTest, Int64) {
  Var n("n", DataType::Int(64)), m("m", DataType::Int(64));
  PrimExpr out = ana.canonical_simplify(floordiv(n * 4 + m * 8, 4));
  EXPECT_EQ(ToScript(out), ToScript(m * 2 + n));
  auto i64 = [](int64_t v) { return make_const(DataType::Int(64), v); };
  out = ana.canonical_simplify(n * i64(int64_t{1} << 32) + n);
  EXPECT_EQ(ToScript(out), ToScript(Mul(n, i64((int64_t{1} << 32) + 1))));
  out = ana.canonical_simplify(floormod(n, 8) + floordiv(n, 8) * 8);
  EXPECT_EQ(ToScript(out), "n");
}

// ---------------------------------------------------------------- overflow guards

TEST_F(CanonicalSimplifyTest, CoefficientsThatDoNotFitStayUnfolded) {
  EXPECT_EQ(Simplify(Mul(Mul(x, 65536), 65536)), "x * 65536 * 65536");
  Var b("b", DataType::Int(8));
  PrimExpr hundred = make_const(DataType::Int(8), int64_t{100});
  PrimExpr narrow = Add(Mul(b, hundred), Mul(b, hundred));  // 200 * b: 200 is not an int8
  EXPECT_TRUE(StructuralEqual(ana.canonical_simplify(narrow), narrow));
}

TEST_F(CanonicalSimplifyTest, ExpansionThatMayWrapKeepsTheOriginal) {
  Bind(x, 0, 1000);
  Bind(y, 0, 1000);
  // (x - y) * 3000000 fits int32 whenever x == y; x * 3000000 alone may not.
  PrimExpr product = (x - y) * 3000000;
  EXPECT_TRUE(ana.canonical_simplify(product).same_as(product));
  EXPECT_EQ(Simplify((x - y) * 3), "x * 3 - y * 3");
}

TEST_F(CanonicalSimplifyTest, NegationOfTheMinimumIsNotIntroduced) {
  // At x < 0 the select is INT32_MIN: -16 - it fits, but its negation would not.
  PrimExpr e = Sub(-16, Select(x < 0, IntImm(DataType::Int(32), INT32_MIN), x));
  EXPECT_EQ(Simplify(e), "-16 - T.Select(x < 0, -2147483648, x)");
  EXPECT_EQ(Simplify(FloorDiv(x, IntImm(DataType::Int(32), INT32_MIN))), "x // -2147483648");
}

// ---------------------------------------------------------------- bindings

TEST_F(CanonicalSimplifyTest, UpdateSubstitutes) {
  ana.canonical_simplify.Update(y, x * 2 + 1);
  EXPECT_EQ(ToScript(ana.canonical_simplify(y - x - x)), "1");
  EXPECT_EQ(ToScript(ana.canonical_simplify(floordiv(y, 2))), "x");
}

TEST_F(CanonicalSimplifyTest, UpdateRefusesSilentRebinding) {
  ana.canonical_simplify.Update(y, x + 1);
  ana.canonical_simplify.Update(y, x + 1);  // the same value again is fine
  EXPECT_THROW(ana.canonical_simplify.Update(y, x + 2), Error);
  ana.canonical_simplify.Update(y, x + 2, /*allow_override=*/true);
  EXPECT_EQ(ToScript(ana.canonical_simplify(y - x)), "2");
}

TEST_F(CanonicalSimplifyTest, CyclicBindingsTerminate) {
  ana.canonical_simplify.Update(x, y + 1);
  ana.canonical_simplify.Update(y, x + 1);
  EXPECT_EQ(ToScript(ana.canonical_simplify(x)), "x + 2");
}

// ---------------------------------------------------------------- random expressions

// Random expressions (nested floordiv/floormod/truncdiv/truncmod by constants of both signs
// and by expressions, min, max, select, comparisons) keep their value wherever defined.
void RunProperty(uint64_t seed, int count, bool bind_ranges) {
  int changed = 0;
  for (int index = 0; index < count; ++index) {
    std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(index));
    std::vector<testing::RangedVar> vars = testing::RandomRangedVars(&rng, 3);
    testing::RandomExprGenerator gen(&rng, &vars);
    int depth = std::uniform_int_distribution<int>(1, 6)(rng);
    PrimExpr e = index % 10 == 0 ? gen.Condition(depth) : gen.Integer(depth);
    Analyzer ana;
    if (bind_ranges) {
      for (const testing::RangedVar& v : vars) {
        ana.Bind(v.var,
                 Range(IntImm(DataType::Int(32), v.lo), IntImm(DataType::Int(32), v.extent)));
      }
    }
    PrimExpr simplified = ana.canonical_simplify(e);
    if (!simplified.same_as(e)) ++changed;
    for (const VarValueMap& point : testing::SamplePoints(&rng, vars, 12)) {
      std::optional<int64_t> expected = EvalInt(e, point);
      if (!expected) continue;
      ASSERT_EQ(EvalInt(simplified, point), expected)
          << "seed " << seed << " index " << index << ": " << e << "\n  => " << simplified;
    }
  }
  // The property must not hold vacuously: most expressions do get rewritten.
  EXPECT_GT(changed, count / 2);
}

TEST(CanonicalSimplifyProperty, RandomExpressionsWithBoundVariables) { RunProperty(1, 3000, true); }

TEST(CanonicalSimplifyProperty, RandomExpressionsWithFreeVariables) { RunProperty(2, 2000, false); }

}  // namespace
}  // namespace loom::arith
