// The float32 math functions as loom::build compiles them (LowerMathIntrinsics' polynomials,
// JIT-compiled as scalar and as 16-lane vector loops) over sweeps of inputs: each result is
// bit for bit the interpreter's on the lowered expression, and within the bound docs/math.md
// documents of the double-precision reference. A sparse sweep (about 25,000 points per
// function); the dense one runs on the interpreter under ctest label `slow`
// (tests/unit/tir/math_intrinsics_accuracy_test.cc).
#include <cmath>
#include <cstdio>
#include <functional>

#include "float_sweep.h"
#include "loom/ir/expr_ops.h"
#include "loom/te/lower.h"
#include "loom/te/operation.h"
#include "loom/te/schedule.h"
#include "loom/tir/transform.h"
#include "target_test_util.h"

namespace loom::target_test {
namespace {

using namespace loom::testing;

const DataType kF32 = DataType::Float(32);
constexpr int kLanes = 4096;  // points per interpreter evaluation

struct MathCase {
  std::string name;
  std::vector<std::vector<float>> inputs;  // one or two operands, point by point
  std::function<double(const std::vector<double>&)> reference;
  double bound;  // ulps, as in docs/math.md
};

std::vector<MathCase> Cases() {
  auto unary = [](std::string name, std::vector<float> inputs, double (*f)(double),
                  double bound) {
    return MathCase{std::move(name), {Concat({std::move(inputs), kSpecialValues})},
                    [f](const std::vector<double>& p) { return f(p[0]); }, bound};
  };
  std::vector<MathCase> cases = {
      unary("exp", Concat({FixedSweep(-110, 90, 20000), FixedSweep(-1, 1, 2000)}),
            [](double x) { return std::exp(x); }, 2),
      unary("exp2", FixedSweep(-155, 130, 20000), [](double x) { return std::exp2(x); }, 2),
      unary("log",
            Concat({FixedSweep(0, kMaxFloat, 20000), FixedSweep(0.5f, 2, 2000),
                    FixedSweep(-kMaxFloat, -0.0f, 200)}),
            [](double x) { return std::log(x); }, 2),
      unary("log2",
            Concat({FixedSweep(0, kMaxFloat, 20000), FixedSweep(0.5f, 2, 2000),
                    FixedSweep(-kMaxFloat, -0.0f, 200)}),
            [](double x) { return std::log2(x); }, 2),
      unary("tanh", Concat({FixedSweep(-kMaxFloat, kMaxFloat, 5000), FixedSweep(-10, 10, 20000)}),
            [](double x) { return std::tanh(x); }, 4),
      unary("sigmoid",
            Concat({FixedSweep(-kMaxFloat, kMaxFloat, 5000), FixedSweep(-110, 30, 20000)}),
            [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, 4),
      unary("erf", Concat({FixedSweep(-kMaxFloat, kMaxFloat, 5000), FixedSweep(-5, 5, 20000)}),
            [](double x) { return std::erf(x); }, 4),
  };
  PowGrid grid = MakePowGrid(100, 40);
  cases.push_back({"pow", {grid.bases, grid.exponents},
                   [](const std::vector<double>& p) { return std::pow(p[0], p[1]); }, 8});
  return cases;
}

// out[i] = name(in0[i], ...), as a scalar loop (lanes 1) or vectorized by `lanes`.
PrimFunc MathKernel(const MathCase& c, int lanes) {
  int n = static_cast<int>(c.inputs[0].size());
  Array<te::Tensor> params;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    params.push_back(te::placeholder({n}, kF32, "in" + std::to_string(k)));
  }
  te::Tensor out = te::compute({n}, [&](Var i) {
    Array<PrimExpr> args;
    for (const te::Tensor& param : params) args.push_back(param(i));
    return call_intrin(kF32, c.name, args);
  }, "out");
  te::Schedule s = te::create_schedule({out.op()});
  if (lanes > 1) s[out].vectorize(s[out].split(s[out]->leaf_iter_vars[0], lanes).second);
  params.push_back(out);
  return te::lower(s, params, c.name + "_x" + std::to_string(lanes));
}

// The interpreter on the lowered expression, kLanes points at a time.
std::vector<float> Interpret(const MathCase& c) {
  const DataType vector_type = DataType::Float(32, kLanes);
  std::vector<Var> vars;
  Array<PrimExpr> args;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    vars.emplace_back("x" + std::to_string(k), vector_type);
    args.push_back(vars.back());
  }
  PrimExpr lowered =
      tir::transform::LowerMathIntrinsicsInExpr(call_intrin(vector_type, c.name, args));
  std::vector<float> results;
  size_t count = c.inputs[0].size();
  for (size_t start = 0; start < count; start += kLanes) {
    std::vector<std::pair<Var, tir::Value>> bindings;
    for (size_t k = 0; k < c.inputs.size(); ++k) {
      tir::Value v = tir::Value::Float(vector_type, 0.0);
      for (size_t lane = 0; lane < kLanes && start + lane < count; ++lane) {
        v.floats[lane] = c.inputs[k][start + lane];
      }
      bindings.emplace_back(vars[k], v);
    }
    tir::Value out = tir::Interpreter().Evaluate(lowered, bindings);
    for (size_t lane = 0; lane < kLanes && start + lane < count; ++lane) {
      results.push_back(static_cast<float>(out.floats[lane]));
    }
  }
  return results;
}

TEST(CompiledMathAccuracy, ScalarAndVectorCodeWithinTheDocumentedBounds) {
  std::vector<MathCase> cases = Cases();
  IRModule module;
  for (const MathCase& c : cases) {
    for (int lanes : {1, 16}) {
      PrimFunc kernel = MathKernel(c, lanes);
      module.Add(c.name + "_x" + std::to_string(lanes), kernel);
    }
  }
  runtime::Module compiled = build(module, Target::Parse("llvm"));
  for (const MathCase& c : cases) {
    std::vector<float> interpreted = Interpret(c);
    int64_t n = static_cast<int64_t>(c.inputs[0].size());
    for (int lanes : {1, 16}) {
      std::string label = c.name + "_x" + std::to_string(lanes);
      std::vector<tir::HostArray> arrays;
      for (const std::vector<float>& input : c.inputs) {
        arrays.emplace_back(kF32, std::vector<int64_t>{n});
        for (int64_t i = 0; i < n; ++i) arrays.back().SetFloat(i, input[i]);
      }
      arrays.emplace_back(kF32, std::vector<int64_t>{n});
      CallWithArrays(compiled, label, arrays);
      double worst = 0;
      std::string where;
      int64_t mismatches = 0;
      for (int64_t i = 0; i < n; ++i) {
        auto result = static_cast<float>(arrays.back().GetFloat(i));
        std::vector<double> point;
        for (const std::vector<float>& input : c.inputs) point.push_back(input[i]);
        if (std::bit_cast<uint32_t>(result) != std::bit_cast<uint32_t>(interpreted[i]) &&
            !(std::isnan(result) && std::isnan(interpreted[i])) && mismatches++ < 3) {
          ADD_FAILURE() << label << " at " << FloatText(point[0]) << ": compiled "
                        << FloatText(result) << ", interpreter " << FloatText(interpreted[i]);
        }
        double error = UlpError(result, c.reference(point));
        if (error > worst) {
          worst = error;
          where = FloatText(point[0]) + (point.size() > 1 ? ", " + FloatText(point[1]) : "");
        }
      }
      std::printf("[ compiled math ] %-11s %lld points, max error %.3f ulp at (%s)\n",
                  label.c_str(), static_cast<long long>(n), worst, where.c_str());
      EXPECT_EQ(mismatches, 0) << label;
      EXPECT_LE(worst, c.bound) << label << " at (" << where << ")";
    }
  }
}

}  // namespace
}  // namespace loom::target_test
