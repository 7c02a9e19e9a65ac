#include <gtest/gtest.h>

#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/ir/structural.h"

namespace loom {
TEST(Smoke, BuildAndPrint) {
  Var x("x"), y("y");
  PrimExpr e = x * 4 + y;
  EXPECT_EQ(ToScript(e), "x * 4 + y");
  EXPECT_TRUE(StructuralEqual(e, x * 4 + y));
}
}  // namespace loom
