// SimplifyInference: batch_norm becomes x * scale + shift over calls on its parameters (its
// results unchanged on random data), dropout disappears, symbolic batch sizes are fine.
#include "pass_test_util.h"

namespace loom::graph::test {
namespace {

const DataType kF32 = DataType::Float(32);

// batch_norm 'bn' over `x` with random parameters for `channels` channels (var > 0).
Expr BatchNorm(const Expr& x, int64_t channels, Attrs attrs = {}) {
  return MakeCall(
      "nn.batch_norm",
      {x, RandomConstant({channels}, "bn.gamma", 1), RandomConstant({channels}, "bn.beta", 2),
       RandomConstant({channels}, "bn.mean", 3),
       RandomConstant({channels}, "bn.var", 4, 0.5, 4.5)},
      std::move(attrs), "bn");
}

TEST(SimplifyInference, BatchNormBecomesScaleAndShift) {
  Var x = MakeVar("x", TensorType({2, 3, 4, 5}, kF32));
  Function before = MakeFunction({x}, BatchNorm(x, 3, {{"epsilon", 1e-3}}));
  Function after = RunPass(SimplifyInference(), before);
  EXPECT_EQ(ToText(after),
            "fn (%x: Tensor[(2, 3, 4, 5), float32]) -> Tensor[(2, 3, 4, 5), float32] {\n"
            "  %0 = add(meta[Constant 'bn.var' Tensor[(3,), float32]], "
            "meta[Constant 'bn.epsilon' Tensor[(), float32]]);\n"
            "  %1 = sqrt(%0);\n"
            "  %2 = divide(meta[Constant 'bn.gamma' Tensor[(3,), float32]], %1) /* bn.scale */;\n"
            "  %3 = expand_dims(%2, axis=1, num_newaxis=2) /* bn.scale */;\n"
            "  %4 = multiply(%x, %3) /* bn */;\n"
            "  %5 = multiply(meta[Constant 'bn.mean' Tensor[(3,), float32]], %2);\n"
            "  %6 = subtract(meta[Constant 'bn.beta' Tensor[(3,), float32]], %5) /* bn.shift */;\n"
            "  %7 = expand_dims(%6, axis=1, num_newaxis=2) /* bn.shift */;\n"
            "  %8 = add(%4, %7) /* bn */;\n"
            "  %8\n"
            "}\n");
  ExpectSameResults(before, after, 1e-5);
}

TEST(SimplifyInference, TwoDimensionalDataNeedsNoExpandDims) {
  Var x = MakeVar("x", TensorType({4, 6}, kF32));
  Function before = MakeFunction({x}, BatchNorm(x, 6));
  Function after = RunPass(SimplifyInference(), before);
  std::string text = ToText(after);
  EXPECT_EQ(text.find("expand_dims"), std::string::npos) << text;
  EXPECT_NE(text.find("%3 = multiply(%x, %2) /* bn */"), std::string::npos) << text;
  ExpectSameResults(before, after, 1e-5);
}

TEST(SimplifyInference, NegativeChannelAxis) {
  Var x = MakeVar("x", TensorType({2, 3, 7}, kF32));
  Function before = MakeFunction({x}, BatchNorm(x, 3, {{"axis", int64_t{-2}}}));
  Function after = RunPass(SimplifyInference(), before);
  EXPECT_NE(ToText(after).find("expand_dims(%2, axis=1, num_newaxis=1)"), std::string::npos)
      << ToText(after);
  ExpectSameResults(before, after, 1e-5);
}

TEST(SimplifyInference, SymbolicBatchSize) {
  loom::Var batch = SizeVar("batch", DataType::Int(64));
  std::vector<PrimExpr> shape = {batch, IntImm(DataType::Int(64), 3), IntImm(DataType::Int(64), 2),
                                 IntImm(DataType::Int(64), 2)};
  Var x = MakeVar("x", TensorType(shape, kF32));
  Function before = MakeFunction({x}, MakeCall("nn.relu", {BatchNorm(x, 3)}));
  Function after = RunPass(SimplifyInference(), before);
  std::string text = ToText(after);
  EXPECT_NE(text.find("%4 = multiply(%x, %3) /* bn */"), std::string::npos) << text;
  EXPECT_NE(text.find("-> Tensor[(batch, 3, 2, 2), float32]"), std::string::npos) << text;
  // The interpreter binds the batch size from the input array.
  ExpectSameResults(before, after, {RandomArray({5, 3, 2, 2}, kF32, 9)}, 1e-5);
  // The parameters' arithmetic does not involve the batch: it folds to two constants.
  Function folded = RunPass(FoldConstant(HostTarget()), after);
  EXPECT_EQ(ToText(folded),
            "fn (%x: Tensor[(batch, 3, 2, 2), float32]) -> Tensor[(batch, 3, 2, 2), float32] {\n"
            "  %0 = multiply(%x, meta[Constant 'bn.scale' Tensor[(3, 1, 1), float32]]) /* bn */;\n"
            "  %1 = add(%0, meta[Constant 'bn.shift' Tensor[(3, 1, 1), float32]]) /* bn */;\n"
            "  %2 = nn.relu(%1);\n"
            "  %2\n"
            "}\n");
}

TEST(SimplifyInference, DropoutDisappears) {
  Var x = MakeVar("x", TensorType({2, 8}, kF32));
  Expr dropout = MakeCall("nn.dropout", {MakeCall("nn.relu", {x}, {}, "relu")}, {{"rate", 0.5}});
  Function before = MakeFunction({x}, MakeCall("exp", {dropout}, {}, "exp"));
  EXPECT_EQ(ToText(RunPass(SimplifyInference(), before)),
            "fn (%x: Tensor[(2, 8), float32]) -> Tensor[(2, 8), float32] {\n"
            "  %0 = nn.relu(%x) /* relu */;\n"
            "  %1 = exp(%0) /* exp */;\n"
            "  %1\n"
            "}\n");
}

TEST(SimplifyInference, LeavesOtherGraphsAlone) {
  Var x = MakeVar("x", TensorType({2, 8}, kF32));
  Function f = MakeFunction({x}, MakeCall("nn.relu", {x}));
  EXPECT_TRUE(RunPass(SimplifyInference(), f).same_as(f));
}

}  // namespace
}  // namespace loom::graph::test
