// Constant folding of floats (by the builders and the simplifiers) must compute what the
// hardware computes: float32 operations in float32, not in double.
#include <gtest/gtest.h>

#include <random>

#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/tir/interpreter.h"

namespace loom::tir {
namespace {

PrimExpr RandomFloatTree(std::mt19937_64* rng, int depth) {
  std::uniform_real_distribution<float> value(-8.0f, 8.0f);
  const DataType f32 = DataType::Float(32);
  if (depth == 0) return FloatImm(f32, value(*rng));
  PrimExpr a = RandomFloatTree(rng, depth - 1), b = RandomFloatTree(rng, depth - 1);
  switch (std::uniform_int_distribution<int>(0, 3)(*rng)) {
    case 0: return Add(a, b);
    case 1: return Sub(a, b);
    case 2: return Mul(a, b);
    default: return Div(a, b);
  }
}

TEST(FloatFolding, SimplifiedConstantsEqualInterpretedFloat32) {
  std::mt19937_64 rng(5);
  Interpreter interpreter;
  for (int i = 0; i < 3000; ++i) {
    PrimExpr e = RandomFloatTree(&rng, 3);
    arith::Analyzer analyzer;
    PrimExpr folded = analyzer.Simplify(e);
    ASSERT_NE(folded.as<FloatImmNode>(), nullptr) << ToScript(e) << " => " << ToScript(folded);
    double expected = interpreter.Evaluate(e).AsFloat();
    double actual = folded.as<FloatImmNode>()->value;
    if (std::isnan(expected)) continue;
    EXPECT_EQ(actual, expected) << ToScript(e);
  }
}

}  // namespace
}  // namespace loom::tir
