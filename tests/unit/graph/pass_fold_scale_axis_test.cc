// FoldScaleAxis: per-output-channel scales after conv2d / dense (directly or through a bias
// add) fold into the weights with the same results; other scales and shared layers stay.
#include "pass_test_util.h"

namespace loom::graph::test {
namespace {

const DataType kF32 = DataType::Float(32);

Expr Conv(const Expr& x, int64_t out_channels, int64_t in_channels, Attrs attrs = {}) {
  int64_t groups = attrs.Has("groups") ? attrs.GetInt("groups") : 1;
  return MakeCall("nn.conv2d",
                  {x, RandomConstant({out_channels, in_channels / groups, 3, 3}, "conv.weight", 1)},
                  std::move(attrs), "conv");
}

TEST(FoldScaleAxis, ScaleAfterConvFoldsIntoTheWeight) {
  Var x = MakeVar("x", TensorType({1, 2, 6, 6}, kF32));
  Expr conv = Conv(x, 4, 2);
  Function before =
      MakeFunction({x}, MakeCall("multiply", {conv, RandomConstant({4, 1, 1}, "s", 2)}, {}, "bn"));
  Function after = RunPass(FoldScaleAxis(), before);
  EXPECT_EQ(
      ToText(after),
      "fn (%x: Tensor[(1, 2, 6, 6), float32]) -> Tensor[(1, 4, 4, 4), float32] {\n"
      "  %0 = reshape(meta[Constant 's' Tensor[(4, 1, 1), float32]], newshape=[4, 1, 1, 1]);\n"
      "  %1 = multiply(meta[Constant 'conv.weight' Tensor[(4, 2, 3, 3), float32]], %0) "
      "/* conv.weight */;\n"
      "  %2 = nn.conv2d(%x, %1, dilation=[1, 1], groups=1, out_dtype=\"\", padding=[0, 0, 0, 0], "
      "strides=[1, 1]) /* conv */;\n"
      "  %2\n"
      "}\n");
  ExpectSameResults(before, after, 1e-4);
  // FoldConstant then leaves one weight constant, under the weight's name.
  std::string folded = ToText(RunPass(FoldConstant(HostTarget()), after));
  EXPECT_NE(folded.find("nn.conv2d(%x, meta[Constant 'conv.weight' Tensor[(4, 2, 3, 3), float32]]"),
            std::string::npos)
      << folded;
}

TEST(FoldScaleAxis, ScaleOnEitherSideThroughABiasAdd) {
  Var x = MakeVar("x", TensorType({1, 2, 5, 5}, kF32));
  Expr biased = MakeCall(
      "add",
      {RandomConstant({4, 1, 1}, "conv.bias", 3), Conv(x, 4, 2, {{"padding", Ints{1, 1, 1, 1}}})},
      {}, "biased");
  Function before = MakeFunction(
      {x}, MakeCall("multiply", {RandomConstant({1, 4, 1, 1}, "s", 4), biased}, {}, "bn"));
  Function after = RunPass(FoldScaleAxis(), before);
  EXPECT_EQ(
      ToText(after),
      "fn (%x: Tensor[(1, 2, 5, 5), float32]) -> Tensor[(1, 4, 5, 5), float32] {\n"
      "  %0 = multiply(meta[Constant 'conv.bias' Tensor[(4, 1, 1), float32]], "
      "meta[Constant 's' Tensor[(1, 4, 1, 1), float32]]) /* conv.bias */;\n"
      "  %1 = reshape(meta[Constant 's' Tensor[(1, 4, 1, 1), float32]], newshape=[4, 1, 1, 1]);\n"
      "  %2 = multiply(meta[Constant 'conv.weight' Tensor[(4, 2, 3, 3), float32]], %1) "
      "/* conv.weight */;\n"
      "  %3 = nn.conv2d(%x, %2, dilation=[1, 1], groups=1, out_dtype=\"\", padding=[1, 1, 1, 1], "
      "strides=[1, 1]) /* conv */;\n"
      "  %4 = add(%0, %3) /* biased */;\n"
      "  %4\n"
      "}\n");
  ExpectSameResults(before, after, 1e-4);
}

TEST(FoldScaleAxis, GroupedConvThroughBiasAdd) {
  Var x = MakeVar("x", TensorType({2, 4, 5, 5}, kF32));
  Expr conv = Conv(x, 6, 4, {{"groups", int64_t{2}}, {"strides", Ints{2, 2}}});
  Expr biased = MakeCall("nn.bias_add", {conv, RandomConstant({6}, "conv.bias", 5)});
  Function before =
      MakeFunction({x}, MakeCall("multiply", {biased, RandomConstant({6, 1, 1}, "s", 6)}));
  Function after = RunPass(FoldScaleAxis(), before);
  std::string text = ToText(after);
  EXPECT_NE(text.find("multiply(meta[Constant 'conv.weight'"), std::string::npos) << text;
  EXPECT_NE(text.find("multiply(meta[Constant 'conv.bias'"), std::string::npos) << text;
  EXPECT_NE(text.find("reshape(meta[Constant 's' Tensor[(6, 1, 1), float32]], newshape=[6])"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("nn.bias_add(%"), std::string::npos) << text;
  ExpectSameResults(before, after, 1e-4);
}

TEST(FoldScaleAxis, DenseAndOneValueForAllChannels) {
  Var x = MakeVar("x", TensorType({3, 5}, kF32));
  Expr dense = MakeCall("nn.dense", {x, RandomConstant({4, 5}, "fc.weight", 7)}, {}, "fc");
  Function per_unit = MakeFunction({x}, MakeCall("multiply", {dense, RandomConstant({4}, "s", 8)}));
  Function after = RunPass(FoldScaleAxis(), per_unit);
  EXPECT_EQ(ToText(after),
            "fn (%x: Tensor[(3, 5), float32]) -> Tensor[(3, 4), float32] {\n"
            "  %0 = reshape(meta[Constant 's' Tensor[(4,), float32]], newshape=[4, 1]);\n"
            "  %1 = multiply(meta[Constant 'fc.weight' Tensor[(4, 5), float32]], %0) "
            "/* fc.weight */;\n"
            "  %2 = nn.dense(%x, %1, out_dtype=\"\") /* fc */;\n"
            "  %2\n"
            "}\n");
  ExpectSameResults(per_unit, after, 1e-4);

  Function one_value =
      MakeFunction({x}, MakeCall("multiply", {dense, RandomConstant({1, 1}, "s", 9)}));
  Function folded = RunPass(FoldScaleAxis(), one_value);
  EXPECT_NE(ToText(folded).find("newshape=[1, 1]"), std::string::npos) << ToText(folded);
  ExpectSameResults(one_value, folded, 1e-4);
}

TEST(FoldScaleAxis, ConvBatchNormReluPipeline) {
  Var x = MakeVar("x", TensorType({1, 3, 6, 6}, kF32));
  Expr bn =
      MakeCall("nn.batch_norm",
               {Conv(x, 4, 3, {{"padding", Ints{1, 1, 1, 1}}}), RandomConstant({4}, "bn.gamma", 10),
                RandomConstant({4}, "bn.beta", 11), RandomConstant({4}, "bn.mean", 12),
                RandomConstant({4}, "bn.var", 13, 0.5, 4.5)},
               {}, "bn");
  Function before = MakeFunction({x}, MakeCall("nn.relu", {bn}, {}, "relu"));
  Function after =
      RunPasses(IRModule::FromFunction(before), {SimplifyInference(), FoldConstant(HostTarget()),
                                                 FoldScaleAxis(), FoldConstant(HostTarget())})
          .main();
  EXPECT_EQ(ToText(after),
            "fn (%x: Tensor[(1, 3, 6, 6), float32]) -> Tensor[(1, 4, 6, 6), float32] {\n"
            "  %0 = nn.conv2d(%x, meta[Constant 'conv.weight' Tensor[(4, 3, 3, 3), float32]], "
            "dilation=[1, 1], groups=1, out_dtype=\"\", padding=[1, 1, 1, 1], strides=[1, 1]) /* "
            "conv */;\n"
            "  %1 = add(%0, meta[Constant 'bn.shift' Tensor[(4, 1, 1), float32]]) /* bn */;\n"
            "  %2 = nn.relu(%1) /* relu */;\n"
            "  %2\n"
            "}\n");
  ExpectSameResults(before, after, 1e-4);
}

TEST(FoldScaleAxis, ScaleBeforeTheLayerFoldsIntoItsInputChannels) {
  Var x = MakeVar("x", TensorType({1, 3, 6, 6}, kF32));
  Expr scaled = MakeCall("multiply", {RandomConstant({3, 1, 1}, "s_in", 17), x});
  Expr conv = Conv(scaled, 4, 3, {{"padding", Ints{1, 1, 1, 1}}});
  // Scaled after as well: both fold into the one weight.
  Function before =
      MakeFunction({x}, MakeCall("multiply", {conv, RandomConstant({1, 4, 1, 1}, "s_out", 18)}));
  Function after = RunPass(FoldScaleAxis(), before);
  EXPECT_EQ(
      ToText(after),
      "fn (%x: Tensor[(1, 3, 6, 6), float32]) -> Tensor[(1, 4, 6, 6), float32] {\n"
      "  %0 = reshape(meta[Constant 's_in' Tensor[(3, 1, 1), float32]], "
      "newshape=[1, 3, 1, 1]);\n"
      "  %1 = multiply(meta[Constant 'conv.weight' Tensor[(4, 3, 3, 3), float32]], %0) "
      "/* conv.weight */;\n"
      "  %2 = reshape(meta[Constant 's_out' Tensor[(1, 4, 1, 1), float32]], "
      "newshape=[4, 1, 1, 1]);\n"
      "  %3 = multiply(%1, %2) /* conv.weight */;\n"
      "  %4 = nn.conv2d(%x, %3, dilation=[1, 1], groups=1, out_dtype=\"\", padding=[1, 1, 1, 1], "
      "strides=[1, 1]) /* conv */;\n"
      "  %4\n"
      "}\n");
  ExpectSameResults(before, after, 1e-4);

  Var d = MakeVar("d", TensorType({2, 5}, kF32));
  Expr dense = MakeCall("nn.dense", {MakeCall("multiply", {d, RandomConstant({5}, "s", 19)}),
                                     RandomConstant({3, 5}, "fc.weight", 20)});
  Function dense_before = MakeFunction({d}, dense);
  Function dense_after = RunPass(FoldScaleAxis(), dense_before);
  EXPECT_NE(ToText(dense_after).find("newshape=[1, 5]"), std::string::npos) << ToText(dense_after);
  ExpectSameResults(dense_before, dense_after, 1e-4);

  // Grouped convolutions and scales that are not per input channel stay.
  Var g = MakeVar("g", TensorType({1, 4, 6, 6}, kF32));
  Function grouped =
      MakeFunction({g}, Conv(MakeCall("multiply", {g, RandomConstant({4, 1, 1}, "s", 21)}), 4, 4,
                             {{"groups", int64_t{2}}}));
  EXPECT_TRUE(RunPass(FoldScaleAxis(), grouped).same_as(grouped));
  Function spatial =
      MakeFunction({g}, Conv(MakeCall("multiply", {g, RandomConstant({6, 6}, "s", 22)}), 4, 4));
  EXPECT_TRUE(RunPass(FoldScaleAxis(), spatial).same_as(spatial));
}

TEST(FoldScaleAxis, ZeroAndNegativeScalesFoldToo) {
  // Scaling is linear in the weights (and the bias), whatever the sign: a zero channel
  // becomes a zero filter, a negative one a negated filter, before or after the layer.
  Var x = MakeVar("x", TensorType({1, 4, 5, 5}, kF32));
  Constant s_in = MakeConstant(ArrayOf({4, 1, 1}, kF32, {0, -1, 2.5, -0.25}), "s_in");
  Expr biased = MakeCall(
      "nn.bias_add", {Conv(MakeCall("multiply", {x, s_in}), 4, 4, {{"padding", Ints{1, 0, 2, 1}}}),
                      RandomConstant({4}, "conv.bias", 23)});
  Constant s_out = MakeConstant(ArrayOf({4, 1, 1}, kF32, {-2, 0, 1, -0.5}), "s_out");
  Function before = MakeFunction({x}, MakeCall("multiply", {biased, s_out}));
  Function after = RunPass(FoldScaleAxis(), before);
  std::string text = ToText(after);
  EXPECT_NE(text.find("nn.conv2d(%x, "), std::string::npos) << text;
  EXPECT_NE(text.find("nn.bias_add("), std::string::npos) << text;
  EXPECT_EQ(text.find("multiply(%x"), std::string::npos) << text;
  ExpectSameResults(before, after, 1e-4);
}

TEST(FoldScaleAxis, ScalesNotPerChannelAreLeftAlone) {
  Var x = MakeVar("x", TensorType({1, 2, 6, 6}, kF32));
  Expr conv = Conv(x, 4, 2);  // output (1, 4, 4, 4)
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{1, 1, 4, 4}, {4, 4, 4}, {4, 1}, {2, 4, 1, 1}}) {
    Function f = MakeFunction({x}, MakeCall("multiply", {conv, RandomConstant(shape, "s", 14)}));
    EXPECT_TRUE(RunPass(FoldScaleAxis(), f).same_as(f)) << ToText(f);
  }
}

TEST(FoldScaleAxis, SharedLayersAndVariableScalesAreLeftAlone) {
  Var x = MakeVar("x", TensorType({1, 2, 6, 6}, kF32));
  Expr conv = Conv(x, 4, 2);
  Constant s = RandomConstant({4, 1, 1}, "s", 15);
  Function shared = MakeFunction({x}, MakeCall("add", {MakeCall("multiply", {conv, s}), conv}));
  EXPECT_TRUE(RunPass(FoldScaleAxis(), shared).same_as(shared));

  Expr biased = MakeCall("add", {conv, RandomConstant({4, 1, 1}, "b", 16)});
  Function shared_bias = MakeFunction({x}, MakeTuple({MakeCall("multiply", {biased, s}), biased}));
  EXPECT_TRUE(RunPass(FoldScaleAxis(), shared_bias).same_as(shared_bias));

  Var v = MakeVar("v", TensorType({4, 1, 1}, kF32));
  Function variable = MakeFunction({x, v}, MakeCall("multiply", {conv, v}));
  EXPECT_TRUE(RunPass(FoldScaleAxis(), variable).same_as(variable));
}

}  // namespace
}  // namespace loom::graph::test
