// Modular sets (coeff * k + base): exact expectations per node kind, including negative
// divisors, truncated division that needs the sign of the dividend, overflow, and
// constraint scopes; then soundness against EvalInt on thousands of random expressions over
// variables with known residues.
#include "loom/arith/modular_set.h"

#include <gtest/gtest.h>

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

ModularSet M(int64_t coeff, int64_t base) { return {coeff, base}; }
PrimExpr I64(int64_t v) { return IntImm(DataType::Int(64), v); }

bool Contains(const ModularSet& s, int64_t v) {
  if (s.coeff == 0) return v == s.base;
  int64_t r = (v - s.base) % s.coeff;  // values in tests are far from int64's ends
  return r == 0;
}

class ModularSetTest : public ::testing::Test {
 protected:
  ModularSet Set(const PrimExpr& e) { return ana.modular_set(e); }
  Analyzer ana;
  Var x{"x"}, y{"y"}, c{"c", DataType::Bool()};
};

TEST_F(ModularSetTest, ConstantsAndUnknownVariables) {
  EXPECT_EQ(Set(PrimExpr(7)), M(0, 7));
  EXPECT_EQ(Set(PrimExpr(-7)), M(0, -7));
  EXPECT_EQ(Set(x), ModularSet::Everything());
  EXPECT_EQ(Set(FloatImm(DataType::Float(32), 2.0)), ModularSet::Everything());
}

TEST_F(ModularSetTest, UpdateRecordsAFactAndGuardsRebinding) {
  ana.modular_set.Update(x, M(4, 1));
  EXPECT_EQ(Set(x), M(4, 1));
  EXPECT_NO_THROW(ana.modular_set.Update(x, M(4, 1)));
  EXPECT_THROW(ana.modular_set.Update(x, M(2, 1)), InternalError);
  ana.modular_set.Update(x, M(2, 1), /*allow_override=*/true);
  EXPECT_EQ(Set(x), M(2, 1));
}

TEST_F(ModularSetTest, AffineIndexExpressions) {
  EXPECT_EQ(Set(x * 4 + 3), M(4, 3));
  EXPECT_EQ(Set(x * 4 - 5), M(4, 3));
  EXPECT_EQ(Set(x * -6 + 2), M(6, 2));
  EXPECT_EQ(Set(x * 8 + y * 12 + 2), M(4, 2));
  EXPECT_EQ(Set(Sub(x * 8, y * 8)), M(8, 0));
  EXPECT_EQ(Set(Mul(PrimExpr(3), PrimExpr(5))), M(0, 15));
}

TEST_F(ModularSetTest, ProductOfTwoSets) {
  // (4k + 1)(6j + 2) = 24kj + 8k + 6j + 2: always even.
  EXPECT_EQ(Set((x * 4 + 1) * (y * 6 + 2)), M(2, 0));
  EXPECT_EQ(Set((x * 4 + 2) * (y * 6 + 3)), M(12, 6));  // 6 * odd * odd
  EXPECT_EQ(Set(x * y), ModularSet::Everything());
}

TEST_F(ModularSetTest, FloorDivisionAndRemainderByConstants) {
  EXPECT_EQ(Set(floordiv(x * 8 + 5, 4)), M(2, 1));
  EXPECT_EQ(Set(floordiv(x * 8 + 5, -4)), M(2, 0));  // -2, -4, ...
  EXPECT_EQ(Set(floordiv(x * 6 + 1, 4)), ModularSet::Everything());
  EXPECT_EQ(Set(floormod(x * 8 + 5, 4)), M(0, 1));
  EXPECT_EQ(Set(floormod(x * 8 + 5, -4)), M(0, -3));
  EXPECT_EQ(Set(floormod(x * 6 + 1, 4)), M(2, 1));
  EXPECT_EQ(Set(FloorDiv(PrimExpr(-7), PrimExpr(2))), M(0, -4));
  EXPECT_EQ(Set(FloorMod(PrimExpr(-7), PrimExpr(2))), M(0, 1));
  EXPECT_EQ(Set(FloorDiv(x, PrimExpr(0))), ModularSet::Everything());
}

TEST_F(ModularSetTest, RemainderBySymbolicDivisorKeepsTheCommonResidue) {
  // x*8+5 - (y*4)*q: still 1 modulo 4.
  EXPECT_EQ(Set(floormod(x * 8 + 5, y * 4)), M(4, 1));
  EXPECT_EQ(Set(truncmod(x * 8 + 5, y * 4 + 2)), M(2, 1));
  EXPECT_EQ(Set(floormod(x, y)), ModularSet::Everything());
}

TEST_F(ModularSetTest, TruncatedDivisionUsesTheDividendsSign) {
  ana.const_int_bound.Update(x, {0, 10});
  ana.const_int_bound.Update(y, {-10, -1});
  EXPECT_EQ(Set(truncmod(x * 8 + 5, 4)), M(0, 1));
  EXPECT_EQ(Set(truncmod(y * 8 + 5, 4)), M(0, -3));  // y*8+5 <= -3
  EXPECT_EQ(Set(truncdiv(x * 8 + 4, 4)), M(2, 1));
  EXPECT_EQ(Set(truncdiv(x * 8 + 4, -4)), M(2, 1));
  EXPECT_EQ(Set(truncdiv(y * 8 + 4, 4)), M(2, 1));
  EXPECT_EQ(Set(truncdiv(y * 8 + 4, -4)), M(2, 1));
  Var z("z");  // sign unknown
  EXPECT_EQ(Set(truncmod(z * 8 + 5, 4)), M(4, 1));
  EXPECT_EQ(Set(truncdiv(z * 8 + 4, 4)), ModularSet::Everything());
  EXPECT_EQ(Set(Div(PrimExpr(-7), PrimExpr(2))), M(0, -3));
  EXPECT_EQ(Set(Mod(PrimExpr(-7), PrimExpr(2))), M(0, -1));
}

TEST_F(ModularSetTest, ChoicesGiveTheUnion) {
  EXPECT_EQ(Set(Select(c, x * 4 + 1, x * 8 + 5)), M(4, 1));
  EXPECT_EQ(Set(min(x * 4 + 1, x * 4 + 3)), M(2, 1));
  EXPECT_EQ(Set(max(x * 6, y * 9)), M(3, 0));
  EXPECT_EQ(Set(Select(c, PrimExpr(3), PrimExpr(7))), M(4, 3));
  EXPECT_EQ(Set(Select(c, PrimExpr(3), PrimExpr(3))), M(0, 3));
  EXPECT_EQ(Set(call_intrin(DataType::Int(32), "if_then_else", {c, x * 2, PrimExpr(4)})),
            M(2, 0));
  EXPECT_EQ(Set(call_intrin(DataType::Int(32), "likely", {x * 2})), M(2, 0));
}

TEST_F(ModularSetTest, LetBindsForTheBodyOnly) {
  Var t("t");
  EXPECT_EQ(Set(Let(t, x * 4 + 2, t * 3)), M(12, 6));
  EXPECT_EQ(Set(t), ModularSet::Everything());
}

TEST_F(ModularSetTest, Casts) {
  EXPECT_EQ(Set(Cast(DataType::Int(64), x * 4 + 1)), M(4, 1));
  // Narrowing wraps by multiples of 256.
  EXPECT_EQ(Set(Cast(DataType::Int(8), x * 512 + 3)), M(256, 3));
  EXPECT_EQ(Set(Cast(DataType::Int(8), x * 4 + 1)), M(4, 1));
  EXPECT_EQ(Set(Cast(DataType::Int(8), x * 3 + 1)), ModularSet::Everything());
  EXPECT_EQ(Set(Cast(DataType::Int(8), PrimExpr(300))), M(0, 44));
  EXPECT_EQ(Set(Cast(DataType::Bool(), x * 4 + 1)), M(0, 1));
  EXPECT_EQ(Set(Cast(DataType::Bool(), x * 4)), ModularSet::Everything());
  EXPECT_EQ(Set(Cast(DataType::Int(32), Var("f", DataType::Float(32)))),
            ModularSet::Everything());
}

TEST_F(ModularSetTest, Vectors) {
  EXPECT_EQ(Set(Ramp(x * 8, 4, 4)), M(4, 0));
  EXPECT_EQ(Set(Ramp(x * 8 + 2, 6, 4)), M(2, 0));
  EXPECT_EQ(Set(Broadcast(x * 8 + 3, 4)), M(8, 3));
}

TEST_F(ModularSetTest, OverflowFallsBackToEverything) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(Set(Add(I64(max), I64(max))), ModularSet::Everything());
  Var w("w", DataType::Int(64));
  PrimExpr big = Mul(w, I64(int64_t{1} << 40));
  EXPECT_EQ(Set(big), M(int64_t{1} << 40, 0));
  EXPECT_EQ(Set(Mul(big, big)), ModularSet::Everything());
  EXPECT_EQ(Set(FloorDiv(I64(std::numeric_limits<int64_t>::min()), I64(-1))),
            ModularSet::Everything());
}

TEST_F(ModularSetTest, ConstraintScopesNestAndRestore) {
  std::function<void()> exit_outer = ana.modular_set.EnterConstraint(floormod(x, 4) == 1);
  EXPECT_EQ(Set(x), M(4, 1));
  std::function<void()> exit_inner =
      ana.modular_set.EnterConstraint(floormod(x, 3) == 2);  // combined: x = 5 (mod 12)
  EXPECT_EQ(Set(x), M(12, 5));
  exit_inner();
  EXPECT_EQ(Set(x), M(4, 1));
  exit_outer();
  EXPECT_EQ(Set(x), ModularSet::Everything());
}

TEST_F(ModularSetTest, ConstraintForms) {
  auto set_under = [&](const PrimExpr& constraint, const PrimExpr& e) {
    std::function<void()> exit = ana.modular_set.EnterConstraint(constraint);
    ModularSet s = Set(e);
    exit();
    EXPECT_EQ(Set(x), ModularSet::Everything()) << "not restored after " << constraint;
    return s;
  };
  EXPECT_EQ(set_under(truncmod(x, 8) == 3, x), M(8, 3));
  EXPECT_EQ(set_under(floormod(x, -8) == -3, x), M(8, 5));
  EXPECT_EQ(set_under(EQ(PrimExpr(2), floormod(x, 4)), x * 2 + 1), M(8, 5));
  EXPECT_EQ(set_under(EQ(x, y * 4 + 2), x), M(4, 2));
  EXPECT_EQ(set_under(floormod(x + 1, 4) == 0, x), M(4, 3));
  EXPECT_EQ(set_under(floormod(11 - x, 4) == 0, x), M(4, 3));
  EXPECT_EQ(set_under(And(floormod(x, 2) == 1, floormod(x, 5) == 0), x), M(10, 5));
  EXPECT_EQ(set_under(EQ(x, 7), x), M(0, 7));
  EXPECT_EQ(set_under(EQ(Cast(DataType::Int(64), x), I64(8)), x), M(0, 8));
  EXPECT_EQ(set_under(x < 4, x), ModularSet::Everything());
  EXPECT_EQ(set_under(NE(floormod(x, 4), 1), x), ModularSet::Everything());
}

TEST_F(ModularSetTest, ContradictoryFactKeepsTheOldOne) {
  std::function<void()> exit_outer = ana.modular_set.EnterConstraint(floormod(x, 4) == 1);
  std::function<void()> exit_inner = ana.modular_set.EnterConstraint(floormod(x, 2) == 0);
  EXPECT_EQ(Set(x), M(4, 1));
  exit_inner();
  exit_outer();
  EXPECT_EQ(Set(x), ModularSet::Everything());
}

// ------------------------------------------------------------------ properties

using testing::RandomExprGenerator;
using testing::RangedVar;

// Variables with a random known residue (or none) and points that respect it.
struct ResidueVar {
  Var var;
  ModularSet fact;
};

std::vector<ResidueVar> RandomResidueVars(std::mt19937_64* rng,
                                          const std::vector<RangedVar>& vars) {
  std::vector<ResidueVar> out;
  for (const RangedVar& v : vars) {
    int64_t coeff = std::uniform_int_distribution<int64_t>(0, 8)(*rng);
    int64_t base = coeff == 0 ? std::uniform_int_distribution<int64_t>(-20, 20)(*rng)
                              : std::uniform_int_distribution<int64_t>(0, coeff - 1)(*rng);
    out.push_back({v.var, coeff == 1 ? ModularSet::Everything() : M(coeff, base)});
  }
  return out;
}

VarValueMap RandomPoint(std::mt19937_64* rng, const std::vector<ResidueVar>& vars) {
  VarValueMap point;
  for (const ResidueVar& v : vars) {
    int64_t k = std::uniform_int_distribution<int64_t>(-6, 6)(*rng);
    point[v.var] = v.fact.base + v.fact.coeff * k;
  }
  return point;
}

TEST(ModularSetProperty, RandomExpressionsStayInTheirSets) {
  std::mt19937_64 rng(31337);
  int64_t checked = 0;
  for (int i = 0; i < 4000; ++i) {
    std::vector<RangedVar> vars = testing::RandomRangedVars(&rng, 3);
    std::vector<ResidueVar> residues = RandomResidueVars(&rng, vars);
    RandomExprGenerator gen(&rng, &vars);
    PrimExpr e = gen.Integer(std::uniform_int_distribution<int>(1, 6)(rng));
    if (i % 3 == 0) {  // a Let whose variable carries the value's residue into the body
      Var t("t");
      std::vector<RangedVar> body_vars = vars;
      body_vars.push_back({t, 0, 1});
      RandomExprGenerator body_gen(&rng, &body_vars);
      e = Let(t, e, body_gen.Integer(3));
    }
    Analyzer ana;
    for (const ResidueVar& v : residues) ana.modular_set.Update(v.var, v.fact);
    ModularSet s = ana.modular_set(e);
    for (int p = 0; p < 10; ++p) {
      VarValueMap point = RandomPoint(&rng, residues);
      std::optional<int64_t> value = EvalInt(e, point);
      if (!value) continue;
      ++checked;
      ASSERT_TRUE(Contains(s, *value)) << "value " << *value << " not in " << s << " for "
                                       << e << " at x=" << point[vars[0].var]
                                       << " y=" << point[vars[1].var]
                                       << " z=" << point[vars[2].var];
    }
  }
  EXPECT_GT(checked, 20000);
}

// Truncated division and remainder depend on the dividend's sign, which the analysis takes
// from the bounds: bind ranges too and sample inside them.
TEST(ModularSetProperty, TruncatedDivisionWithBoundsStaysInItsSet) {
  std::mt19937_64 rng(2718);
  int64_t checked = 0;
  for (int i = 0; i < 3000; ++i) {
    std::vector<RangedVar> vars = testing::RandomRangedVars(&rng, 2);
    RandomExprGenerator gen(&rng, &vars);
    int64_t coeff = std::uniform_int_distribution<int64_t>(1, 12)(rng);
    int64_t base = std::uniform_int_distribution<int64_t>(-12, 12)(rng);
    int64_t divisor = std::uniform_int_distribution<int64_t>(1, 6)(rng) * (i % 2 ? -1 : 1);
    PrimExpr dividend = vars[0].var * static_cast<int>(coeff) + static_cast<int>(base) +
                        (i % 4 == 0 ? gen.Integer(2) : PrimExpr(0));
    PrimExpr e = i % 3 == 0 ? truncdiv(dividend, static_cast<int>(divisor))
                            : truncmod(dividend, static_cast<int>(divisor));
    Analyzer ana;
    for (const RangedVar& v : vars) {
      ana.const_int_bound.Bind(v.var, Range(IntImm(DataType::Int(32), v.lo),
                                            IntImm(DataType::Int(32), v.extent)));
    }
    ModularSet s = ana.modular_set(e);
    for (const VarValueMap& point : testing::SamplePoints(&rng, vars, 10)) {
      std::optional<int64_t> value = EvalInt(e, point);
      if (!value) continue;
      ++checked;
      ASSERT_TRUE(Contains(s, *value)) << "value " << *value << " not in " << s << " for "
                                       << e << " at x=" << point.at(vars[0].var);
    }
  }
  EXPECT_GT(checked, 20000);
}

// Facts learned from `floormod(lhs, c) == b` hold at every point satisfying it.
TEST(ModularSetProperty, LearnedFactsHoldWhereTheConstraintHolds) {
  std::mt19937_64 rng(1618);
  int64_t checked = 0;
  for (int i = 0; i < 2000; ++i) {
    std::vector<RangedVar> vars = testing::RandomRangedVars(&rng, 2);
    RandomExprGenerator gen(&rng, &vars);
    int c = std::uniform_int_distribution<int>(2, 6)(rng) * (i % 2 ? -1 : 1);
    int b = std::uniform_int_distribution<int>(-5, 5)(rng);
    PrimExpr lhs = gen.Integer(2);
    PrimExpr constraint = i % 3 == 0   ? truncmod(lhs, c) == b
                          : i % 3 == 1 ? floormod(lhs, c) == b
                                       : EQ(lhs, gen.Integer(2));
    PrimExpr e = gen.Integer(3);
    Analyzer ana;
    std::function<void()> exit = ana.modular_set.EnterConstraint(constraint);
    ModularSet s = ana.modular_set(e);
    std::vector<ModularSet> var_sets;
    for (const RangedVar& v : vars) var_sets.push_back(ana.modular_set(v.var));
    for (const VarValueMap& point : testing::SamplePoints(&rng, vars, 60)) {
      if (EvalInt(constraint, point) != 1) continue;
      for (size_t k = 0; k < vars.size(); ++k) {
        ASSERT_TRUE(Contains(var_sets[k], point.at(vars[k].var)))
            << vars[k].var << "=" << point.at(vars[k].var) << " not in " << var_sets[k]
            << " under " << constraint;
      }
      std::optional<int64_t> value = EvalInt(e, point);
      if (!value) continue;
      ++checked;
      ASSERT_TRUE(Contains(s, *value))
          << "value " << *value << " not in " << s << " for " << e << " under " << constraint;
    }
    exit();
    for (const RangedVar& v : vars) {
      ASSERT_EQ(ana.modular_set(v.var), ModularSet::Everything()) << constraint;
    }
  }
  EXPECT_GT(checked, 2000);
}

}  // namespace
}  // namespace loom::arith
