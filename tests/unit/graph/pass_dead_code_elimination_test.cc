// DeadCodeElimination: projections of Tuple nodes become the fields, so tuples only
// projections used (and fields no output needs) go; operator-produced tuples stay.
#include "pass_test_util.h"

namespace loom::graph::test {
namespace {

const DataType kF32 = DataType::Float(32);

TEST(DeadCodeElimination, ProjectionsOfTuplesBecomeTheFields) {
  Var x = MakeVar("x", TensorType({4}, kF32));
  Expr unused = MakeCall("exp", {x}, {}, "unused");
  Expr used = MakeCall("nn.relu", {x}, {}, "used");
  Expr nested = MakeTuple({MakeTuple({unused, used}), x});
  Expr inner = MakeTupleGetItem(nested, 0);
  Function before =
      MakeFunction({x}, MakeCall("add", {MakeTupleGetItem(inner, 1), MakeTupleGetItem(nested, 1)}));
  EXPECT_EQ(ToText(before),
            "fn (%x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {\n"
            "  %0 = exp(%x) /* unused */;\n"
            "  %1 = nn.relu(%x) /* used */;\n"
            "  %2 = (%0, %1);\n"
            "  %3 = (%2, %x);\n"
            "  %4 = %3.0;\n"
            "  %5 = %4.1;\n"
            "  %6 = %3.1;\n"
            "  %7 = add(%5, %6);\n"
            "  %7\n"
            "}\n");
  Function after = RunPass(DeadCodeElimination(), before);
  EXPECT_EQ(ToText(after),
            "fn (%x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {\n"
            "  %0 = nn.relu(%x) /* used */;\n"
            "  %1 = add(%0, %x);\n"
            "  %1\n"
            "}\n");
  ExpectSameResults(before, after);
}

TEST(DeadCodeElimination, OperatorTuplesAndTupleResultsStay) {
  Var x = MakeVar("x", TensorType({4}, kF32));
  Expr halves = MakeCall("split", {x}, {{"indices_or_sections", Ints{2}}});
  Function f = MakeFunction({x}, MakeTuple({MakeTupleGetItem(halves, 1), x}));
  EXPECT_TRUE(RunPass(DeadCodeElimination(), f).same_as(f));
}

}  // namespace
}  // namespace loom::graph::test
