#include <gtest/gtest.h>

#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"

namespace loom::arith {
TEST(AnalyzerSmoke, ConstantsFoldAtConstruction) {
  Analyzer ana;
  EXPECT_TRUE(ana.CanProve(PrimExpr(3) < PrimExpr(4)));
}
}  // namespace loom::arith
