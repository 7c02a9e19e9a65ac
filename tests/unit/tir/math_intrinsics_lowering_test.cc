// LowerMathIntrinsics: which calls it rewrites, the golden lowered form of exp2, special
// values, and float32x16 vector arguments (Ramp and Broadcast) lowered lane by lane.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/ir/math.h"
#include "loom/ir/printer.h"
#include "loom/tir/interpreter.h"
#include "loom/tir/transform.h"

namespace loom::tir::transform {
namespace {

const DataType kFloat32 = DataType::Float(32);
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The names of the intrinsics `expr` still calls, in visiting order.
std::string CalledOps(const ObjectRef& node) {
  std::string names;
  PostOrderVisit(node, [&](const ObjectRef& n) {
    if (const auto* call = n.as<CallNode>()) names += call->op->name + " ";
  });
  return names;
}

double EvalLowered(const PrimExpr& call, std::vector<std::pair<Var, Value>> bindings = {}) {
  return Interpreter().Evaluate(LowerMathIntrinsicsInExpr(call), bindings).AsFloat();
}

// Below -151 the result is 0, selected; those lanes compute at 0, not at the clamp's end,
// whose scaling would multiply subnormals (slow on Intel cores).
TEST(LowerMathIntrinsics, Exp2GoldenForm) {
  Var x("x", kFloat32);
  EXPECT_EQ(ToScript(LowerMathIntrinsicsInExpr(exp2(x))),
            "T.Let(T.Let(T.Let(T.Let(T.Let(T.Let(T.Select(T.isnan(x), x, T.Select(underflow, "
            "T.float32(0.0), T.Let((T.float32(1.0) + r * (((((T.float32(0.00015329309) * r + "
            "T.float32(0.001339097)) * r + T.float32(0.009618499)) * r + "
            "T.float32(0.055503596)) * r + T.float32(0.24022648)) * r + "
            "T.float32(0.6931472))) * T.reinterpret(T.shift_left(k_half + 127, 23)) * "
            "T.reinterpret(T.shift_left(k_int - k_half + 127, 23)), where={k_half: "
            "T.shift_right(k_int, 1)}))), where={r: x_clamped - k}), where={k_int: "
            "T.reinterpret(shifted) - 1262485504}), where={k: shifted - "
            "T.float32(12582912.0)}), where={shifted: x_clamped + T.float32(12582912.0)}), "
            "where={x_clamped: T.Select(underflow, T.float32(0.0), T.Select(x < "
            "T.float32(129.0), T.Select(x > T.float32(-151.0), x, T.float32(-151.0)), "
            "T.float32(129.0)))}), where={underflow: x < T.float32(-151.0)})");
}

TEST(LowerMathIntrinsics, RewritesOnlyFloat32TranscendentalCalls) {
  Var x("x", kFloat32), d("d", DataType::Float(64));
  EXPECT_EQ(CalledOps(LowerMathIntrinsicsInExpr(exp(x))), "reinterpret isnan shift_right "
            "shift_left reinterpret shift_left reinterpret ");
  // float64 goes to codegen (LLVM intrinsics / libm); sqrt and fabs are instructions.
  for (const PrimExpr& kept : {exp(d), pow(d, d), sqrt(x), fabs(x), floor(x), log10(x)}) {
    EXPECT_TRUE(LowerMathIntrinsicsInExpr(kept).same_as(kept)) << kept;
  }
  // Nested calls are lowered inside out; nothing transcendental remains.
  std::string ops = CalledOps(LowerMathIntrinsicsInExpr(tanh(log(x) + sigmoid(x))));
  for (const char* name : {"exp ", "log ", "tanh", "sigmoid"}) {
    EXPECT_EQ(ops.find(name), std::string::npos) << name << " in " << ops;
  }
}

TEST(LowerMathIntrinsics, SpecialValues) {
  Var x("x", kFloat32), y("y", kFloat32);
  auto at = [&](const PrimExpr& call, double xv, double yv = 0) {
    return EvalLowered(call, {{x, Value::Float(kFloat32, xv)}, {y, Value::Float(kFloat32, yv)}});
  };
  auto is_negative_zero = [](double v) { return v == 0 && std::signbit(v); };
  for (const PrimExpr& call : {exp(x), exp2(x), log(x), log2(x), tanh(x), sigmoid(x), erf(x)}) {
    EXPECT_TRUE(std::isnan(at(call, kNaN))) << call;
  }
  EXPECT_EQ(at(exp(x), kInf), kInf);
  EXPECT_EQ(at(exp(x), -kInf), 0.0);
  EXPECT_EQ(at(exp(x), 88.8), kInf);                          // overflow
  EXPECT_EQ(at(exp(x), -104.0), 0.0);                         // underflow
  EXPECT_EQ(at(exp(x), -100.0), static_cast<double>(std::exp(-100.0f)));  // subnormal
  EXPECT_EQ(at(exp2(x), -149.0), 0x1p-149);
  EXPECT_EQ(at(exp2(x), 128.0), kInf);
  EXPECT_EQ(at(log(x), 0.0), -kInf);
  EXPECT_EQ(at(log(x), -0.0), -kInf);
  EXPECT_EQ(at(log(x), kInf), kInf);
  EXPECT_TRUE(std::isnan(at(log(x), -1.0)));
  EXPECT_TRUE(std::isnan(at(log2(x), -kInf)));
  EXPECT_EQ(at(log2(x), 0x1p-149), -149.0);
  EXPECT_EQ(at(log2(x), 1.0), 0.0);
  EXPECT_EQ(at(tanh(x), kInf), 1.0);
  EXPECT_EQ(at(tanh(x), -30.0), -1.0);
  EXPECT_TRUE(is_negative_zero(at(tanh(x), -0.0)));
  EXPECT_EQ(at(sigmoid(x), kInf), 1.0);
  EXPECT_EQ(at(sigmoid(x), -kInf), 0.0);
  EXPECT_EQ(at(erf(x), -kInf), -1.0);
  EXPECT_EQ(at(erf(x), 1e30), 1.0);
  EXPECT_TRUE(is_negative_zero(at(erf(x), -0.0)));

  PrimExpr p = pow(x, y);
  EXPECT_EQ(at(p, kNaN, 0.0), 1.0);
  EXPECT_EQ(at(p, 1.0, kNaN), 1.0);
  EXPECT_TRUE(std::isnan(at(p, -1.0, kNaN)));
  EXPECT_TRUE(std::isnan(at(p, -8.0, 1.0 / 3)));
  EXPECT_EQ(at(p, -2.0, 3.0), -8.0);
  EXPECT_EQ(at(p, -2.0, 2.0), 4.0);
  EXPECT_EQ(at(p, -1.0, kInf), 1.0);
  EXPECT_EQ(at(p, 0.5, kInf), 0.0);
  EXPECT_EQ(at(p, 2.0, -kInf), 0.0);
  EXPECT_EQ(at(p, 0.0, -1.0), kInf);
  EXPECT_EQ(at(p, -0.0, -1.0), -kInf);
  EXPECT_TRUE(is_negative_zero(at(p, -0.0, 3.0)));
  EXPECT_EQ(at(p, -kInf, 3.0), -kInf);
  EXPECT_EQ(at(p, -kInf, 0.5), kInf);
  EXPECT_TRUE(is_negative_zero(at(p, -kInf, -3.0)));
  EXPECT_EQ(at(p, 10.0, 39.0), kInf);
  EXPECT_EQ(at(p, 2.0, -149.0), 0x1p-149);
}

// B[0:16] = f(A[0:16]) with Ramp indices and a Broadcast operand: the lowered (and then
// simplified) function computes every lane as the scalar lowering computes that lane alone,
// bit for bit.
TEST(LowerMathIntrinsics, Float32x16VectorsLowerLaneWise) {
  const int lanes = 16;
  const DataType vector_type = DataType::Float(32, lanes);
  Buffer a = DeclBuffer({lanes}, kFloat32, "A");
  Buffer b = DeclBuffer({lanes}, kFloat32, "B");
  PrimExpr index = Ramp(IntImm(DataType::Int(32), 0), IntImm(DataType::Int(32), 1), lanes);
  PrimExpr loaded = BufferLoad(a, {index});
  Var scalar("x", kFloat32), exponent("y", kFloat32);

  struct Case {
    PrimExpr vector_call;
    PrimExpr scalar_call;  // the same function of `scalar` (and the broadcast value)
  };
  const double broadcast_value = 2.5;
  const Case cases[] = {
      {exp(loaded), exp(scalar)},
      {log(loaded), log(scalar)},
      {tanh(loaded * make_const(vector_type, 0.25)), tanh(scalar * make_const(kFloat32, 0.25))},
      {sigmoid(loaded), sigmoid(scalar)},
      {erf(loaded), erf(scalar)},
      {pow(loaded, Broadcast(FloatImm(kFloat32, broadcast_value), lanes)),
       pow(scalar, exponent)},
  };
  HostArray input(kFloat32, {lanes});
  const double samples[lanes] = {-90, -3.5, -1, -0.3, -0.0, 0, 1e-40, 0.2,
                                 0.7, 1, 1.5, 2.75, 9, 40, 88, kInf};
  for (int i = 0; i < lanes; ++i) input.SetFloat(i, samples[i]);

  for (const Case& c : cases) {
    PrimFunc func({a->data, b->data}, {{a->data, a}, {b->data, b}},
                  BufferStore(b, c.vector_call, {index}), DataType::Void(), {});
    // Simplify afterwards must not fold (x + 1.5 * 2^23) - 1.5 * 2^23 or other float sums.
    PrimFunc lowered = Simplify()(LowerMathIntrinsics()(func));
    std::string ops = CalledOps(lowered->body);
    EXPECT_EQ(ops.find(c.vector_call.as<CallNode>()->op->name + " "), std::string::npos) << ops;

    HostArray output(kFloat32, {lanes});
    Interpreter().Run(lowered, {input, output});
    for (int i = 0; i < lanes; ++i) {
      double expected = EvalLowered(c.scalar_call, {{scalar, Value::Float(kFloat32, samples[i])},
                                                    {exponent, Value::Float(kFloat32,
                                                                            broadcast_value)}});
      double actual = output.GetFloat(i);
      EXPECT_TRUE(actual == expected || (std::isnan(actual) && std::isnan(expected)))
          << c.vector_call << " lane " << i << ": " << actual << " vs " << expected;
    }
  }
}

}  // namespace
}  // namespace loom::tir::transform
