// ContractMultiplyAdd: each pattern, vectors, the types it leaves alone, the choice among
// nested products, idempotence, and what the interpreter computes on the contracted code
// (one rounding where the uncontracted code rounds twice). Also the fma builtin's checks.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/ir/math.h"
#include "loom/ir/printer.h"
#include "loom/support/error.h"
#include "loom/te/operation.h"
#include "loom/tir/interpreter.h"
#include "loom/tir/transform.h"

namespace loom::tir::transform {
namespace {

const DataType kF32 = DataType::Float(32);

PrimFunc Wrap(const PrimExpr& e) {
  return PrimFunc({}, {}, Evaluate(e), DataType::Void(), {});
}

// The expression after the pass.
PrimExpr Contract(const PrimExpr& e) {
  return ContractMultiplyAdd()(Wrap(e))->body.as<EvaluateNode>()->value;
}

std::string Contracted(const PrimExpr& e) { return ToScript(Contract(e)); }

TEST(ContractMultiplyAdd, EachPatternBecomesOneFma) {
  Var a("a", kF32), b("b", kF32), c("c", kF32);
  EXPECT_EQ(Contracted(a * b + c), "T.fma(a, b, c)");
  EXPECT_EQ(Contracted(c + a * b), "T.fma(a, b, c)");
  // Negation is an exact sign flip (a multiplication by -1, or a negated constant), never
  // 0 - x, which would lose the sign of -0.
  EXPECT_EQ(Contracted(a * b - c), "T.fma(a, b, c * T.float32(-1.0))");
  EXPECT_EQ(Contracted(a * b - FloatImm(kF32, 1.5)), "T.fma(a, b, T.float32(-1.5))");
  EXPECT_EQ(Contracted(c - a * b), "T.fma(a * T.float32(-1.0), b, c)");
  EXPECT_EQ(Contracted(c - 2.0f * b), "T.fma(T.float32(-2.0), b, c)");
  Var x("x", DataType::Float(64)), y("y", DataType::Float(64)), z("z", DataType::Float(64));
  PrimExpr wide = Contract(x * y + z);
  EXPECT_EQ(ToScript(wide), "T.fma(x, y, z)");
  EXPECT_EQ(wide.dtype(), DataType::Float(64));
}

TEST(ContractMultiplyAdd, VectorsContractLaneWise) {
  const DataType f32x8 = DataType::Float(32, 8);
  Var a("a", f32x8), b("b", f32x8);
  Var c("c", kF32);
  PrimExpr fused = Contract(a * b + Broadcast(c, 8));
  EXPECT_EQ(ToScript(fused), "T.fma(a, b, T.Broadcast(c, 8))");
  EXPECT_EQ(fused.dtype(), f32x8);
  EXPECT_EQ(Contracted(a - Broadcast(FloatImm(kF32, 2.0), 8) * b),
            "T.fma(T.Broadcast(T.float32(-2.0), 8), b, a)");
  EXPECT_EQ(Contracted(a * b - a), "T.fma(a, b, a * T.Broadcast(T.float32(-1.0), 8))");
}

TEST(ContractMultiplyAdd, HalfPrecisionAndIntegersAreLeftAlone) {
  for (DataType t : {DataType::Float(16), DataType::BFloat16(), DataType::Int(32),
                     DataType::UInt(8), DataType::Float(16, 8), DataType::Int(64, 4)}) {
    Var a("a", t), b("b", t), c("c", t);
    PrimFunc func = Wrap(Add(Mul(a, b), c) + Sub(c, Mul(a, b)));
    EXPECT_TRUE(ContractMultiplyAdd()(func).same_as(func)) << t;
  }
}

TEST(ContractMultiplyAdd, NestedProductsFuseTheLeftOne) {
  Var a("a", kF32), b("b", kF32), c("c", kF32), d("d", kF32), e("e", kF32);
  EXPECT_EQ(Contracted(a * b + c * d), "T.fma(a, b, c * d)");
  EXPECT_EQ(Contracted(a * b - c * d), "T.fma(a, b, c * d * T.float32(-1.0))");
  // Inside out: the inner sum is contracted first, and the outer one has no product left.
  EXPECT_EQ(Contracted(a * b + c * d + e), "T.fma(a, b, c * d) + e");
  EXPECT_EQ(Contracted(e + (a * b + c)), "e + T.fma(a, b, c)");
  EXPECT_EQ(Contracted(a * b * c + d), "T.fma(a * b, c, d)");
  EXPECT_EQ(Contracted((a * b + c) * d + e), "T.fma(T.fma(a, b, c), d, e)");
  // Products reached through a Let or a Cast are not operands of the sum.
  Var t("t", kF32);
  PrimFunc let = Wrap(Let(t, a * b, t + c));
  EXPECT_TRUE(ContractMultiplyAdd()(let).same_as(let));
  Var h("h", DataType::Float(16));
  PrimFunc cast_product = Wrap(cast(kF32, h * h) + c);
  EXPECT_TRUE(ContractMultiplyAdd()(cast_product).same_as(cast_product));
}

TEST(ContractMultiplyAdd, RunningTwiceChangesNothingMore) {
  Var a("a", kF32), b("b", kF32), c("c", kF32), d("d", kF32);
  PrimFunc once = ContractMultiplyAdd()(
      Wrap((a * b + c * d) - (c - a * b) * (a * b - d) + Select(a < b, a * c + d, d - b * c)));
  PrimFunc twice = ContractMultiplyAdd()(once);
  EXPECT_TRUE(twice.same_as(once)) << ToScript(once);
  // Because no sum or difference is left with a product operand.
  PostOrderVisit(once->body, [&](const ObjectRef& node) {
    const auto* add = node.as<AddNode>();
    const auto* sub = node.as<SubNode>();
    if (add != nullptr) {
      EXPECT_FALSE(add->a.as<MulNode>() || add->b.as<MulNode>()) << add->a << " + " << add->b;
    }
    if (sub != nullptr) {
      EXPECT_FALSE(sub->a.as<MulNode>() || sub->b.as<MulNode>()) << sub->a << " - " << sub->b;
    }
  });
}

TEST(ContractMultiplyAdd, ReduceNodesAreLeftAlone) {
  Var x("x", kF32), y("y", kF32), z("z", kF32);
  IterVar k = te::reduce_axis(Range(0, 8), "k");
  PrimFunc func = Wrap(te::sum(x * y + z, {k}));
  EXPECT_TRUE(ContractMultiplyAdd()(func).same_as(func));
}

std::string FmaError(const PrimExpr& a, const PrimExpr& b, const PrimExpr& c) {
  try {
    fma(a, b, c);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(FmaBuiltin, OperandsMustShareOneFloatType) {
  Var x("x", kF32), n("n", DataType::Int(32)), d("d", DataType::Float(64));
  Var v("v", DataType::Float(32, 4));
  PrimExpr call = fma(v, v, v);
  EXPECT_EQ(call.dtype(), DataType::Float(32, 4));
  EXPECT_EQ(ToScript(call), "T.fma(v, v, v)");
  std::string e = FmaError(x, n, x);
  EXPECT_NE(e.find("fma: expected a float second factor, got int32"), std::string::npos) << e;
  e = FmaError(x, x, d);
  EXPECT_NE(e.find("fma: the operands must have one type, got float32, float32 and float64"),
            std::string::npos) << e;
  EXPECT_NE(e.find("cast the operands to one float type"), std::string::npos) << e;
  e = FmaError(v, x, v);
  EXPECT_NE(e.find("broadcast the scalar operands to the vector's lanes"), std::string::npos)
      << e;
}

// a * b - a * b is 0 rounded twice, but fma(a, b, -(a * b)) is the rounding error of a * b:
// the one case where contracted and uncontracted code must differ.
TEST(ContractMultiplyAdd, InterpreterRoundsTheFmaOnce) {
  Var a("a", kF32), b("b", kF32);
  PrimExpr exact_error = a * b - a * b;
  std::vector<std::pair<Var, Value>> bindings = {{a, Value::Float(kF32, 0.1f)},
                                                 {b, Value::Float(kF32, 0.3f)}};
  EXPECT_EQ(Interpreter().Evaluate(exact_error, bindings).AsFloat(), 0.0);
  float product = 0.1f * 0.3f;
  double expected = std::fma(0.1f, 0.3f, -product);
  EXPECT_NE(expected, 0.0);
  EXPECT_EQ(Interpreter().Evaluate(Contract(exact_error), bindings).AsFloat(), expected);
}

// On random operands, the contracted a * b + c is fmaf(a, b, c) and the uncontracted one is
// a * b rounded, plus c: they differ exactly where those two roundings differ.
TEST(ContractMultiplyAdd, InterpreterDiffersOnlyWhereTheRoundingDoes) {
  constexpr int kLanes = 4096;
  const DataType vector_type = DataType::Float(32, kLanes);
  Var a("a", vector_type), b("b", vector_type), c("c", vector_type);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> value(-4.0f, 4.0f);
  std::vector<std::pair<Var, Value>> bindings;
  std::vector<std::vector<float>> operands(3);
  for (size_t i = 0; i < 3; ++i) {
    Value v = Value::Float(vector_type, 0.0);
    for (int lane = 0; lane < kLanes; ++lane) {
      operands[i].push_back(value(rng));
      v.floats[lane] = operands[i].back();
    }
    bindings.emplace_back(std::vector<Var>{a, b, c}[i], v);
  }
  PrimExpr plain = a * b + c;
  Value separate = Interpreter().Evaluate(plain, bindings);
  Value fused = Interpreter().Evaluate(Contract(plain), bindings);
  int differing = 0;
  for (int lane = 0; lane < kLanes; ++lane) {
    float x = operands[0][lane], y = operands[1][lane], z = operands[2][lane];
    float product = x * y;
    ASSERT_EQ(separate.floats[lane], product + z) << lane;
    ASSERT_EQ(fused.floats[lane], std::fma(x, y, z)) << lane;
    differing += separate.floats[lane] != fused.floats[lane];
  }
  EXPECT_GT(differing, kLanes / 100);
}

}  // namespace
}  // namespace loom::tir::transform
