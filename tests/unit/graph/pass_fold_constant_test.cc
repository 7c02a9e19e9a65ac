// FoldConstant: constant subgraphs become named constants holding what the compiled graph
// computes; calls reading variables and tuple-producing calls stay (their projections
// fold). EvaluateCall, which computes the constants, checks its arrays.
#include "pass_test_util.h"

namespace loom::graph::test {
namespace {

const DataType kF32 = DataType::Float(32);

TEST(FoldConstant, ConstantSubgraphBecomesOneNamedConstant) {
  Var x = MakeVar("x", TensorType({2, 3}, kF32));
  Constant a = RandomConstant({2, 3}, "a", 1);
  Constant b = RandomConstant({3}, "b", 2, 0.5, 4.5);
  Expr scaled = MakeCall("divide", {MakeCall("exp", {a}), MakeCall("sqrt", {b})}, {}, "scaled");
  Function before = MakeFunction({x}, MakeCall("add", {x, scaled}, {}, "out"));
  Function after = RunPass(FoldConstant(HostTarget()), before);
  EXPECT_EQ(ToText(after),
            "fn (%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {\n"
            "  %0 = add(%x, meta[Constant 'scaled' Tensor[(2, 3), float32]]) /* out */;\n"
            "  %0\n"
            "}\n");
  // The constant is exactly what the unfolded graph computes.
  ExpectSameResults(before, after, /*tolerance=*/0);
}

TEST(FoldConstant, UnnamedCallsAreNamedAfterTheirInputs) {
  Var x = MakeVar("x", TensorType({4}, kF32));
  Constant w = RandomConstant({4}, "fc.weight", 3);
  Expr doubled = MakeCall("sqrt", {MakeCall("abs", {w})});
  Function before = MakeFunction({x}, MakeCall("multiply", {x, doubled}));
  EXPECT_EQ(ToText(RunPass(FoldConstant(HostTarget()), before)),
            "fn (%x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {\n"
            "  %0 = multiply(%x, meta[Constant 'fc.weight.abs.sqrt' Tensor[(4,), float32]]);\n"
            "  %0\n"
            "}\n");
}

TEST(FoldConstant, ProjectionsOfATupleCallFoldPerField) {
  Var x = MakeVar("x", TensorType({2}, kF32));
  Constant table = RandomConstant({6}, "table", 4);
  Expr pieces = MakeCall("split", {table}, {{"indices_or_sections", Ints{3}}}, "pieces");
  Expr first = MakeTupleGetItem(pieces, 0);
  Expr last = MakeTupleGetItem(pieces, 2);
  Function before = MakeFunction({x}, MakeTuple({MakeCall("add", {x, first}), last}));
  Function after = RunPass(FoldConstant(HostTarget()), before);
  EXPECT_EQ(ToText(after),
            "fn (%x: Tensor[(2,), float32]) -> (Tensor[(2,), float32], Tensor[(2,), float32]) {\n"
            "  %0 = add(%x, meta[Constant 'pieces.0' Tensor[(2,), float32]]);\n"
            "  %1 = (%0, meta[Constant 'pieces.2' Tensor[(2,), float32]]);\n"
            "  %1\n"
            "}\n");
  ExpectSameResults(before, after, /*tolerance=*/0);
}

TEST(FoldConstant, TupleCallsAndCallsOfVariablesStay) {
  Var x = MakeVar("x", TensorType({6}, kF32));
  Constant table = RandomConstant({6}, "table", 5);
  Function whole =
      MakeFunction({x}, MakeTuple({MakeCall("split", {table}, {{"indices_or_sections", Ints{2}}}),
                                   MakeCall("add", {x, table})}));
  EXPECT_TRUE(RunPass(FoldConstant(HostTarget()), whole).same_as(whole));
}

TEST(FoldConstant, BatchNormAfterSimplifyInferenceIsTwoConstants) {
  Var x = MakeVar("x", TensorType({1, 4, 3, 3}, kF32));
  Expr bn = MakeCall(
      "nn.batch_norm",
      {x, RandomConstant({4}, "bn.gamma", 6), RandomConstant({4}, "bn.beta", 7),
       RandomConstant({4}, "bn.mean", 8), RandomConstant({4}, "bn.var", 9, 0.5, 4.5)},
      {}, "bn");
  Function before = MakeFunction({x}, bn);
  Function after = RunPass(FoldConstant(HostTarget()), RunPass(SimplifyInference(), before));
  EXPECT_EQ(ToText(after),
            "fn (%x: Tensor[(1, 4, 3, 3), float32]) -> Tensor[(1, 4, 3, 3), float32] {\n"
            "  %0 = multiply(%x, meta[Constant 'bn.scale' Tensor[(4, 1, 1), float32]]) /* bn */;\n"
            "  %1 = add(%0, meta[Constant 'bn.shift' Tensor[(4, 1, 1), float32]]) /* bn */;\n"
            "  %1\n"
            "}\n");
  ExpectSameResults(before, after, 1e-5);
}

TEST(EvaluateCall, ComputesTheCallOnArraysOfItsShape) {
  loom::Var n = SizeVar("n", DataType::Int(64));
  Var x = MakeVar("x", TensorType(std::vector<PrimExpr>{n, IntImm(DataType::Int(64), 2)}, kF32));
  Var y = MakeVar("y", TensorType({1, 2}, kF32));
  Call sum = MakeCall("add", {x, y}, {}, "sum");
  runtime::NDArray a = ArrayOf({3, 2}, kF32, {1, 2, 3, 4, 5, 6});
  runtime::NDArray b = ArrayOf({1, 2}, kF32, {10, 20});
  runtime::NDArray out = EvaluateCall(*sum.get(), {a, b}, HostTarget());
  EXPECT_EQ(out.Shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(Values(out), (std::vector<double>{11, 22, 13, 24, 15, 26}));
}

TEST(EvaluateCall, KernelsAreSharedOnlyByCallsAlike) {
  // The kernel cache tells attributes apart beyond their printed digits.
  Var x = MakeVar("x", TensorType({2}, kF32));
  runtime::NDArray input = ArrayOf({2}, kF32, {-1000, 2});
  auto leaky = [&](double alpha) {
    Call call = MakeCall("nn.leaky_relu", {x}, {{"alpha", alpha}});
    return Values(EvaluateCall(*call.get(), {input}, HostTarget()));
  };
  EXPECT_EQ(leaky(0.25), (std::vector<double>{-250, 2}));
  float alpha = 0.2500001f;  // as float32 arithmetic computes it
  EXPECT_EQ(leaky(0.2500001), (std::vector<double>{-1000.0f * alpha, 2}));
  EXPECT_EQ(leaky(0.25), (std::vector<double>{-250, 2}));

  // One call of a symbolic shape on arrays of two shapes, and one operator on two dtypes:
  // a kernel each.
  loom::Var n = SizeVar("n", DataType::Int(64));
  Call negate = MakeCall("negative", {MakeVar("v", TensorType(std::vector<PrimExpr>{n}, kF32))});
  EXPECT_EQ(Values(EvaluateCall(*negate.get(), {ArrayOf({2}, kF32, {1, 2})}, HostTarget())),
            (std::vector<double>{-1, -2}));
  EXPECT_EQ(Values(EvaluateCall(*negate.get(), {ArrayOf({3}, kF32, {1, 2, 3})}, HostTarget())),
            (std::vector<double>{-1, -2, -3}));
  Call negate_int = MakeCall("negative", {MakeVar("i", TensorType({3}, DataType::Int(32)))});
  runtime::NDArray ints = ArrayOf({3}, DataType::Int(32), {7, -8, 9});
  runtime::NDArray negated = EvaluateCall(*negate_int.get(), {ints}, HostTarget());
  EXPECT_EQ(negated.dtype(), DataType::Int(32));
  EXPECT_EQ(Values(negated), (std::vector<double>{-7, 8, -9}));
}

TEST(EvaluateCall, ArraysThatDoNotFitTheCallAreErrors) {
  Var x = MakeVar("x", TensorType({2, 3}, kF32));
  Call relu = MakeCall("nn.relu", {x}, {}, "relu_1");
  EXPECT_NE(ErrorOf([&] {
              EvaluateCall(*relu.get(), {RandomArray({2, 4}, kF32, 1)}, HostTarget());
            })
                .find("nn.relu 'relu_1': input 0 takes Tensor[(2, 3), float32], got an array "
                      "Tensor[(2, 4), float32]"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              EvaluateCall(*relu.get(), {RandomArray({2, 3}, DataType::Int(32), 1)}, HostTarget());
            }).find("got an array Tensor[(2, 3), int32]"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              EvaluateCall(*relu.get(), {}, HostTarget());
            }).find("nn.relu 'relu_1': evaluated with 0 arrays for 1 inputs"),
            std::string::npos);
}

}  // namespace
}  // namespace loom::graph::test
