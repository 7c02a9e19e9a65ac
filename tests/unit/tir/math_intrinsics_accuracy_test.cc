// LowerMathIntrinsics accuracy: the lowered float32 expressions run through the interpreter
// (float32 arithmetic rounded as generated code rounds it) over sweeps of float32 bit
// patterns, compared with double-precision references. Prints the measured max ulp error of
// each function (the table in docs/math.md) and asserts its documented bound.
//
// The sweeps (tests/common/float_sweep.h) step through the ordered bit patterns of each
// domain, so every binade is sampled evenly. LOOM_MATH_SWEEP_STRIDE_DIVISOR=k samples k
// times more densely (the `slow` ctest label runs it with 64).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "float_sweep.h"
#include "loom/ir/expr_ops.h"
#include "loom/tir/interpreter.h"
#include "loom/tir/transform.h"

namespace loom::tir::transform {
namespace {

using namespace loom::testing;

constexpr int kLanes = 4096;  // points per interpreter evaluation

int64_t StrideDivisor() {
  const char* text = std::getenv("LOOM_MATH_SWEEP_STRIDE_DIVISOR");
  return text == nullptr ? 1 : std::max<int64_t>(1, std::atoll(text));
}

// A FixedSweep made denser by LOOM_MATH_SWEEP_STRIDE_DIVISOR.
std::vector<float> Sweep(float lo, float hi, int64_t points) {
  return FixedSweep(lo, hi, points * StrideDivisor());
}

struct Worst {
  double ulp = 0;
  std::string where;
};

// Evaluates the lowered form of `op` on each input (one or two operands) batch by batch and
// returns the largest ulp error against `reference`.
Worst MeasureMaxUlp(const std::string& op, const std::vector<std::vector<float>>& inputs,
                    const std::function<double(const std::vector<double>&)>& reference) {
  const DataType vector_type = DataType::Float(32, kLanes);
  std::vector<Var> vars;
  Array<PrimExpr> args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    vars.emplace_back("x" + std::to_string(i), vector_type);
    args.push_back(vars.back());
  }
  PrimExpr lowered = LowerMathIntrinsicsInExpr(call_intrin(vector_type, op, args));
  Interpreter interpreter;
  Worst worst;
  size_t count = inputs[0].size();
  for (size_t start = 0; start < count; start += kLanes) {
    std::vector<std::pair<Var, Value>> bindings;
    for (size_t i = 0; i < inputs.size(); ++i) {
      Value v = Value::Float(vector_type, 0.0);
      for (int lane = 0; lane < kLanes && start + lane < count; ++lane) {
        v.floats[lane] = inputs[i][start + lane];
      }
      bindings.emplace_back(vars[i], v);
    }
    Value out = interpreter.Evaluate(lowered, bindings);
    for (int lane = 0; lane < kLanes && start + lane < count; ++lane) {
      std::vector<double> point;
      for (const auto& input : inputs) point.push_back(input[start + lane]);
      auto result = static_cast<float>(out.floats[lane]);
      double error = UlpError(result, reference(point));
      if (error > worst.ulp) {
        worst.ulp = error;
        worst.where = op + "(";
        for (size_t i = 0; i < point.size(); ++i) {
          worst.where += (i ? ", " : "") + FloatText(point[i]);
        }
        worst.where += ") = " + FloatText(result);
      }
    }
  }
  std::printf("[ math accuracy ] %-8s %zu points, max error %.3f ulp at %s\n", op.c_str(),
              count, worst.ulp, worst.where.c_str());
  return worst;
}

Worst MeasureUnary(const std::string& op, const std::vector<float>& inputs,
                   double (*reference)(double)) {
  return MeasureMaxUlp(op, {Concat({inputs, kSpecialValues})},
                       [reference](const std::vector<double>& p) { return reference(p[0]); });
}

TEST(MathIntrinsicsAccuracy, Exp) {
  std::vector<float> inputs = Concat({Sweep(-110.0f, 90.0f, 200000), Sweep(-1.0f, 1.0f, 20000)});
  Worst worst = MeasureUnary("exp", inputs, [](double x) { return std::exp(x); });
  EXPECT_LE(worst.ulp, 2.0) << worst.where;
}

TEST(MathIntrinsicsAccuracy, Exp2) {
  Worst worst = MeasureUnary("exp2", Sweep(-155.0f, 130.0f, 150000),
                             [](double x) { return std::exp2(x); });
  EXPECT_LE(worst.ulp, 2.0) << worst.where;
}

TEST(MathIntrinsicsAccuracy, Log) {
  std::vector<float> inputs = Concat({Sweep(0.0f, kMaxFloat, 200000), Sweep(0.5f, 2.0f, 20000),
                                      Sweep(-kMaxFloat, -0.0f, 1000)});
  Worst worst = MeasureUnary("log", inputs, [](double x) { return std::log(x); });
  EXPECT_LE(worst.ulp, 2.0) << worst.where;
}

TEST(MathIntrinsicsAccuracy, Log2) {
  std::vector<float> inputs = Concat({Sweep(0.0f, kMaxFloat, 150000), Sweep(0.5f, 2.0f, 20000),
                                      Sweep(-kMaxFloat, -0.0f, 1000)});
  Worst worst = MeasureUnary("log2", inputs, [](double x) { return std::log2(x); });
  EXPECT_LE(worst.ulp, 2.0) << worst.where;
}

TEST(MathIntrinsicsAccuracy, Tanh) {
  std::vector<float> inputs =
      Concat({Sweep(-kMaxFloat, kMaxFloat, 50000), Sweep(-10.0f, 10.0f, 150000)});
  Worst worst = MeasureUnary("tanh", inputs, [](double x) { return std::tanh(x); });
  EXPECT_LE(worst.ulp, 4.0) << worst.where;
}

TEST(MathIntrinsicsAccuracy, Sigmoid) {
  std::vector<float> inputs =
      Concat({Sweep(-kMaxFloat, kMaxFloat, 50000), Sweep(-110.0f, 30.0f, 150000)});
  Worst worst = MeasureUnary("sigmoid", inputs,
                             [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
  EXPECT_LE(worst.ulp, 4.0) << worst.where;
}

TEST(MathIntrinsicsAccuracy, Erf) {
  std::vector<float> inputs =
      Concat({Sweep(-kMaxFloat, kMaxFloat, 50000), Sweep(-5.0f, 5.0f, 150000)});
  Worst worst = MeasureUnary("erf", inputs, [](double x) { return std::erf(x); });
  EXPECT_LE(worst.ulp, 4.0) << worst.where;
}

// pow over MakePowGrid; only the bases densify, so the dense run grows linearly.
TEST(MathIntrinsicsAccuracy, Pow) {
  PowGrid grid = MakePowGrid(1000 * StrideDivisor(), 60);
  Worst worst = MeasureMaxUlp("pow", {grid.bases, grid.exponents},
                              [](const std::vector<double>& p) { return std::pow(p[0], p[1]); });
  EXPECT_LE(worst.ulp, 8.0) << worst.where;
}

}  // namespace
}  // namespace loom::tir::transform
