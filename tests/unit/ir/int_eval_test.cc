// EvalInt, the oracle of the differential tests: exact integer semantics, and nullopt where
// the expression is undefined (division by zero, a value its type cannot hold, an unbound
// variable, a node it does not evaluate).
#include "loom/ir/int_eval.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "loom/ir/expr_ops.h"

namespace loom {
namespace {

const DataType kInt8 = DataType::Int(8);
const DataType kInt64 = DataType::Int(64);
const DataType kBool = DataType::Bool();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

class IntEvalTest : public ::testing::Test {
 protected:
  Var x{"x"}, y{"y"}, w{"w", kInt64}, v{"v", kInt64}, p{"p", kBool};
};

TEST_F(IntEvalTest, Arithmetic) {
  VarValueMap at{{x, 7}, {y, -3}};
  EXPECT_EQ(EvalInt(Add(x, y), at), 4);
  EXPECT_EQ(EvalInt(Sub(x, y), at), 10);
  EXPECT_EQ(EvalInt(Mul(x, y), at), -21);
  EXPECT_EQ(EvalInt(Min(x, y), at), -3);
  EXPECT_EQ(EvalInt(Max(x, y), at), 7);
  EXPECT_EQ(EvalInt(IntImm(DataType::UInt(8), 200), {}), 200);
  EXPECT_EQ(EvalInt(Add(Mul(x, 4), FloorMod(y, 5)), at), 30);
}

TEST_F(IntEvalTest, TruncatedAndFlooredDivision) {
  struct Case {
    int64_t a, b, div, mod, floordiv, floormod;
  };
  for (const Case& c :
       {Case{7, 2, 3, 1, 3, 1}, Case{-7, 2, -3, -1, -4, 1}, Case{7, -2, -3, 1, -4, -1},
        Case{-7, -2, 3, -1, 3, -1}, Case{-8, 4, -2, 0, -2, 0}, Case{3, -8, 0, 3, -1, -5}}) {
    SCOPED_TRACE(std::to_string(c.a) + ", " + std::to_string(c.b));
    VarValueMap at{{w, c.a}, {v, c.b}};
    EXPECT_EQ(EvalInt(Div(w, v), at), c.div);
    EXPECT_EQ(EvalInt(Mod(w, v), at), c.mod);
    EXPECT_EQ(EvalInt(FloorDiv(w, v), at), c.floordiv);
    EXPECT_EQ(EvalInt(FloorMod(w, v), at), c.floormod);
  }
}

TEST_F(IntEvalTest, UndefinedWhereDivisionIsUndefined) {
  for (PrimExpr e : {PrimExpr(Div(w, v)), PrimExpr(Mod(w, v)), PrimExpr(FloorDiv(w, v)),
                     PrimExpr(FloorMod(w, v))}) {
    EXPECT_EQ(EvalInt(e, {{w, 5}, {v, 0}}), std::nullopt) << NodeKindName(e.kind());
  }
  EXPECT_EQ(EvalInt(Div(w, v), {{w, kInt64Min}, {v, -1}}), std::nullopt);
  EXPECT_EQ(EvalInt(FloorDiv(w, v), {{w, kInt64Min}, {v, -1}}), std::nullopt);
  EXPECT_EQ(EvalInt(Mod(w, v), {{w, kInt64Min}, {v, -1}}), 0) << "as the folding builders say";
  EXPECT_EQ(EvalInt(FloorMod(w, v), {{w, kInt64Min}, {v, -1}}), 0);
  EXPECT_EQ(EvalInt(Div(w, v), {{w, kInt64Min}, {v, 1}}), kInt64Min);
  EXPECT_EQ(EvalInt(Div(x, y), {{x, static_cast<int64_t>(kInt32Min)}, {y, -1}}), std::nullopt)
      << "2^31 does not fit in int32";
  EXPECT_EQ(EvalInt(Add(x, Div(1, Sub(y, y))), {{x, 1}, {y, 4}}), std::nullopt)
      << "undefinedness propagates to the root";
}

TEST_F(IntEvalTest, UndefinedWhereTheTypeOverflows) {
  EXPECT_EQ(EvalInt(Add(x, 1), {{x, kInt32Max}}), std::nullopt);
  EXPECT_EQ(EvalInt(Sub(x, 1), {{x, kInt32Min}}), std::nullopt);
  EXPECT_EQ(EvalInt(Mul(x, x), {{x, 65536}}), std::nullopt);
  EXPECT_EQ(EvalInt(Add(w, IntImm(kInt64, 1)), {{w, kInt32Max}}), kInt32Max + 1);
  EXPECT_EQ(EvalInt(Add(w, IntImm(kInt64, 1)), {{w, kInt64Max}}), std::nullopt);
  EXPECT_EQ(EvalInt(Mul(w, v), {{w, int64_t{1} << 32}, {v, int64_t{1} << 31}}), std::nullopt);
  EXPECT_EQ(EvalInt(Sub(IntImm(kInt64, 0), w), {{w, kInt64Min}}), std::nullopt);
  Var b("b", kInt8);
  EXPECT_EQ(EvalInt(Add(b, IntImm(kInt8, 1)), {{b, 127}}), std::nullopt);
  EXPECT_EQ(EvalInt(b, {{b, 300}}), std::nullopt) << "a value outside the variable's type";
}

TEST_F(IntEvalTest, CastsWrap) {
  EXPECT_EQ(EvalInt(Cast(kInt8, x), {{x, 300}}), 44);
  EXPECT_EQ(EvalInt(Cast(kInt8, x), {{x, -129}}), 127);
  EXPECT_EQ(EvalInt(Cast(DataType::UInt(8), x), {{x, -1}}), 255);
  EXPECT_EQ(EvalInt(Cast(kInt64, x), {{x, kInt32Min}}), kInt32Min);
  EXPECT_EQ(EvalInt(Cast(kBool, x), {{x, 5}}), 1);
  EXPECT_EQ(EvalInt(Add(Cast(kInt64, x), IntImm(kInt64, 1)), {{x, kInt32Max}}), kInt32Max + 1);
}

TEST_F(IntEvalTest, ComparisonsAndLogic) {
  VarValueMap at{{x, 2}, {y, 3}, {p, 1}};
  EXPECT_EQ(EvalInt(LT(x, y), at), 1);
  EXPECT_EQ(EvalInt(LE(y, x), at), 0);
  EXPECT_EQ(EvalInt(GT(y, x), at), 1);
  EXPECT_EQ(EvalInt(GE(x, x), at), 1);
  EXPECT_EQ(EvalInt(EQ(x, y), at), 0);
  EXPECT_EQ(EvalInt(NE(x, y), at), 1);
  EXPECT_EQ(EvalInt(And(p, LT(y, x)), at), 0);
  EXPECT_EQ(EvalInt(Or(p, LT(y, x)), at), 1);
  EXPECT_EQ(EvalInt(Not(p), at), 0);
  // And/Or evaluate both operands (no short circuit): an undefined one makes them undefined.
  EXPECT_EQ(EvalInt(Or(p, EQ(Div(x, Sub(y, y)), 0)), at), std::nullopt);
}

TEST_F(IntEvalTest, SelectAndIfThenElseEvaluateOnlyTheChosenBranch) {
  PrimExpr safe = Select(NE(x, 0), Div(100, x), -1);
  EXPECT_EQ(EvalInt(safe, {{x, 0}}), -1);
  EXPECT_EQ(EvalInt(safe, {{x, -7}}), -14);
  PrimExpr guarded = call_intrin(DataType::Int(32), "if_then_else", {GT(x, 0), FloorDiv(10, x), 0});
  EXPECT_EQ(EvalInt(guarded, {{x, 0}}), 0);
  EXPECT_EQ(EvalInt(guarded, {{x, 3}}), 3);
  EXPECT_EQ(EvalInt(call_intrin(kBool, "likely", {LT(x, 4)}), {{x, 1}}), 1);
  EXPECT_EQ(EvalInt(Select(p, x, y), {{x, 1}, {y, 2}}), std::nullopt) << "p is unbound";
}

TEST_F(IntEvalTest, LetBindsAndShadows) {
  EXPECT_EQ(EvalInt(Let(x, 5, Mul(x, x)), {}), 25);
  EXPECT_EQ(EvalInt(Let(x, Add(y, 1), Mul(x, y)), {{x, 100}, {y, 3}}), 12)
      << "the Let's value shadows the outer binding of x";
  EXPECT_EQ(EvalInt(Add(Let(x, 5, x), x), {{x, 100}}), 105) << "and only inside its body";
  EXPECT_EQ(EvalInt(Let(x, Div(1, y), 0), {{y, 0}}), std::nullopt);
}

TEST_F(IntEvalTest, OutsideItsDomain) {
  EXPECT_EQ(EvalInt(x, {}), std::nullopt) << "unbound variable";
  EXPECT_EQ(EvalInt(PrimExpr(1.5f), {}), std::nullopt);
  EXPECT_EQ(EvalInt(Ramp(x, 1, 4), {{x, 0}}), std::nullopt);
  EXPECT_EQ(EvalInt(call_intrin(DataType::Int(32), "popcount", {x}), {{x, 3}}), std::nullopt);
  Buffer a = DeclBuffer({4}, DataType::Int(32), "A");
  EXPECT_EQ(EvalInt(BufferLoad(a, {x}), {{x, 0}}), std::nullopt);
}

// Every operator at the edges of int32 and int64, against 128-bit reference arithmetic.
TEST_F(IntEvalTest, MatchesWideArithmeticAtTheEdges) {
  using Wide = __int128;
  for (DataType t : {DataType::Int(32), kInt64}) {
    Var a("a", t), b("b", t);
    Wide lo = t.min_int_value(), hi = t.max_int_value();
    std::vector<int64_t> values = {
        t.min_int_value(),     t.min_int_value() + 1, -65537, -3, -2, -1, 0, 1, 2, 3, 65536,
        t.max_int_value() - 1, t.max_int_value()};
    auto fits = [&](Wide r) -> std::optional<int64_t> {
      if (r < lo || r > hi) return std::nullopt;
      return static_cast<int64_t>(r);
    };
    auto floordiv = [](Wide n, Wide d) {
      Wide q = n / d;
      return (n % d != 0 && ((n < 0) != (d < 0))) ? q - 1 : q;
    };
    for (int64_t va : values) {
      for (int64_t vb : values) {
        SCOPED_TRACE(t.str() + " " + std::to_string(va) + ", " + std::to_string(vb));
        VarValueMap at{{a, va}, {b, vb}};
        Wide wa = va, wb = vb;
        EXPECT_EQ(EvalInt(Add(a, b), at), fits(wa + wb));
        EXPECT_EQ(EvalInt(Sub(a, b), at), fits(wa - wb));
        EXPECT_EQ(EvalInt(Mul(a, b), at), fits(wa * wb));
        EXPECT_EQ(EvalInt(Min(a, b), at), std::min(va, vb));
        EXPECT_EQ(EvalInt(LT(a, b), at), va < vb);
        if (vb == 0) {
          EXPECT_EQ(EvalInt(FloorDiv(a, b), at), std::nullopt);
          continue;
        }
        // MIN / -1 overflows; its remainder, 0, does not.
        EXPECT_EQ(EvalInt(Div(a, b), at), fits(wa / wb));
        EXPECT_EQ(EvalInt(Mod(a, b), at), fits(wa % wb));
        EXPECT_EQ(EvalInt(FloorDiv(a, b), at), fits(floordiv(wa, wb)));
        EXPECT_EQ(EvalInt(FloorMod(a, b), at), fits(wa - floordiv(wa, wb) * wb));
      }
    }
  }
}

}  // namespace
}  // namespace loom
