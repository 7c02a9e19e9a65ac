// EliminateCommonSubexpr: duplicate calls (and projections) merge from the inputs up;
// constants count as equal by content; different attributes or arguments keep calls apart.
#include "pass_test_util.h"

namespace loom::graph::test {
namespace {

const DataType kF32 = DataType::Float(32);

TEST(EliminateCommonSubexpr, DuplicateChainsMergeFromTheInputsUp) {
  Var x = MakeVar("x", TensorType({2, 4}, kF32));
  auto branch = [&](const std::string& name) {
    return MakeCall("exp", {MakeCall("nn.relu", {x}, {}, name + "_relu")}, {}, name + "_exp");
  };
  Function before = MakeFunction({x}, MakeCall("add", {branch("a"), branch("b")}, {}, "sum"));
  Function after = RunPass(EliminateCommonSubexpr(), before);
  // The first of the duplicates stays, with its name.
  EXPECT_EQ(ToText(after),
            "fn (%x: Tensor[(2, 4), float32]) -> Tensor[(2, 4), float32] {\n"
            "  %0 = nn.relu(%x) /* a_relu */;\n"
            "  %1 = exp(%0) /* a_exp */;\n"
            "  %2 = add(%1, %1) /* sum */;\n"
            "  %2\n"
            "}\n");
  ExpectSameResults(before, after);
}

TEST(EliminateCommonSubexpr, DifferentAttributesOrArgumentsAreNotMerged) {
  Var x = MakeVar("x", TensorType({2, 4}, kF32));
  Var y = MakeVar("y", TensorType({2, 4}, kF32));
  Function f = MakeFunction(
      {x, y},
      MakeTuple({MakeCall("nn.leaky_relu", {x}, {{"alpha", 0.1}}),
                 MakeCall("nn.leaky_relu", {x}, {{"alpha", 0.2}}), MakeCall("subtract", {x, y}),
                 MakeCall("subtract", {y, x}), MakeCall("nn.relu", {x}), MakeCall("exp", {x})}));
  EXPECT_TRUE(RunPass(EliminateCommonSubexpr(), f).same_as(f));
}

TEST(EliminateCommonSubexpr, ConstantsAreEqualByContent) {
  Var x = MakeVar("x", TensorType({3}, kF32));
  runtime::NDArray data = RandomArray({3}, kF32, 1);
  runtime::NDArray copy = runtime::NDArray::Empty({3}, kF32);
  copy.CopyFrom(data);
  Expr first = MakeCall("multiply", {x, MakeConstant(data, "w1")});
  Expr same = MakeCall("multiply", {x, MakeConstant(copy, "w2")});
  Expr other = MakeCall("multiply", {x, RandomConstant({3}, "w3", 2)});
  // The same bytes in another shape are another constant.
  Var m = MakeVar("m", TensorType({1, 3}, kF32));
  Expr reshaped = MakeCall("multiply", {m, MakeConstant(copy.CreateView({1, 3}, kF32), "w4")});
  Expr original = MakeCall("multiply", {m, MakeConstant(data, "w5")});
  Function before = MakeFunction({x, m}, MakeTuple({first, same, other, reshaped, original}));
  EXPECT_EQ(ToText(RunPass(EliminateCommonSubexpr(), before)),
            "fn (%x: Tensor[(3,), float32], %m: Tensor[(1, 3), float32]) -> "
            "(Tensor[(3,), float32], Tensor[(3,), float32], Tensor[(3,), float32], "
            "Tensor[(1, 3), float32], Tensor[(1, 3), float32]) {\n"
            "  %0 = multiply(%x, meta[Constant 'w1' Tensor[(3,), float32]]);\n"
            "  %1 = multiply(%x, meta[Constant 'w3' Tensor[(3,), float32]]);\n"
            "  %2 = multiply(%m, meta[Constant 'w4' Tensor[(1, 3), float32]]);\n"
            "  %3 = multiply(%m, meta[Constant 'w5' Tensor[(3,), float32]]);\n"
            "  %4 = (%0, %0, %1, %2, %3);\n"
            "  %4\n"
            "}\n");
}

TEST(EliminateCommonSubexpr, ProjectionsOfOneTupleMerge) {
  Var x = MakeVar("x", TensorType({4}, kF32));
  Expr halves = MakeCall("split", {x}, {{"indices_or_sections", Ints{2}}});
  Expr a = MakeCall("exp", {MakeTupleGetItem(halves, 1)});
  Expr b = MakeCall("exp", {MakeTupleGetItem(halves, 1)});
  Expr c = MakeCall("exp", {MakeTupleGetItem(halves, 0)});
  Function before = MakeFunction({x}, MakeTuple({a, b, c}));
  EXPECT_EQ(ToText(RunPass(EliminateCommonSubexpr(), before)),
            "fn (%x: Tensor[(4,), float32]) -> (Tensor[(2,), float32], Tensor[(2,), float32], "
            "Tensor[(2,), float32]) {\n"
            "  %0 = split(%x, axis=0, indices_or_sections=[2]);\n"
            "  %1 = %0.1;\n"
            "  %2 = exp(%1);\n"
            "  %3 = %0.0;\n"
            "  %4 = exp(%3);\n"
            "  %5 = (%2, %2, %4);\n"
            "  %5\n"
            "}\n");
}

TEST(EliminateCommonSubexpr, TupleCallsMergeAndTheirProjectionsFollow) {
  // Two equal splits become one; the projections of either, then the adds reading them
  // crosswise, merge with it.
  Var x = MakeVar("x", TensorType({4, 6}, kF32));
  Attrs halves = {{"indices_or_sections", Ints{2}}, {"axis", int64_t{1}}};
  Expr s1 = MakeCall("split", {x}, halves);
  Expr s2 = MakeCall("split", {x}, halves);
  Expr a = MakeCall("add", {MakeTupleGetItem(s1, 0), MakeTupleGetItem(s2, 1)});
  Expr b = MakeCall("add", {MakeTupleGetItem(s2, 0), MakeTupleGetItem(s1, 1)});
  Function before = MakeFunction({x}, MakeTuple({a, b}));
  Function after = RunPass(EliminateCommonSubexpr(), before);
  EXPECT_EQ(ToText(after),
            "fn (%x: Tensor[(4, 6), float32]) -> (Tensor[(4, 3), float32], Tensor[(4, 3), "
            "float32]) {\n"
            "  %0 = split(%x, axis=1, indices_or_sections=[2]);\n"
            "  %1 = %0.0;\n"
            "  %2 = %0.1;\n"
            "  %3 = add(%1, %2);\n"
            "  %4 = (%3, %3);\n"
            "  %4\n"
            "}\n");
  ExpectSameResults(before, after);
}

}  // namespace
}  // namespace loom::graph::test
