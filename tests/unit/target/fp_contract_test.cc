// Float contraction in compiled code: the fma builtin compiles to one fused multiply-add,
// loom::build contracts a * b + c exactly where ContractMultiplyAdd does (by default, on an
// fma CPU) and nowhere else, and -fast-math leaves the math polynomials intact.
#include <cmath>
#include <limits>

#include "loom/ir/expr_ops.h"
#include "loom/ir/math.h"
#include "loom/ir/printer.h"
#include "loom/te/lower.h"
#include "loom/te/operation.h"
#include "loom/te/schedule.h"
#include "loom/tir/transform.h"
#include "target_test_util.h"

namespace loom::target_test {
namespace {

using te::compute;
using te::placeholder;
using te::Tensor;

constexpr int64_t kN = 67;  // a vector part and a scalar remainder for any width
const DataType kF32 = DataType::Float(32);

// C = fma(A, B, D), vectorized by `lanes` (1: scalar loop).
PrimFunc FmaKernel(DataType t, int lanes) {
  Tensor A = placeholder({int(kN)}, t, "A");
  Tensor B = placeholder({int(kN)}, t, "B");
  Tensor D = placeholder({int(kN)}, t, "D");
  Tensor C = compute({int(kN)}, [&](Var i) { return fma(A(i), B(i), D(i)); }, "C");
  te::Schedule s = te::create_schedule({C.op()});
  if (lanes > 1) s[C].vectorize(s[C].split(s[C]->leaf_iter_vars[0], lanes).second);
  return te::lower(s, {A, B, D, C}, "main");
}

TEST(FpContract, CompiledFmaMatchesTheInterpreterBitForBit) {
  for (DataType t : {kF32, DataType::Float(64), DataType::Float(16), DataType::BFloat16()}) {
    for (int lanes : {1, 8}) {
      for (const char* target : {"llvm", "llvm -fp-contract=off", "llvm -mcpu=x86-64"}) {
        ExpectMatchesInterpreter(
            FmaKernel(t, lanes),
            {RandomArray(t, {kN}, 1), RandomArray(t, {kN}, 2), RandomArray(t, {kN}, 3)},
            {tir::HostArray(t, {kN})},
            "fma " + t.str() + " x" + std::to_string(lanes) + " " + target, target);
      }
    }
  }
}

TEST(FpContract, CompiledFmaRoundsOnce) {
  tir::HostArray a = RandomArray(kF32, {kN}, 4), b = RandomArray(kF32, {kN}, 5);
  tir::HostArray d = RandomArray(kF32, {kN}, 6), c(kF32, {kN});
  CallWithArrays(build(FmaKernel(kF32, 8), Target::Parse("llvm")), "main", {a, b, d, c});
  int single_rounding_differs = 0;
  for (int64_t i = 0; i < kN; ++i) {
    auto x = static_cast<float>(a.GetFloat(i)), y = static_cast<float>(b.GetFloat(i));
    auto z = static_cast<float>(d.GetFloat(i));
    EXPECT_EQ(c.GetFloat(i), std::fma(x, y, z)) << i;
    float product = x * y;
    single_rounding_differs += product + z != std::fma(x, y, z);
  }
  EXPECT_GT(single_rounding_differs, 0);  // the data tells a real fma from mul + add
}

// A 16 x 12 x 40 float32 GEMM, vectorized over the columns and unrolled over k by 4.
PrimFunc Gemm() {
  Tensor A = placeholder({16, 40}, kF32, "A");
  Tensor B = placeholder({40, 12}, kF32, "B");
  IterVar k = te::reduce_axis(Range(0, 40), "k");
  Tensor C = compute({16, 12}, [&](Var i, Var j) {
    return te::sum(A(i, k->var) * B(k->var, j), {k});
  }, "C");
  te::Schedule s = te::create_schedule({C.op()});
  te::Stage c = s[C];
  auto [ko, ki] = c.split(c->leaf_iter_vars[2], 4);
  c.reorder({c->leaf_iter_vars[0], ko, ki, c->leaf_iter_vars[1]});
  c.unroll(ki);
  c.vectorize(c->leaf_iter_vars[3]);
  return te::lower(s, {A, B, C}, "main");
}

TEST(FpContract, GemmIsContractedByDefaultAndNotWhenOff) {
  PrimFunc gemm = Gemm();
  tir::HostArray a = RandomArray(kF32, {16, 40}, 7), b = RandomArray(kF32, {40, 12}, 8);
  // Each compiled variant equals the interpreter on the TIR it compiles (AsCompiled).
  ExpectMatchesInterpreter(gemm, {a, b}, {tir::HostArray(kF32, {16, 12})}, "gemm");
  ExpectMatchesInterpreter(gemm, {a, b}, {tir::HostArray(kF32, {16, 12})}, "gemm off",
                           "llvm -fp-contract=off");
  // ... and the two differ: the default really fused the update acc + a * b.
  tir::HostArray fused(kF32, {16, 12}), separate(kF32, {16, 12}), reference(kF32, {16, 12});
  CallWithArrays(build(gemm, Target::Parse("llvm")), "main", {a, b, fused});
  CallWithArrays(build(gemm, Target::Parse("llvm -fp-contract=off")), "main", {a, b, separate});
  EXPECT_FALSE(SameBytes(fused, separate));
  tir::Interpreter().Run(gemm, {a, b, reference});
  EXPECT_TRUE(SameBytes(separate, reference));
  PrimFunc contracted = tir::transform::ContractMultiplyAdd()(gemm);
  EXPECT_NE(ToScript(contracted).find("T.fma("), std::string::npos) << ToScript(contracted);
}

// A CPU without the fma feature would call libm's software fma: build does not contract.
TEST(FpContract, NoContractionWithoutFmaHardware) {
  PrimFunc gemm = Gemm();
  tir::HostArray a = RandomArray(kF32, {16, 40}, 9), b = RandomArray(kF32, {40, 12}, 10);
  tir::HostArray compiled(kF32, {16, 12}), reference(kF32, {16, 12});
  Target generic = Target::Parse("llvm -mcpu=x86-64");
  EXPECT_FALSE(generic.ContractsMultiplyAdd());
  CallWithArrays(build(gemm, generic), "main", {a, b, compiled});
  tir::Interpreter().Run(gemm, {a, b, reference});
  EXPECT_TRUE(SameBytes(compiled, reference));
}

// Under -fast-math the float32 math functions are still LowerMathIntrinsics' polynomials,
// emitted without fast-math flags: bit for bit the interpreter's, special values included.
TEST(FpContract, FastMathKeepsTheMathPolynomialsExact) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const float specials[] = {0.0f, -0.0f, kInf, -kInf, std::numeric_limits<float>::quiet_NaN(),
                            100.0f, -100.0f, 1e-40f, 88.7f, -104.0f};
  std::vector<std::pair<std::string, std::function<PrimExpr(PrimExpr)>>> fns = {
      {"exp", [](PrimExpr x) { return exp(x); }},
      {"log", [](PrimExpr x) { return log(x); }},
      {"tanh", [](PrimExpr x) { return tanh(x); }},
      {"erf", [](PrimExpr x) { return erf(x); }},
      {"pow", [](PrimExpr x) { return pow(x, 1.25f); }},
  };
  for (const auto& [name, fn] : fns) {
    for (int lanes : {1, 16}) {
      Tensor A = placeholder({int(kN)}, kF32, "A");
      Tensor C = compute({int(kN)}, [&](Var i) { return fn(A(i)); }, "C");
      te::Schedule s = te::create_schedule({C.op()});
      if (lanes > 1) s[C].vectorize(s[C].split(s[C]->leaf_iter_vars[0], lanes).second);
      tir::HostArray a = RandomArray(kF32, {kN}, 11);
      for (size_t i = 0; i < std::size(specials); ++i) a.SetFloat(int64_t(i) * 3, specials[i]);
      ExpectMatchesInterpreter(te::lower(s, {A, C}, "main"), {a}, {tir::HostArray(kF32, {kN})},
                               name + " -fast-math x" + std::to_string(lanes),
                               "llvm -fast-math");
    }
  }
}

}  // namespace
}  // namespace loom::target_test
