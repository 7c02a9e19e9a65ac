// The expression builders of expr_ops.h: operand type matching, exact constant folding
// (truncated and floored division with negative operands, no silent overflow), and the user
// errors of constant division by zero.
#include "loom/ir/expr_ops.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>

#include "ir_test_util.h"
#include "loom/ir/functor.h"
#include "loom/ir/int_eval.h"
#include "loom/ir/printer.h"
#include "random_expr.h"

namespace loom {
namespace {

const DataType kInt8 = DataType::Int(8);
const DataType kInt32 = DataType::Int(32);
const DataType kInt64 = DataType::Int(64);
const DataType kFloat32 = DataType::Float(32);
const DataType kBool = DataType::Bool();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();

// The folded value of `e`, or nullopt when it did not fold to an integer constant.
std::optional<int64_t> Folded(const PrimExpr& e) {
  if (const auto* imm = e.as<IntImmNode>()) return imm->value;
  return std::nullopt;
}

PrimExpr I64(int64_t value) { return IntImm(kInt64, value); }

// ---------------------------------------------------------------- type matching

TEST(ExprOps, LiteralsTakeTheOtherOperandsType) {
  Var x("x"), w("w", kInt64);
  EXPECT_EQ(ToScript(w + 1), "w + T.int64(1)");
  EXPECT_EQ((w + 1).dtype(), kInt64);
  EXPECT_EQ((1 - w).dtype(), kInt64);
  EXPECT_EQ(ToScript(x * 4 + 2), "x * 4 + 2");
  EXPECT_EQ(ToScript(w < PrimExpr(3)), "w < T.int64(3)");
  Var b("b", kInt8);
  EXPECT_EQ(ToScript(b + PrimExpr(100)), "b + T.int8(100)");
  EXPECT_USER_ERROR(b + 300, "integer constant 300 does not fit in int8");
}

// Floating-point literals keep their value: before they had overloads of their own, 1.5f
// went through the int overload and `f - 1.5f` became `f - 1`, `f * 0.5f` became 0.
TEST(ExprOps, FloatLiteralsKeepTheirValue) {
  Var f("f", kFloat32), h("h", DataType::Float(16)), x("x");
  EXPECT_EQ(ToScript(f - 1.5f), "f - T.float32(1.5)");
  EXPECT_EQ(ToScript(0.25 * f), "T.float32(0.25) * f");
  EXPECT_EQ((h * 0.5f).dtype(), DataType::Float(16));
  EXPECT_EQ(ToScript(h * 0.5f), "h * T.float16(0.5)");
  // An integer operand meets a float literal as float32, as with PrimExpr(0.5f).
  EXPECT_EQ((x * 0.5f).dtype(), kFloat32);
  EXPECT_EQ(ToScript(max(f, 0.0f)), "T.max(f, T.float32(0.0))");
  // Integer literals of other widths still take the int overload.
  EXPECT_EQ(ToScript(x + int64_t{2}), "x + 2");
}

TEST(ExprOps, LiteralsThatDoNotFitWidenTheOtherSide) {
  Var x("x"), b("b", kInt8), p("p", kBool);
  PrimExpr wide = x + I64(int64_t{1} << 40);
  EXPECT_EQ(wide.dtype(), kInt64);
  EXPECT_EQ(ToScript(wide), "T.Cast(\"int64\", x) + T.int64(1099511627776)");
  EXPECT_EQ(EvalInt(wide, {{x, 5}}), (int64_t{1} << 40) + 5);
  PrimExpr sum = b + PrimExpr(300);
  EXPECT_EQ(sum.dtype(), kInt32);
  EXPECT_EQ(EvalInt(sum, {{b, -100}}), 200);
  // 2 is no bool: the comparison must stay false for p = true, not become p == True.
  PrimExpr is_two = p == PrimExpr(2);
  EXPECT_EQ(EvalInt(is_two, {{p, 1}}), 0);
  EXPECT_EQ(ToScript(p == PrimExpr(1)), "p == T.bool(True)");
}

TEST(ExprOps, NarrowerIntegersWidenAndFloatsWin) {
  Var b("b", kInt8), x("x"), w("w", kInt64), u("u", DataType::UInt(32)), p("p", kBool);
  Var f("f", kFloat32), d("d", DataType::Float(64));
  EXPECT_EQ(ToScript(b + x), "T.Cast(\"int32\", b) + x");
  EXPECT_EQ((x * w).dtype(), kInt64);
  EXPECT_EQ((u + x).dtype(), kInt32) << "at equal width the signed type wins";
  EXPECT_EQ((x + u).dtype(), kInt32);
  EXPECT_EQ((p + x).dtype(), kInt32);
  EXPECT_EQ(ToScript(x + f), "T.Cast(\"float32\", x) + f");
  EXPECT_EQ((f * d).dtype(), DataType::Float(64));
  EXPECT_EQ((x + PrimExpr(1.5f)).dtype(), kFloat32) << "a float literal never becomes an int";
  EXPECT_EQ((f + 1).dtype(), kFloat32);
  EXPECT_EQ(ToScript(f + 1), "f + T.float32(1.0)");
}

TEST(ExprOps, ScalarsBroadcastToVectors) {
  Var x("x");
  PrimExpr v = Ramp(0, 1, 4) + x;
  EXPECT_EQ(v.dtype(), DataType::Int(32, 4));
  EXPECT_EQ(ToScript(v), "T.Ramp(0, 1, 4) + T.Broadcast(x, 4)");
  EXPECT_EQ((2 * Ramp(x, 1, 8)).dtype(), DataType::Int(32, 8));
  EXPECT_EQ((Ramp(x, 1, 4) < 3).dtype(), DataType::Bool(4));
  EXPECT_USER_ERROR(
      Ramp(0, 1, 4) + Ramp(0, 1, 8),
      "operator +: cannot combine int32x4 and int32x8 (vectors of different lengths)");
  Var h("h", DataType::Handle());
  EXPECT_USER_ERROR(h + x, "operator +: cannot combine handle and int32");
  EXPECT_USER_ERROR(PrimExpr() + x, "operator + on an undefined operand");
}

// ---------------------------------------------------------------- constant folding

TEST(ExprOps, FoldsArithmeticExactly) {
  EXPECT_EQ(Folded(PrimExpr(3) + -5), -2);
  EXPECT_EQ(Folded(PrimExpr(3) - 5), -2);
  EXPECT_EQ(Folded(PrimExpr(-3) * 5), -15);
  EXPECT_EQ(Folded(-PrimExpr(7)), -7);
  EXPECT_EQ(Folded(min(PrimExpr(3), -2)), -2);
  EXPECT_EQ(Folded(max(PrimExpr(3), -2)), 3);
  EXPECT_EQ((PrimExpr(3) + 4).dtype(), kInt32);
  EXPECT_EQ(Folded(I64(kInt64Max - 1) + 1), kInt64Max);
  PrimExpr f = PrimExpr(1.5f) * PrimExpr(2.0f);
  ASSERT_NE(f.as<FloatImmNode>(), nullptr);
  EXPECT_EQ(f.as<FloatImmNode>()->value, 3.0);
  EXPECT_EQ(ToScript(-PrimExpr(1.5f)), "T.float32(-1.5)");
  EXPECT_EQ(ToScript(min(PrimExpr(1.5f), PrimExpr(-2.0f))), "T.float32(-2.0)");
}

TEST(ExprOps, LeavesOverflowingResultsUnfolded) {
  PrimExpr int32_max = PrimExpr(static_cast<int>(kInt32Max));
  PrimExpr sum = int32_max + 1;
  EXPECT_EQ(ToScript(sum), "2147483647 + 1") << "INT32_MAX + 1 does not fit in int32";
  EXPECT_EQ(Folded(cast(kInt64, int32_max) + 1), kInt32Max + 1);
  EXPECT_FALSE(Folded(PrimExpr(static_cast<int>(kInt32Min)) - 1));
  EXPECT_FALSE(Folded(PrimExpr(65536) * 65536));
  EXPECT_FALSE(Folded(-PrimExpr(static_cast<int>(kInt32Min))));
  EXPECT_FALSE(Folded(I64(kInt64Max) + I64(1)));
  EXPECT_FALSE(Folded(I64(kInt64Min) - I64(1)));
  EXPECT_FALSE(Folded(I64(int64_t{1} << 32) * I64(int64_t{1} << 31)));
  EXPECT_FALSE(Folded(IntImm(kInt8, 100) + IntImm(kInt8, 100)));
  EXPECT_EQ(Folded(IntImm(kInt8, 100) + IntImm(kInt8, 27)), 127);
}

TEST(ExprOps, FoldsTruncatedAndFlooredDivisionWithEverySign) {
  struct Case {
    int a, b, truncdiv, truncmod, floordiv, floormod;
  };
  for (const Case& c :
       {Case{7, 2, 3, 1, 3, 1}, Case{-7, 2, -3, -1, -4, 1}, Case{7, -2, -3, 1, -4, -1},
        Case{-7, -2, 3, -1, 3, -1}, Case{6, -3, -2, 0, -2, 0}, Case{-6, 3, -2, 0, -2, 0},
        Case{0, -5, 0, 0, 0, 0}, Case{1, -5, 0, 1, -1, -4}}) {
    SCOPED_TRACE(std::to_string(c.a) + ", " + std::to_string(c.b));
    PrimExpr a = c.a, b = c.b;
    EXPECT_EQ(Folded(truncdiv(a, b)), c.truncdiv);
    EXPECT_EQ(Folded(a / b), c.truncdiv);
    EXPECT_EQ(Folded(truncmod(a, b)), c.truncmod);
    EXPECT_EQ(Folded(a % b), c.truncmod);
    EXPECT_EQ(Folded(floordiv(a, b)), c.floordiv);
    EXPECT_EQ(Folded(floormod(a, b)), c.floormod);
  }
}

TEST(ExprOps, DivisionFoldingAgreesWithTheDefinition) {
  for (int64_t a = -25; a <= 25; ++a) {
    for (int64_t b = -7; b <= 7; ++b) {
      if (b == 0) continue;
      SCOPED_TRACE(std::to_string(a) + ", " + std::to_string(b));
      int64_t tq = *Folded(truncdiv(I64(a), I64(b))), tr = *Folded(truncmod(I64(a), I64(b)));
      int64_t fq = *Folded(floordiv(I64(a), I64(b))), fr = *Folded(floormod(I64(a), I64(b)));
      EXPECT_EQ(tq * b + tr, a);
      EXPECT_EQ(fq * b + fr, a);
      EXPECT_LT(std::abs(tr), std::abs(b));
      EXPECT_LT(std::abs(fr), std::abs(b));
      EXPECT_TRUE(tr == 0 || (tr < 0) == (a < 0)) << "truncated remainder takes a's sign";
      EXPECT_TRUE(fr == 0 || (fr < 0) == (b < 0)) << "floored remainder takes b's sign";
    }
  }
}

TEST(ExprOps, DivisionExtremes) {
  EXPECT_FALSE(Folded(truncdiv(I64(kInt64Min), I64(-1)))) << "INT64_MIN / -1 overflows";
  EXPECT_FALSE(Folded(floordiv(I64(kInt64Min), I64(-1))));
  EXPECT_EQ(Folded(truncmod(I64(kInt64Min), I64(-1))), 0);
  EXPECT_EQ(Folded(floormod(I64(kInt64Min), I64(-1))), 0);
  EXPECT_EQ(Folded(truncdiv(I64(kInt64Min), I64(1))), kInt64Min);
  EXPECT_EQ(Folded(floordiv(I64(kInt64Min), I64(2))), kInt64Min / 2);
  EXPECT_EQ(Folded(floordiv(I64(kInt64Max), I64(-2))), -(kInt64Max / 2) - 1);
  EXPECT_EQ(Folded(floormod(I64(kInt64Min), I64(kInt64Max))), kInt64Max - 1);
  PrimExpr int32_min = static_cast<int>(kInt32Min);
  EXPECT_FALSE(Folded(truncdiv(int32_min, -1))) << "2^31 does not fit in int32";
  EXPECT_FALSE(Folded(floordiv(int32_min, -1)));
  EXPECT_EQ(Folded(truncmod(int32_min, -1)), 0);
}

TEST(ExprOps, ConstantDivisionByZeroIsAUserError) {
  Var x("x");
  EXPECT_EQ(UserErrorOf([&] { truncdiv(x, 0); }), "division by zero: truncdiv(x, 0)");
  EXPECT_EQ(UserErrorOf([&] { floordiv(7, PrimExpr(0)); }), "division by zero: floordiv(7, 0)");
  EXPECT_USER_ERROR(floormod(x + 1, 0), "division by zero: floormod(x + 1, 0)");
  EXPECT_USER_ERROR(truncmod(x, 0), "division by zero: truncmod(x, 0)");
  EXPECT_USER_ERROR(x / 0, "division by zero: truncdiv(x, 0)");
  EXPECT_USER_ERROR(x % 0, "division by zero: truncmod(x, 0)");
  EXPECT_USER_ERROR(floordiv(Var("w", kInt64), 0), "division by zero");
  // A divisor that is only possibly zero is left to run time.
  EXPECT_EQ(ToScript(floordiv(7, x)), "7 // x");
  // Float division by zero is IEEE arithmetic, not an error; it is left unfolded.
  EXPECT_EQ(ToScript(PrimExpr(1.0f) / PrimExpr(0.0f)), "T.float32(1.0) / T.float32(0.0)");
  EXPECT_EQ(ToScript(PrimExpr(1.0f) / PrimExpr(4.0f)), "T.float32(0.25)");
}

TEST(ExprOps, Identities) {
  Var x("x");
  EXPECT_TRUE((x + 0).same_as(x));
  EXPECT_TRUE((0 + x).same_as(x));
  EXPECT_TRUE((x - 0).same_as(x));
  EXPECT_TRUE((x * 1).same_as(x));
  EXPECT_TRUE((1 * x).same_as(x));
  EXPECT_EQ(Folded(x * 0), 0);
  EXPECT_EQ(Folded(0 * x), 0);
  EXPECT_TRUE(truncdiv(x, 1).same_as(x));
  EXPECT_TRUE(floordiv(x, 1).same_as(x));
  EXPECT_EQ(Folded(truncmod(x, 1)), 0);
  EXPECT_EQ(Folded(truncmod(x, -1)), 0);
  EXPECT_EQ(Folded(floormod(x, 1)), 0);
  EXPECT_EQ(Folded(floormod(x, -1)), 0);
  EXPECT_EQ(ToScript(0 - x), "0 - x") << "0 - x is no identity";
  EXPECT_EQ(ToScript(-x), "0 - x");
  EXPECT_EQ(ToScript(truncdiv(x, -1)), "T.truncdiv(x, -1)") << "x / -1 overflows at INT_MIN";
}

TEST(ExprOps, ComparisonsAndLogic) {
  Var x("x"), p("p", kBool), q("q", kBool);
  EXPECT_TRUE(is_const_true(PrimExpr(-3) < 2));
  EXPECT_TRUE(is_const_false(PrimExpr(-3) > 2));
  EXPECT_TRUE(is_const_true(PrimExpr(2) <= 2));
  EXPECT_TRUE(is_const_true(PrimExpr(2) >= 2));
  EXPECT_TRUE(is_const_true(PrimExpr(2) == 2));
  EXPECT_TRUE(is_const_false(PrimExpr(2) != 2));
  EXPECT_TRUE(is_const_true(I64(kInt64Min) < I64(kInt64Max)));
  EXPECT_TRUE(is_const_true(PrimExpr(1.5f) > PrimExpr(1.0f)));
  EXPECT_EQ((x < 3).dtype(), kBool);
  EXPECT_TRUE((p && const_true()).same_as(p));
  EXPECT_TRUE((const_true() && p).same_as(p));
  EXPECT_TRUE(is_const_false(p && const_false()));
  EXPECT_TRUE(is_const_false(const_false() && p));
  EXPECT_TRUE(is_const_true(p || const_true()));
  EXPECT_TRUE((const_false() || p).same_as(p));
  EXPECT_TRUE((p || const_false()).same_as(p));
  EXPECT_TRUE(is_const_false(!const_true()));
  EXPECT_EQ(ToScript(!(x < 3) && (p || q)), "not x < 3 and (p or q)");
}

TEST(ExprOps, SelectFoldsAConstantScalarCondition) {
  Var x("x"), y("y"), p("p", kBool);
  EXPECT_TRUE(select(const_true(), x, y).same_as(x));
  EXPECT_TRUE(select(const_false(), x, y).same_as(y));
  EXPECT_EQ(ToScript(select(p, x, 1)), "T.Select(p, x, 1)");
  EXPECT_EQ(select(p, Var("w", kInt64), 1).dtype(), kInt64);
  EXPECT_EQ(select(const_true(4), Ramp(0, 1, 4), Ramp(4, 1, 4)).kind(), NodeKind::Select)
      << "a vector condition is not folded";
}

TEST(ExprOps, Casts) {
  Var x("x");
  EXPECT_TRUE(cast(kInt32, x).same_as(x));
  EXPECT_EQ(Folded(cast(kInt8, 300)), 44) << "integer narrowing wraps (documented)";
  EXPECT_EQ(Folded(cast(DataType::UInt(8), -1)), 255);
  EXPECT_EQ(Folded(cast(kBool, 5)), 1);
  EXPECT_EQ(Folded(cast(kInt32, PrimExpr(2.7f))), 2);
  EXPECT_EQ(Folded(cast(kInt32, PrimExpr(-2.7f))), -2);
  EXPECT_EQ(cast(kInt32, FloatImm(DataType::Float(64), 1e20)).kind(), NodeKind::Cast)
      << "an out-of-range float is not folded";
  EXPECT_EQ(ToScript(cast(kFloat32, 3)), "T.float32(3.0)");
  EXPECT_EQ(ToScript(cast(kInt64, x)), "T.Cast(\"int64\", x)");
  EXPECT_EQ(ToScript(cast(DataType::Int(64, 4), x)), "T.Broadcast(T.Cast(\"int64\", x), 4)");
  EXPECT_EQ(ToScript(cast(DataType::Int(64, 4), Broadcast(x, 4))),
            "T.Broadcast(T.Cast(\"int64\", x), 4)");
  EXPECT_USER_ERROR(cast(DataType::Int(32, 8), Ramp(x, 1, 4)), "cannot cast");
}

TEST(ExprOps, ConstantsAndCalls) {
  EXPECT_EQ(ToScript(make_const(kInt64, int64_t{5})), "T.int64(5)");
  EXPECT_EQ(ToScript(make_const(kFloat32, int64_t{5})), "T.float32(5.0)");
  EXPECT_EQ(ToScript(make_const(DataType::Int(32, 4), int64_t{1})), "T.Broadcast(1, 4)");
  EXPECT_EQ(ToScript(make_zero(kInt8)), "T.int8(0)");
  EXPECT_TRUE(is_const_true(const_true(4)));
  EXPECT_TRUE(is_const_false(const_false()));
  EXPECT_FALSE(is_const_true(PrimExpr(1))) << "an int 1 is not the bool true";
  EXPECT_USER_ERROR(call_intrin(kFloat32, "no_such_op", {}), "unknown operator 'no_such_op'");
  EXPECT_EQ(ToScript(call_extern(kInt32, "f", {1})), "T.call_extern(\"int32\", \"f\", 1)");
}

TEST(ExprOps, ConstIntHelpers) {
  int64_t out = 0;
  EXPECT_FALSE(const_int::AddOverflows(kInt64Max - 1, 1, &out));
  EXPECT_EQ(out, kInt64Max);
  EXPECT_TRUE(const_int::AddOverflows(kInt64Max, 1, &out));
  EXPECT_TRUE(const_int::SubOverflows(kInt64Min, 1, &out));
  EXPECT_TRUE(const_int::MulOverflows(kInt64Min, -1, &out));
  EXPECT_FALSE(const_int::MulOverflows(-4, 5, &out));
  EXPECT_EQ(out, -20);
  EXPECT_EQ(const_int::FloorDiv(-1, 3), -1);
  EXPECT_EQ(const_int::FloorMod(-1, 3), 2);
  EXPECT_EQ(const_int::FloorMod(1, -3), -2);
  EXPECT_EQ(const_int::FloorDiv(kInt64Min, 1), kInt64Min);
  EXPECT_EQ(const_int::WrapToType(128, kInt8), -128);
  EXPECT_EQ(const_int::WrapToType(-129, kInt8), 127);
  EXPECT_EQ(const_int::WrapToType(256 + 7, DataType::UInt(8)), 7);
  EXPECT_EQ(const_int::WrapToType(kInt64Min, kInt64), kInt64Min);
  EXPECT_EQ(const_int::WrapToType(2, kBool), 1);
}

// Rebuilds an expression through the folding builders with every variable replaced by its
// value at a point: the result must be the constant EvalInt computes there.
class FoldAtPoint : public ExprMutator {
 public:
  explicit FoldAtPoint(const VarValueMap& point) : point_(point) {}
  using ExprMutator::VisitExpr_;
  PrimExpr VisitExpr_(const VarNode* op) override { return IntImm(op->dtype, point_.at(Var(op))); }
  PrimExpr VisitExpr_(const CastNode* op) override { return cast(op->dtype, VisitExpr(op->value)); }
  PrimExpr VisitExpr_(const AddNode* op) override { return Fold(op, operator+); }
  PrimExpr VisitExpr_(const SubNode* op) override { return Fold(op, operator-); }
  PrimExpr VisitExpr_(const MulNode* op) override { return Fold(op, operator*); }
  PrimExpr VisitExpr_(const DivNode* op) override { return Fold(op, truncdiv); }
  PrimExpr VisitExpr_(const ModNode* op) override { return Fold(op, truncmod); }
  PrimExpr VisitExpr_(const FloorDivNode* op) override { return Fold(op, floordiv); }
  PrimExpr VisitExpr_(const FloorModNode* op) override { return Fold(op, floormod); }
  PrimExpr VisitExpr_(const MinNode* op) override { return Fold(op, min); }
  PrimExpr VisitExpr_(const MaxNode* op) override { return Fold(op, max); }
  PrimExpr VisitExpr_(const EQNode* op) override { return Fold(op, operator==); }
  PrimExpr VisitExpr_(const NENode* op) override { return Fold(op, operator!=); }
  PrimExpr VisitExpr_(const LTNode* op) override { return Fold(op, operator<); }
  PrimExpr VisitExpr_(const LENode* op) override { return Fold(op, operator<=); }
  PrimExpr VisitExpr_(const GTNode* op) override { return Fold(op, operator>); }
  PrimExpr VisitExpr_(const GENode* op) override { return Fold(op, operator>=); }
  PrimExpr VisitExpr_(const AndNode* op) override { return Fold(op, operator&&); }
  PrimExpr VisitExpr_(const OrNode* op) override { return Fold(op, operator||); }
  PrimExpr VisitExpr_(const NotNode* op) override { return !VisitExpr(op->a); }
  PrimExpr VisitExpr_(const SelectNode* op) override {
    // Only the chosen branch, as EvalInt does (the other may divide by zero).
    PrimExpr condition = VisitExpr(op->condition);
    if (is_const_true(condition)) return VisitExpr(op->true_value);
    if (is_const_false(condition)) return VisitExpr(op->false_value);
    return select(condition, VisitExpr(op->true_value), VisitExpr(op->false_value));
  }

 private:
  template <typename NodeT>
  PrimExpr Fold(const NodeT* op, PrimExpr (*build)(PrimExpr, PrimExpr)) {
    return build(VisitExpr(op->a), VisitExpr(op->b));
  }
  const VarValueMap& point_;
};

TEST(ExprOps, FoldingAgreesWithEvalIntOnRandomExpressions) {
  std::mt19937_64 rng(20240611);
  int folded = 0, undefined = 0;
  for (int round = 0; round < 300; ++round) {
    std::vector<testing::RangedVar> vars = testing::RandomRangedVars(&rng, 3);
    testing::RandomExprGenerator generator(&rng, &vars);
    PrimExpr e = round % 4 == 0 ? generator.Condition(4) : generator.Integer(4);
    for (const VarValueMap& point : testing::SamplePoints(&rng, vars, 4)) {
      std::optional<int64_t> expected = EvalInt(e, point);
      std::string error;
      PrimExpr result;
      try {
        result = FoldAtPoint(point).VisitExpr(e);
      } catch (const Error& division_by_zero) {
        error = division_by_zero.what();
      }
      if (!expected) {
        ++undefined;
        // Undefined there: a constant division by zero (an error) or an overflow left
        // unfolded; never a constant.
        EXPECT_TRUE(!error.empty() || !Folded(result)) << ToScript(e) << " folded to " << result;
        continue;
      }
      ASSERT_TRUE(error.empty()) << ToScript(e) << ": " << error;
      ++folded;
      EXPECT_EQ(Folded(result), expected) << ToScript(e);
    }
  }
  EXPECT_GT(folded, 1000);
  EXPECT_GT(undefined, 0) << "the generator should reach some division by zero";
}


// A float constant holds what its type can hold, so folding computes what hardware does:
// float32 operations folded in double and rounded once equal the float32 operations.
TEST(ExprOps, FloatConstantsFoldInTheirOwnPrecision) {
  EXPECT_EQ(FloatImm(DataType::Float(32), 0.1)->value, static_cast<double>(0.1f));
  EXPECT_EQ(FloatImm(DataType::Float(64), 0.1)->value, 0.1);
  EXPECT_EQ(FloatImm(DataType::Float(16), 0.1)->value, 0.0999755859375);
  EXPECT_EQ(FloatImm(DataType::BFloat16(), 0.1)->value, 0.10009765625);
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<float> dist(-8.0f, 8.0f);
  const DataType f32 = DataType::Float(32);
  for (int i = 0; i < 2000; ++i) {
    float x = dist(rng), y = dist(rng);
    PrimExpr a = FloatImm(f32, x), b = FloatImm(f32, y);
    EXPECT_EQ(Downcast<FloatImm>(a + b)->value, static_cast<double>(x + y)) << x << " + " << y;
    EXPECT_EQ(Downcast<FloatImm>(a - b)->value, static_cast<double>(x - y)) << x << " - " << y;
    EXPECT_EQ(Downcast<FloatImm>(a * b)->value, static_cast<double>(x * y)) << x << " * " << y;
    EXPECT_EQ(Downcast<FloatImm>(a / b)->value, static_cast<double>(x / y)) << x << " / " << y;
  }
}

}  // namespace
}  // namespace loom
