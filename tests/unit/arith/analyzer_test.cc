// The Analyzer as one object: bindings and scoped facts reach every sub-analysis, and the
// proofs (CanProve*) combine them.
#include "loom/arith/analyzer.h"

#include <gtest/gtest.h>

#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/ir/structural.h"

namespace loom::arith {
namespace {

TEST(Analyzer, ConstantComparisonsAreDecided) {
  Analyzer ana;
  EXPECT_TRUE(ana.CanProve(PrimExpr(3) < PrimExpr(4)));
  EXPECT_FALSE(ana.CanProve(PrimExpr(4) < PrimExpr(3)));
}

TEST(Analyzer, RangeBindingReachesBoundsAndProofs) {
  Analyzer ana;
  Var i("i"), j("j");
  ana.Bind(i, Range(0, 32));
  ana.Bind(j, Range(0, 16));
  PrimExpr index = i * 64 + j * 4 + 3;
  EXPECT_EQ(ana.const_int_bound(index), (ConstIntBound{3, 2047}));
  EXPECT_TRUE(ana.CanProve(index < 2048));
  EXPECT_FALSE(ana.CanProve(index < 2047));
  EXPECT_TRUE(ana.CanProveGreaterEqual(index, 3));
  EXPECT_FALSE(ana.CanProveGreaterEqual(index, 4));
  EXPECT_TRUE(ana.CanProveLess(index, 2048));
  EXPECT_FALSE(ana.CanProveLess(index, 2047));
}

TEST(Analyzer, SimplifiesTheSplitOfAFusedLoop) {
  Analyzer ana;
  Var i("i"), j("j");
  ana.Bind(i, Range(0, 32));
  ana.Bind(j, Range(0, 16));
  PrimExpr fused = i * 16 + j;
  PrimExpr index = floordiv(fused, 16) * 64 + floormod(fused, 16) * 4 + 3;
  PrimExpr simple = ana.Simplify(index);
  EXPECT_EQ(ToScript(simple), "i * 64 + j * 4 + 3");
  EXPECT_EQ(ana.modular_set(simple), (ModularSet{4, 3}));
  EXPECT_TRUE(ana.CanProve(floormod(simple, 2) == 1));
}

TEST(Analyzer, ExpressionBindingSubstitutes) {
  Analyzer ana;
  Var x("x"), y("y");
  ana.Bind(y, x * 4 + 1);
  EXPECT_TRUE(ana.CanProve(floormod(y, 4) == 1));
  EXPECT_TRUE(StructuralEqual(ana.Simplify(y - x * 4), PrimExpr(1)));
}

TEST(Analyzer, ExtentOneRangeBindsTheMinimum) {
  Analyzer ana;
  Var x("x"), n("n");
  ana.Bind(x, Range(n, 1));
  EXPECT_TRUE(StructuralEqual(ana.Simplify(x - n), PrimExpr(0)));
}

TEST(Analyzer, ConstraintScopesNestAndEnd) {
  Analyzer ana;
  Var x("x");
  ana.Bind(x, Range(0, 100));
  EXPECT_FALSE(ana.CanProve(x < 10));
  {
    ConstraintContext outer(&ana, x < 50);
    EXPECT_TRUE(ana.CanProve(x < 50));
    EXPECT_FALSE(ana.CanProve(x < 10));
    {
      ConstraintContext inner(&ana, x < 10);
      EXPECT_TRUE(ana.CanProve(x < 10));
      EXPECT_TRUE(ana.CanProve(floordiv(x, 10) == 0));
    }
    EXPECT_FALSE(ana.CanProve(x < 10));
    EXPECT_TRUE(ana.CanProve(x <= 49));
  }
  EXPECT_FALSE(ana.CanProve(x < 50));
  EXPECT_EQ(ana.const_int_bound(x), (ConstIntBound{0, 99}));
}

TEST(Analyzer, ConstraintDecidesSelectInsideIf) {
  Analyzer ana;
  Var x("x"), y("y");
  ConstraintContext in_then(&ana, x < y);
  EXPECT_TRUE(StructuralEqual(ana.Simplify(select(x < y, x, y)), x));
}

TEST(Analyzer, ModularFactFromConstraint) {
  Analyzer ana;
  Var x("x");
  ConstraintContext ctx(&ana, floormod(x, 8) == 3);
  EXPECT_EQ(ana.modular_set(x * 2 + 1), (ModularSet{16, 7}));
}

TEST(Analyzer, NotProvenIsNotDisproven) {
  Analyzer ana;
  Var x("x");
  EXPECT_FALSE(ana.CanProve(x < 5));
  EXPECT_FALSE(ana.CanProve(x >= 5));
}

TEST(Analyzer, NegativeDivisionIsFloored) {
  Analyzer ana;
  Var x("x");
  ana.Bind(x, Range(-7, 14));  // [-7, 6]
  EXPECT_EQ(ana.const_int_bound(floordiv(x, 2)), (ConstIntBound{-4, 3}));
  EXPECT_EQ(ana.const_int_bound(truncdiv(x, 2)), (ConstIntBound{-3, 3}));
  EXPECT_EQ(ana.const_int_bound(floormod(x, 4)), (ConstIntBound{0, 3}));
  EXPECT_TRUE(ana.CanProve(floormod(x, -4) <= 0));
}

TEST(Analyzer, IntSetOverLoopRanges) {
  Analyzer ana;
  Var i("i"), j("j");
  VarIntSetMap dom{{i, IntSet::FromRange(Range(0, 8))}, {j, IntSet::FromRange(Range(0, 16))}};
  IntSet set = ana.int_set(i * 16 + j, dom);
  ASSERT_TRUE(set.has_lower_bound() && set.has_upper_bound());
  EXPECT_TRUE(StructuralEqual(set.min(), PrimExpr(0)));
  EXPECT_TRUE(StructuralEqual(set.max(), PrimExpr(127)));
}

TEST(Analyzer, RebindingARangeForgetsAnExtentOneBinding) {
  Analyzer ana;
  Var x("x");
  ana.Bind(x, Range(3, 1));  // x == 3
  EXPECT_TRUE(StructuralEqual(ana.Simplify(x + 1), PrimExpr(4)));
  ana.Bind(x, Range(0, 8), /*allow_override=*/true);
  EXPECT_TRUE(StructuralEqual(ana.Simplify(x + 1), x + 1));
  EXPECT_EQ(ana.const_int_bound(x), (ConstIntBound{0, 7}));
}

}  // namespace
}  // namespace loom::arith
