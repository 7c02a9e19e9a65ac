// Hand-written cases for the rewrite simplifier: each input and its exact expected output
// (compared structurally, printed on failure), family by family, with negative constants,
// int64 and uint32, ranges from Analyzer::Bind, and constraint scopes.
#include "loom/arith/rewrite_simplify.h"

#include <gtest/gtest.h>

#include <limits>

#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/ir/structural.h"

namespace loom::arith {
namespace {

PrimExpr I(int64_t v) { return IntImm(DataType::Int(32), v); }
PrimExpr L(int64_t v) { return IntImm(DataType::Int(64), v); }
PrimExpr U(int64_t v) { return IntImm(DataType::UInt(32), v); }
PrimExpr F(double v) { return FloatImm(DataType::Float(32), v); }
PrimExpr B(bool v) { return IntImm(DataType::Bool(), v); }

class RewriteSimplify : public ::testing::Test {
 protected:
  // Inputs are built with the raw node constructors, so the simplifier does all the work.
  void Check(const PrimExpr& input, const PrimExpr& expected) {
    PrimExpr actual = ana.rewrite_simplify(input);
    EXPECT_TRUE(StructuralEqual(actual, expected))
        << "input:    " << ToScript(input) << "\n  got:      " << ToScript(actual)
        << "\n  expected: " << ToScript(expected);
  }
  void Unchanged(const PrimExpr& input) { Check(input, input); }

  Analyzer ana;
  Var x{"x"}, y{"y"}, z{"z"}, w{"w"};
  Var a{"a", DataType::Int(64)}, b{"b", DataType::Int(64)};
  Var u{"u", DataType::UInt(32)};
  Var f{"f", DataType::Float(32)};
  Var p{"p", DataType::Bool()}, q{"q", DataType::Bool()};
};

TEST_F(RewriteSimplify, ConstantsFoldExactly) {
  Check(Add(I(3), I(4)), I(7));
  Check(Sub(I(3), I(10)), I(-7));
  Check(Mul(I(-3), I(5)), I(-15));
  Check(FloorDiv(I(-7), I(2)), I(-4));
  Check(FloorMod(I(-7), I(2)), I(1));
  Check(FloorMod(I(7), I(-2)), I(-1));
  Check(Div(I(-7), I(2)), I(-3));
  Check(Mod(I(-7), I(2)), I(-1));
  Check(Min(I(3), I(-2)), I(-2));
  Check(Max(I(3), I(-2)), I(3));
  Check(LT(I(3), I(4)), B(true));
  Check(Cast(DataType::Int(64), I(5)), L(5));
  Check(Add(Add(I(1), I(2)), Mul(I(3), I(4))), I(15));
}

TEST_F(RewriteSimplify, ConstantFoldingNeverOverflowsOrDividesByZero) {
  Unchanged(Add(I(std::numeric_limits<int32_t>::max()), I(1)));
  Unchanged(Mul(L(std::numeric_limits<int64_t>::max()), L(2)));
  Unchanged(FloorDiv(I(5), I(0)));
  Unchanged(FloorDiv(x, I(0)));
  Unchanged(Mod(x, I(0)));
  // (x + big) + big: the constants cannot fold, so the rule is refused.
  Unchanged(Add(Add(x, I(2000000000)), I(2000000000)));
}

TEST_F(RewriteSimplify, FloatsOnlyFoldConstants) {
  Check(Add(F(1.5f), F(2.0f)), F(3.5f));
  Unchanged(Add(Add(f, F(1.0f)), F(2.0f)));
  Unchanged(Sub(f, f));
  Unchanged(Mul(f, F(0.0f)));
  Check(Select(B(true), f, F(2.0f)), f);
  Unchanged(Select(p, f, f));
}

TEST_F(RewriteSimplify, AddMovesConstantsRightAndFoldsThem) {
  Check(Add(x, I(0)), x);
  Check(Add(I(3), x), Add(x, I(3)));
  Check(Add(Add(x, I(1)), I(2)), Add(x, I(3)));
  Check(Add(Add(x, I(5)), I(-7)), Sub(x, I(2)));
  Check(Add(Sub(x, I(3)), I(5)), Add(x, I(2)));
  Check(Add(Sub(x, I(5)), I(3)), Sub(x, I(2)));
  Check(Add(Sub(I(4), x), I(3)), Sub(I(7), x));
  Check(Add(x, I(-4)), Sub(x, I(4)));
  Check(Add(Add(x, I(2)), y), Add(Add(x, y), I(2)));
  Check(Add(x, Add(y, I(2))), Add(Add(x, y), I(2)));
  Check(Add(Sub(x, I(2)), y), Sub(Add(x, y), I(2)));
  Check(Add(x, Sub(y, I(2))), Sub(Add(x, y), I(2)));
  Check(Add(Add(x, I(1)), Add(y, I(2))), Add(Add(x, y), I(3)));
}

TEST_F(RewriteSimplify, AddCancelsAndMergesTerms) {
  Check(Add(Sub(x, y), y), x);
  Check(Add(y, Sub(x, y)), x);
  Check(Add(Sub(I(0), x), y), Sub(y, x));
  Check(Add(x, Sub(I(0), y)), Sub(x, y));
  Check(Add(x, x), Mul(x, I(2)));
  Check(Add(Mul(x, I(3)), Mul(x, I(4))), Mul(x, I(7)));
  Check(Add(Mul(x, I(3)), x), Mul(x, I(4)));
  Check(Add(x, Mul(x, I(3))), Mul(x, I(4)));
  Check(Add(Add(y, Mul(x, I(2))), Mul(x, I(3))), Add(y, Mul(x, I(5))));
  Check(Add(Mul(x, I(2)), Mul(x, I(-2))), I(0));
  Check(Add(Min(x, y), Max(x, y)), Add(x, y));
  Check(Add(Max(x, y), Min(y, x)), Add(x, y));
  Check(Add(Select(p, x, y), Select(p, z, w)), Select(p, Add(x, z), Add(y, w)));
}

TEST_F(RewriteSimplify, AddRecombinesDivisionAndRemainder) {
  Check(Add(Mul(FloorDiv(x, I(8)), I(8)), FloorMod(x, I(8))), x);
  Check(Add(FloorMod(x, I(8)), Mul(FloorDiv(x, I(8)), I(8))), x);
  Check(Add(Mul(FloorDiv(x, I(-3)), I(-3)), FloorMod(x, I(-3))), x);
  Check(Add(Mul(Div(x, I(8)), I(8)), Mod(x, I(8))), x);
  Check(Add(Mod(x, I(5)), Mul(Div(x, I(5)), I(5))), x);
  Check(Add(Add(y, Mul(FloorDiv(x, I(4)), I(4))), FloorMod(x, I(4))), Add(y, x));
}

TEST_F(RewriteSimplify, SubFoldsConstants) {
  Check(Sub(x, x), I(0));
  Check(Sub(x, I(0)), x);
  Check(Sub(x, I(-3)), Add(x, I(3)));
  Check(Sub(Add(x, I(5)), I(2)), Add(x, I(3)));
  Check(Sub(Add(x, I(2)), I(5)), Sub(x, I(3)));
  Check(Sub(Sub(x, I(2)), I(3)), Sub(x, I(5)));
  Check(Sub(I(10), Add(x, I(3))), Sub(I(7), x));
  Check(Sub(I(10), Sub(x, I(3))), Sub(I(13), x));
  Check(Sub(I(10), Sub(I(3), x)), Add(x, I(7)));
  Check(Sub(Add(x, I(3)), Add(y, I(1))), Add(Sub(x, y), I(2)));
  Check(Sub(x, Add(y, I(2))), Sub(Sub(x, y), I(2)));
}

TEST_F(RewriteSimplify, SubCancelsTerms) {
  Check(Sub(Add(x, y), x), y);
  Check(Sub(Add(x, y), y), x);
  Check(Sub(Add(x, I(3)), x), I(3));
  Check(Sub(x, Add(x, y)), Sub(I(0), y));
  Check(Sub(x, Sub(x, y)), y);
  Check(Sub(Sub(x, y), x), Sub(I(0), y));
  Check(Sub(x, Sub(I(0), y)), Add(x, y));
  Check(Sub(Add(x, y), Add(x, z)), Sub(y, z));
  Check(Sub(Add(x, y), Add(z, y)), Sub(x, z));
  Check(Sub(Add(x, y), Add(y, z)), Sub(x, z));
  Check(Sub(Add(x, y), Sub(x, z)), Add(y, z));
  Check(Sub(Sub(x, y), Sub(x, z)), Sub(z, y));
  Check(Sub(Mul(x, I(5)), Mul(x, I(2))), Mul(x, I(3)));
  Check(Sub(Mul(x, I(5)), x), Mul(x, I(4)));
  Check(Sub(x, Mul(x, I(5))), Mul(x, I(-4)));
}

TEST_F(RewriteSimplify, SubOfMinMaxAndRemainders) {
  Check(Sub(x, Min(x, y)), Max(Sub(x, y), I(0)));
  Check(Sub(x, Max(x, y)), Min(Sub(x, y), I(0)));
  Check(Sub(Min(x, y), x), Min(Sub(y, x), I(0)));
  Check(Sub(Add(x, y), Min(x, y)), Max(x, y));
  Check(Sub(Add(x, y), Max(x, y)), Min(x, y));
  Check(Sub(x, Mul(FloorDiv(x, I(4)), I(4))), FloorMod(x, I(4)));
  Check(Sub(x, Mul(Div(x, I(4)), I(4))), Mod(x, I(4)));
  Check(Sub(Select(p, x, y), Select(p, z, w)), Select(p, Sub(x, z), Sub(y, w)));
}

TEST_F(RewriteSimplify, MulFoldsAndDistributesConstants) {
  Check(Mul(x, I(1)), x);
  Check(Mul(x, I(0)), I(0));
  Check(Mul(I(3), x), Mul(x, I(3)));
  Check(Mul(Mul(x, I(2)), I(3)), Mul(x, I(6)));
  Check(Mul(Add(x, I(2)), I(3)), Add(Mul(x, I(3)), I(6)));
  Check(Mul(Sub(x, I(2)), I(3)), Sub(Mul(x, I(3)), I(6)));
  Check(Mul(Add(x, I(2)), I(-3)), Sub(Mul(x, I(-3)), I(6)));
  Check(Mul(Mul(x, I(2)), y), Mul(Mul(x, y), I(2)));
  Check(Mul(x, Mul(y, I(2))), Mul(Mul(x, y), I(2)));
}

TEST_F(RewriteSimplify, FloorDivByConstants) {
  Check(FloorDiv(x, I(1)), x);
  Check(FloorDiv(x, I(-1)), Sub(I(0), x));
  Check(FloorDiv(I(0), x), I(0));
  Check(FloorDiv(x, x), I(1));
  Check(FloorDiv(Mul(x, y), y), x);
  Check(FloorDiv(Add(x, y), y), Add(FloorDiv(x, y), I(1)));
  Check(FloorDiv(FloorDiv(x, I(4)), I(8)), FloorDiv(x, I(32)));
  Unchanged(FloorDiv(FloorDiv(x, I(-4)), I(8)));
  Check(FloorDiv(Mul(x, I(8)), I(4)), Mul(x, I(2)));
  Check(FloorDiv(Mul(x, I(-8)), I(4)), Mul(x, I(-2)));
  Check(FloorDiv(Mul(x, I(4)), I(8)), FloorDiv(x, I(2)));
  Check(FloorDiv(Mul(x, I(-4)), I(8)), FloorDiv(x, I(-2)));
  Unchanged(FloorDiv(Mul(x, I(3)), I(8)));
  Check(FloorDiv(Add(Mul(x, I(8)), y), I(4)), Add(Mul(x, I(2)), FloorDiv(y, I(4))));
  Check(FloorDiv(Add(y, Mul(x, I(8))), I(4)), Add(FloorDiv(y, I(4)), Mul(x, I(2))));
  Check(FloorDiv(Sub(y, Mul(x, I(8))), I(-4)), Add(FloorDiv(y, I(-4)), Mul(x, I(2))));
  Check(FloorDiv(Add(x, I(8)), I(4)), Add(FloorDiv(x, I(4)), I(2)));
  Check(FloorDiv(Add(x, I(-8)), I(4)), Sub(FloorDiv(x, I(4)), I(2)));
  Unchanged(FloorDiv(Add(x, I(7)), I(4)));
  Check(FloorDiv(FloorMod(x, I(4)), I(8)), I(0));
}

TEST_F(RewriteSimplify, FloorModByConstants) {
  Check(FloorMod(x, I(1)), I(0));
  Check(FloorMod(x, I(-1)), I(0));
  Check(FloorMod(x, x), I(0));
  Check(FloorMod(I(0), x), I(0));
  Check(FloorMod(Mul(x, y), y), I(0));
  Check(FloorMod(Add(x, y), y), FloorMod(x, y));
  Check(FloorMod(Mul(x, I(8)), I(4)), I(0));
  Check(FloorMod(Mul(x, I(-8)), I(4)), I(0));
  Unchanged(FloorMod(Mul(x, I(6)), I(4)));
  Check(FloorMod(Add(Mul(x, I(8)), y), I(4)), FloorMod(y, I(4)));
  Check(FloorMod(Add(y, Mul(x, I(8))), I(4)), FloorMod(y, I(4)));
  Check(FloorMod(Sub(y, Mul(x, I(8))), I(4)), FloorMod(y, I(4)));
  Check(FloorMod(Add(x, I(8)), I(4)), FloorMod(x, I(4)));
  Check(FloorMod(Add(x, I(9)), I(4)), FloorMod(Add(x, I(1)), I(4)));
  Check(FloorMod(Add(x, I(-1)), I(4)), FloorMod(Add(x, I(3)), I(4)));
  Check(FloorMod(Sub(x, I(8)), I(4)), FloorMod(x, I(4)));
  Check(FloorMod(FloorMod(x, I(8)), I(4)), FloorMod(x, I(4)));
  Check(FloorMod(FloorMod(x, I(4)), I(8)), FloorMod(x, I(4)));
  Check(FloorMod(FloorMod(x, I(3)), I(4)), FloorMod(x, I(3)));
  Unchanged(FloorMod(FloorMod(x, I(4)), I(3)));
}

TEST_F(RewriteSimplify, TruncatedDivisionAndRemainder) {
  Check(Div(x, I(1)), x);
  Check(Div(x, I(-1)), Sub(I(0), x));
  Check(Div(x, x), I(1));
  Check(Div(Mul(x, y), y), x);
  Check(Div(Div(x, I(4)), I(2)), Div(x, I(8)));
  Check(Div(Mul(x, I(8)), I(-4)), Mul(x, I(-2)));
  Unchanged(Div(x, I(4)));
  Unchanged(Div(Add(x, I(8)), I(4)));
  Check(Mod(x, I(1)), I(0));
  Check(Mod(x, I(-1)), I(0));
  Check(Mod(x, x), I(0));
  Check(Mod(Mul(x, I(8)), I(4)), I(0));
  Check(Mod(x, I(-4)), Mod(x, I(4)));
  Unchanged(Mod(x, I(4)));
  Unchanged(Mod(Add(x, I(8)), I(4)));
}

TEST_F(RewriteSimplify, MinOfEqualShiftedAndNestedTerms) {
  Check(Min(x, x), x);
  Check(Min(I(3), x), Min(x, I(3)));
  Check(Min(Min(x, I(3)), I(1)), Min(x, I(1)));
  Check(Min(Add(x, I(2)), Add(x, I(5))), Add(x, I(2)));
  Check(Min(Add(x, I(2)), x), x);
  Check(Min(Sub(x, I(2)), x), Sub(x, I(2)));
  Check(Min(x, Sub(x, I(2))), Sub(x, I(2)));
  Check(Min(Add(x, I(3)), Sub(x, I(2))), Sub(x, I(2)));
  Check(Min(Min(x, y), x), Min(x, y));
  Check(Min(y, Min(x, y)), Min(x, y));
  Check(Min(Max(x, y), x), x);
  Check(Min(y, Max(x, y)), y);
  Check(Min(Max(x, y), Min(x, y)), Min(x, y));
  Check(Min(Min(x, I(3)), y), Min(Min(x, y), I(3)));
  Check(Min(Max(x, I(5)), I(3)), I(3));
}

TEST_F(RewriteSimplify, MinFactorsCommonTerms) {
  Check(Min(Add(x, y), Add(x, z)), Add(x, Min(y, z)));
  Check(Min(Add(y, x), Add(z, x)), Add(Min(y, z), x));
  Check(Min(Sub(x, y), Sub(x, z)), Sub(x, Max(y, z)));
  Check(Min(Sub(y, x), Sub(z, x)), Sub(Min(y, z), x));
  Check(Min(Mul(x, I(4)), Mul(y, I(4))), Mul(Min(x, y), I(4)));
  Check(Min(Mul(x, I(-4)), Mul(y, I(-4))), Mul(Max(x, y), I(-4)));
  Check(Min(Mul(x, I(4)), I(12)), Mul(Min(x, I(3)), I(4)));
  Check(Min(Mul(x, I(-4)), I(12)), Mul(Max(x, I(-3)), I(-4)));
  Unchanged(Min(Mul(x, I(4)), I(10)));
  Check(Min(FloorDiv(x, I(4)), FloorDiv(y, I(4))), FloorDiv(Min(x, y), I(4)));
  Check(Min(FloorDiv(x, I(-4)), FloorDiv(y, I(-4))), FloorDiv(Max(x, y), I(-4)));
}

TEST_F(RewriteSimplify, MaxMirrorsMin) {
  Check(Max(x, x), x);
  Check(Max(I(3), x), Max(x, I(3)));
  Check(Max(Max(x, I(3)), I(1)), Max(x, I(3)));
  Check(Max(Add(x, I(2)), Add(x, I(5))), Add(x, I(5)));
  Check(Max(Add(x, I(2)), x), Add(x, I(2)));
  Check(Max(Sub(x, I(2)), x), x);
  Check(Max(Add(x, I(3)), Sub(x, I(2))), Add(x, I(3)));
  Check(Max(Max(x, y), y), Max(x, y));
  Check(Max(Min(x, y), x), x);
  Check(Max(x, Min(x, y)), x);
  Check(Max(Min(x, y), Max(x, y)), Max(x, y));
  Check(Max(x, Max(y, I(2))), Max(Max(x, y), I(2)));
  Check(Max(Min(x, I(3)), I(5)), I(5));
  Check(Max(Add(x, y), Add(z, x)), Add(x, Max(y, z)));
  Check(Max(Sub(x, y), Sub(x, z)), Sub(x, Min(y, z)));
  Check(Max(Mul(x, I(-2)), Mul(y, I(-2))), Mul(Min(x, y), I(-2)));
  Check(Max(Mul(x, I(8)), I(-16)), Mul(Max(x, I(-2)), I(8)));
  Check(Max(FloorDiv(x, I(8)), FloorDiv(y, I(8))), FloorDiv(Max(x, y), I(8)));
}

TEST_F(RewriteSimplify, ComparisonsNormalizeAndMoveConstants) {
  Check(GT(x, y), LT(y, x));
  Check(GE(x, y), LE(y, x));
  Check(LT(x, x), B(false));
  Check(LE(x, x), B(true));
  Check(LT(Add(x, I(3)), I(10)), LT(x, I(7)));
  Check(LT(Sub(x, I(3)), I(10)), LT(x, I(13)));
  Check(LT(I(3), Add(x, I(5))), LT(I(-2), x));
  Check(LT(I(3), Sub(x, I(5))), LT(I(8), x));
  Check(LT(Sub(I(10), x), I(3)), LT(I(7), x));
  Check(LT(I(3), Sub(I(10), x)), LT(x, I(7)));
  Check(LE(Add(x, I(3)), I(10)), LE(x, I(7)));
  Check(LE(I(3), Sub(x, I(5))), LE(I(8), x));
  Check(GE(Add(x, I(2)), I(5)), LE(I(3), x));
  Check(GT(Sub(x, I(2)), I(5)), LT(I(7), x));
  Check(LT(Add(x, I(1)), Add(y, I(3))), LT(Sub(x, I(2)), y));
}

TEST_F(RewriteSimplify, ComparisonsCancelTermsAndFactors) {
  Check(LT(Sub(x, y), I(0)), LT(x, y));
  Check(LT(I(0), Sub(x, y)), LT(y, x));
  Check(LE(Sub(x, y), I(0)), LE(x, y));
  Check(LE(I(0), Sub(x, y)), LE(y, x));
  Check(LT(Add(x, y), Add(x, z)), LT(y, z));
  Check(LE(Add(y, x), Add(z, x)), LE(y, z));
  Check(LT(Sub(x, y), Sub(x, z)), LT(z, y));
  Check(LT(Mul(x, I(4)), Mul(y, I(4))), LT(x, y));
  Check(LT(Mul(x, I(-4)), Mul(y, I(-4))), LT(y, x));
  Check(LE(Mul(x, I(3)), Mul(y, I(3))), LE(x, y));
  Check(LT(Mul(x, I(4)), I(10)), LT(x, I(3)));
  Check(LE(Mul(x, I(4)), I(10)), LE(x, I(2)));
  Check(LT(I(10), Mul(x, I(4))), LT(I(2), x));
  Check(LE(I(10), Mul(x, I(4))), LT(I(2), x));
  Check(LT(Mul(x, I(-2)), I(5)), LT(I(-3), x));
  Check(LE(Mul(x, I(-2)), I(5)), LT(I(-3), x));
  Check(LT(I(5), Mul(x, I(-2))), LT(x, I(-2)));
  Check(LE(I(5), Mul(x, I(-2))), LE(x, I(-3)));
  Check(LT(FloorDiv(x, I(4)), I(3)), LT(x, I(12)));
  Check(LE(FloorDiv(x, I(4)), I(3)), LT(x, I(16)));
  Check(LT(I(3), FloorDiv(x, I(4))), LT(I(15), x));
  Check(LE(I(3), FloorDiv(x, I(4))), LE(I(12), x));
}

TEST_F(RewriteSimplify, EqualityAndInequality) {
  Check(EQ(x, x), B(true));
  Check(EQ(I(3), x), EQ(x, I(3)));
  Check(EQ(Add(x, I(3)), I(5)), EQ(x, I(2)));
  Check(EQ(Sub(x, I(3)), I(5)), EQ(x, I(8)));
  Check(EQ(Sub(I(10), x), I(3)), EQ(x, I(7)));
  Check(EQ(Sub(x, y), I(0)), EQ(x, y));
  Check(EQ(Add(x, y), Add(x, z)), EQ(y, z));
  Check(EQ(Mul(x, I(4)), Mul(y, I(4))), EQ(x, y));
  Check(EQ(Mul(x, I(4)), I(8)), EQ(x, I(2)));
  Check(EQ(Mul(x, I(-4)), I(8)), EQ(x, I(-2)));
  Check(EQ(Mul(x, I(4)), I(9)), B(false));
  Check(EQ(p, B(true)), p);
  Check(EQ(p, B(false)), Not(p));
  Check(NE(x, x), B(false));
  Check(NE(I(3), x), NE(x, I(3)));
  Check(NE(Add(x, I(1)), I(3)), NE(x, I(2)));
  Check(NE(Sub(x, y), I(0)), NE(x, y));
  Check(NE(Mul(x, I(4)), I(9)), B(true));
  Check(NE(Mul(x, I(4)), I(8)), NE(x, I(2)));
  Check(NE(p, B(true)), Not(p));
}

TEST_F(RewriteSimplify, NotMovesInward) {
  Check(Not(PrimExpr(Not(p))), p);  // PrimExpr(): Not(Not(p)) would copy the inner handle
  Check(Not(LT(x, y)), LE(y, x));
  Check(Not(LE(x, y)), LT(y, x));
  Check(Not(GT(x, y)), LE(x, y));
  Check(Not(EQ(x, y)), NE(x, y));
  Check(Not(NE(x, y)), EQ(x, y));
  Check(Not(And(p, q)), Or(Not(p), Not(q)));
  Check(Not(Or(LT(x, I(3)), q)), And(LE(I(3), x), Not(q)));
  Check(Not(B(true)), B(false));
}

TEST_F(RewriteSimplify, AndAbsorbsMergesAndContradicts) {
  Check(And(p, B(true)), p);
  Check(And(B(true), p), p);
  Check(And(p, B(false)), B(false));
  Check(And(p, p), p);
  Check(And(p, Not(p)), B(false));
  Check(And(p, Or(p, q)), p);
  Check(And(LT(x, I(3)), LT(x, I(5))), LT(x, I(3)));
  Check(And(LT(I(2), x), LT(I(4), x)), LT(I(4), x));
  Check(And(LE(x, I(3)), LE(x, I(-1))), LE(x, I(-1)));
  Check(And(LT(x, I(3)), LE(I(5), x)), B(false));
  Check(And(LT(x, I(3)), GE(x, I(3))), B(false));
  Check(And(LE(x, I(3)), LE(I(3), x)), EQ(x, I(3)));
  Check(And(LE(x, I(3)), LE(I(4), x)), B(false));
  Unchanged(And(LE(x, I(3)), LE(I(2), x)));
  Check(And(LT(x, y), LT(y, x)), B(false));
  Check(And(LE(x, y), LE(y, x)), EQ(x, y));
  Check(And(EQ(x, I(3)), EQ(x, I(4))), B(false));
  Check(And(EQ(x, I(3)), NE(x, I(4))), EQ(x, I(3)));
  Check(And(EQ(x, y), NE(x, y)), B(false));
}

TEST_F(RewriteSimplify, OrAbsorbsMergesAndCovers) {
  Check(Or(p, B(false)), p);
  Check(Or(p, B(true)), B(true));
  Check(Or(p, Not(p)), B(true));
  Check(Or(p, And(p, q)), p);
  Check(Or(LT(x, I(3)), LT(x, I(5))), LT(x, I(5)));
  Check(Or(LE(I(2), x), LE(I(4), x)), LE(I(2), x));
  Check(Or(LT(x, I(3)), LE(I(3), x)), B(true));
  Check(Or(LE(x, I(3)), LE(I(4), x)), B(true));
  Unchanged(Or(LE(x, I(3)), LE(I(5), x)));
  Check(Or(LT(x, y), LT(y, x)), NE(x, y));
  Check(Or(LT(x, y), LE(y, x)), B(true));
  Check(Or(EQ(x, I(3)), NE(x, I(3))), B(true));
  Check(Or(NE(x, I(3)), NE(x, I(4))), B(true));
  Check(Or(EQ(x, I(3)), NE(x, I(4))), NE(x, I(4)));
}

TEST_F(RewriteSimplify, SelectCollapses) {
  Check(Select(p, x, x), x);
  Check(Select(B(true), x, y), x);
  Check(Select(B(false), x, y), y);
  Check(Select(Not(p), x, y), Select(p, y, x));
  Check(Select(p, Select(p, x, y), z), Select(p, x, z));
  Check(Select(p, x, Select(p, y, z)), Select(p, x, z));
  Check(Select(LT(x, y), x, y), Min(x, y));
  Check(Select(LT(x, y), y, x), Max(x, y));
  Check(Select(LE(x, y), x, y), Min(x, y));
  Check(Select(GT(x, y), x, y), Max(y, x));
  Check(Select(LT(Add(x, I(1)), I(5)), Add(Add(y, I(1)), I(1)), y),
        Select(LT(x, I(4)), Add(y, I(2)), y));
}

TEST_F(RewriteSimplify, LetInlinesTrivialValues) {
  Var v("v");
  Check(Let(v, I(3), Add(v, I(1))), I(4));
  Check(Let(v, x, Add(v, v)), Mul(x, I(2)));
  Check(Let(v, Add(x, I(1)), y), y);
  Unchanged(Let(v, Add(x, I(1)), Mul(v, I(2))));
  Check(Let(v, Add(Add(x, I(1)), I(1)), Mul(v, I(2))), Let(v, Add(x, I(2)), Mul(v, I(2))));
}

TEST_F(RewriteSimplify, CastsOfConstantsFold) {
  Check(Cast(DataType::Int(64), I(-5)), L(-5));
  Check(Cast(DataType::Int(8), I(300)), IntImm(DataType::Int(8), 44));
  Check(Cast(DataType::Float(32), I(2)), F(2.0f));
  Check(Cast(DataType::Int(32), F(2.75f)), I(2));
  Unchanged(Cast(DataType::Int(64), x));
}

TEST_F(RewriteSimplify, VectorArithmeticStaysRampAndBroadcast) {
  Check(Add(Broadcast(x, 4), Broadcast(y, 4)), Broadcast(Add(x, y), 4));
  Check(Add(Ramp(x, I(1), 4), Ramp(y, I(2), 4)), Ramp(Add(x, y), I(3), 4));
  Check(Add(Ramp(x, I(1), 4), Broadcast(I(2), 4)), Ramp(Add(x, I(2)), I(1), 4));
  Check(Add(Broadcast(y, 8), Ramp(x, I(1), 8)), Ramp(Add(y, x), I(1), 8));
  Check(Sub(Ramp(x, I(3), 4), Ramp(x, I(1), 4)), Ramp(I(0), I(2), 4));
  Check(Sub(Broadcast(y, 4), Ramp(x, I(1), 4)), Ramp(Sub(y, x), I(-1), 4));
  Check(Mul(Ramp(x, I(2), 4), Broadcast(I(3), 4)), Ramp(Mul(x, I(3)), I(6), 4));
  Check(Ramp(x, I(0), 4), Broadcast(x, 4));
  Check(Sub(Ramp(x, I(1), 4), Ramp(x, I(1), 4)), Broadcast(I(0), 4));
  Check(FloorDiv(Broadcast(x, 4), Broadcast(I(4), 4)), Broadcast(FloorDiv(x, I(4)), 4));
  Check(Min(Broadcast(x, 4), Broadcast(Add(x, I(1)), 4)), Broadcast(x, 4));
  Check(LT(Broadcast(x, 4), Broadcast(y, 4)), Broadcast(LT(x, y), 4));
  Check(And(Broadcast(p, 4), Broadcast(q, 4)), Broadcast(And(p, q), 4));
  Check(Add(Broadcast(I(2), 4), Broadcast(I(3), 4)), Broadcast(I(5), 4));
}

// A ramp whose lanes all fall in one block of the divisor, by the base's modular set: the
// quotient is broadcast, the remainder a ramp. Lanes that may cross a block boundary stay.
TEST_F(RewriteSimplify, DivisionOfARampWithinOneBlock) {
  PrimExpr sixteen_x = Mul(x, I(16));
  Check(FloorDiv(Ramp(Add(sixteen_x, I(8)), I(1), 8), Broadcast(I(16), 8)), Broadcast(x, 8));
  Check(FloorMod(Ramp(Add(sixteen_x, I(8)), I(1), 8), Broadcast(I(16), 8)),
        Ramp(I(8), I(1), 8));
  // x * 8 mod 16 is 0 or 8: 8 lanes from either stay below 16.
  Check(FloorDiv(Ramp(Mul(x, I(8)), I(1), 8), Broadcast(I(16), 8)),
        Broadcast(FloorDiv(x, I(2)), 8));
  Check(FloorDiv(Ramp(I(24), I(2), 4), Broadcast(I(32), 4)), Broadcast(I(0), 4));
  Unchanged(FloorDiv(Ramp(Add(Mul(x, I(8)), I(1)), I(1), 8), Broadcast(I(16), 8)));
  Unchanged(FloorDiv(Ramp(x, I(1), 4), Broadcast(I(4), 4)));
  Unchanged(FloorMod(Ramp(Mul(x, I(16)), I(1), 16), Broadcast(I(8), 16)));
  // A stride whose product with the lanes would overflow int64 decides nothing.
  Unchanged(FloorDiv(Ramp(a, L(int64_t{1} << 62), 3), Broadcast(L(7), 3)));
}

TEST_F(RewriteSimplify, Int64ConstantsStayInt64) {
  Check(Add(Add(a, L(1)), L(2)), Add(a, L(3)));
  Check(Sub(Add(a, L(5)), L(7)), Sub(a, L(2)));
  Check(Add(Mul(a, L(3)), Mul(a, L(4))), Mul(a, L(7)));
  Check(FloorDiv(Add(Mul(a, L(8)), b), L(4)), Add(Mul(a, L(2)), FloorDiv(b, L(4))));
  Check(FloorMod(Add(a, L(9)), L(4)), FloorMod(Add(a, L(1)), L(4)));
  Check(Min(Add(a, L(2)), a), a);
  Check(LT(Mul(a, L(4)), L(10)), LT(a, L(3)));
  Check(Add(Add(a, L(4000000000)), L(4000000000)), Add(a, L(8000000000)));
  Check(Sub(a, a), L(0));
  Check(EQ(Add(a, L(1)), L(0)), EQ(a, L(-1)));
}

TEST_F(RewriteSimplify, UnsignedRefusesRulesThatWouldGoNegative) {
  Check(Add(Add(u, U(3)), U(4)), Add(u, U(7)));
  Check(Sub(Add(u, U(5)), U(2)), Add(u, U(3)));
  Unchanged(Sub(Add(u, U(2)), U(5)));
  Check(Sub(u, u), U(0));
  Check(FloorDiv(Mul(u, U(8)), U(4)), Mul(u, U(2)));
  Check(Min(Add(u, U(2)), u), u);
  // (u + 1) - (v + 1) -> u - v is refused: u - v may be negative where the original is not.
  Var v("v", DataType::UInt(32));
  Unchanged(Sub(Add(u, U(3)), Add(v, U(1))));
  Unchanged(FloorDiv(u, U(0)));
}

TEST_F(RewriteSimplify, BoundsFromRangesDecideRewrites) {
  ana.Bind(x, Range(I(0), I(8)));
  ana.Bind(y, Range(I(-7), I(15)));
  ana.Bind(z, Range(I(-8), I(0)));
  Check(FloorDiv(x, I(8)), I(0));
  Check(FloorMod(x, I(8)), x);
  Check(FloorDiv(z, I(8)), I(-1));
  Check(FloorMod(z, I(8)), Add(z, I(8)));
  Unchanged(FloorDiv(y, I(8)));
  Check(Div(y, I(8)), I(0));
  Check(Mod(y, I(8)), y);
  Check(Div(x, I(3)), FloorDiv(x, I(3)));
  Check(Mod(x, I(3)), FloorMod(x, I(3)));
  Check(Div(z, I(-3)), FloorDiv(z, I(-3)));
  Check(Min(x, I(10)), x);
  Check(Max(x, I(10)), I(10));
  Check(Min(x, I(-1)), I(-1));
  Check(Max(z, x), x);
  Check(LT(x, I(8)), B(true));
  Check(LT(x, I(7)), LT(x, I(7)));
  Check(LE(I(0), x), B(true));
  Check(LT(z, x), B(true));
  Check(EQ(x, I(-1)), B(false));
  Check(NE(z, x), B(true));
  Check(LT(Add(x, I(8)), I(16)), B(true));
}

TEST_F(RewriteSimplify, ConstraintScopesResolveLiteralFacts) {
  {
    ConstraintContext in_if(&ana, LT(x, I(4)));
    Check(Select(LT(x, I(4)), y, z), y);
    Check(Select(LE(I(4), x), y, z), z);
    Check(Select(GE(x, I(4)), y, z), z);
    Check(Select(LT(Add(x, I(1)), I(5)), y, z), y);
    Check(And(LT(x, I(4)), p), p);
  }
  Check(Select(LT(x, I(4)), y, z), Select(LT(x, I(4)), y, z));
  {
    ConstraintContext both(&ana, And(LT(x, y), p));
    Check(Min(x, y), x);
    Check(Max(x, y), y);
    Check(Select(p, z, w), z);
    Check(Or(Not(p), LT(z, w)), LT(z, w));
    Check(NE(x, y), B(true));
    Check(EQ(x, y), B(false));
  }
  {
    ConstraintContext range(&ana, And(LE(I(0), x), LT(x, I(8))));
    Check(FloorDiv(x, I(8)), I(0));
    Check(FloorMod(x, I(8)), x);
    ConstraintContext inner(&ana, EQ(y, I(3)));
    Check(Select(EQ(y, I(3)), x, z), x);
  }
  Unchanged(FloorDiv(x, I(8)));
}

TEST_F(RewriteSimplify, BoundVariablesAreSubstituted) {
  ana.rewrite_simplify.Update(x, I(5));
  Check(Add(x, I(1)), I(6));
  Check(Add(y, x), Add(y, I(5)));
  ana.rewrite_simplify.Update(z, Add(y, I(1)));
  Check(Sub(z, y), I(1));
  // Rebinding to the same value is allowed; to another value only with allow_override.
  ana.rewrite_simplify.Update(x, I(5));
  ana.rewrite_simplify.Update(x, I(7), /*allow_override=*/true);
  Check(x, I(7));
  EXPECT_THROW(ana.rewrite_simplify.Update(x, I(9)), InternalError);
}

TEST_F(RewriteSimplify, RuleHitsNameTheRuleThatFired) {
  RewriteSimplifier& simplify = ana.rewrite_simplify;
  simplify.ResetRuleHits();
  simplify(Add(Add(x, I(1)), I(2)));
  EXPECT_EQ(simplify.RuleHitCount("Add/fold_const_assoc"), 1);
  EXPECT_EQ(simplify.RuleHitCount("Add/const_out_of_left"), 0);
  simplify(FloorMod(Add(Mul(x, I(8)), y), I(4)));
  EXPECT_EQ(simplify.RuleHitCount("FloorMod/drop_mul_add"), 1);
  simplify.ResetRuleHits();
  EXPECT_EQ(simplify.RuleHitCount("Add/fold_const_assoc"), 0);
  int64_t total = 0;
  for (int64_t hits : simplify.RuleHits()) total += hits;
  EXPECT_EQ(total, 0);
  EXPECT_THROW(simplify.RuleHitCount("Add/no_such_rule"), InternalError);
}

// What LoopPartition leaves where it decided a bound: likely(true), and an if_then_else
// whose condition is decided, which is its branch (its other branch is never evaluated).
TEST_F(RewriteSimplify, DecidedLikelyAndIfThenElseFold) {
  auto likely = [](PrimExpr e) { return call_intrin(DataType::Bool(), "likely", {e}); };
  auto choose = [](PrimExpr c, PrimExpr t, PrimExpr e) {
    return call_intrin(t.dtype(), "if_then_else", {c, t, e});
  };
  Check(likely(LT(I(1), I(2))), B(true));
  Check(choose(And(likely(B(true)), LE(I(0), I(3))), f, F(0)), f);
  Check(choose(likely(LT(x, x)), f, F(1)), F(1));
  Unchanged(likely(LT(x, y)));
  Unchanged(choose(likely(LT(x, y)), f, F(0)));
}

TEST_F(RewriteSimplify, SimplifiesNestedExpressionsBottomUp) {
  // ((x * 4 + 3) + 5) // 4  ->  x + 2
  Check(FloorDiv(Add(Add(Mul(x, I(4)), I(3)), I(5)), I(4)), Add(x, I(2)));
  Check(Add(Sub(Add(x, I(3)), x), Mul(y, I(0))), I(3));
  Check(Min(Add(Sub(x, I(1)), I(1)), Add(x, I(5))), x);
  Check(LT(Add(Mul(x, I(2)), Mul(x, I(2))), I(8)), LT(x, I(2)));
  Check(Select(EQ(Sub(x, x), I(0)), Add(y, I(0)), z), y);
}

}  // namespace
}  // namespace loom::arith
