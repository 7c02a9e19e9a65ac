// FuseOps: the groups the TVM paper's rules give, as golden text of the fused module.
#include <gtest/gtest.h>

#include "graph_test_util.h"
#include "loom/graph/functor.h"
#include "loom/graph/transform.h"

namespace loom::graph {
namespace {

using test::ErrorOf;
using test::RandomConstant;
const DataType kF32 = DataType::Float(32);

std::string Fused(const Function& main, int max_group_size = 256) {
  return ToText(FuseOps(max_group_size).run(IRModule::FromFunction(main)));
}

// conv -> bias -> relu, then conv -> bias -> add(residual) -> relu.
Function ResidualBlock() {
  Var x = MakeVar("x", TensorType({1, 4, 6, 6}, kF32));
  Attrs conv = {{"padding", Ints{1, 1, 1, 1}}};
  Expr c1 = MakeCall("nn.conv2d", {x, RandomConstant({4, 4, 3, 3}, "w1", 7)}, conv, "conv1");
  Expr b1 =
      MakeCall("nn.bias_add", {c1, RandomConstant({4}, "b1", 7)}, {{"axis", int64_t{1}}}, "bias1");
  Expr r1 = MakeCall("nn.relu", {b1}, {}, "relu1");
  Expr c2 = MakeCall("nn.conv2d", {r1, RandomConstant({4, 4, 3, 3}, "w2", 7)}, conv, "conv2");
  Expr b2 =
      MakeCall("nn.bias_add", {c2, RandomConstant({4}, "b2", 7)}, {{"axis", int64_t{1}}}, "bias2");
  Expr sum = MakeCall("add", {b2, x}, {}, "residual");
  return MakeFunction({x}, MakeCall("nn.relu", {sum}, {}, "relu2"));
}

TEST(FuseOps, ConvBiasReluResidualBlockFusesIntoTwoKernels) {
  EXPECT_EQ(
      Fused(ResidualBlock()),
      "def @main fn (%x: Tensor[(1, 4, 6, 6), float32]) -> Tensor[(1, 4, 6, 6), float32] {\n"
      "  %0 = @fused_nn_conv2d_nn_bias_add_nn_relu(%x, meta[Constant 'w1' Tensor[(4, 4, 3, 3), "
      "float32]], meta[Constant 'b1' Tensor[(4,), float32]]) /* relu1 */;\n"
      "  %1 = @fused_nn_conv2d_nn_bias_add_add_nn_relu(%0, meta[Constant 'w2' Tensor[(4, 4, 3, "
      "3), float32]], meta[Constant 'b2' Tensor[(4,), float32]], %x) /* relu2 */;\n"
      "  %1\n"
      "}\n"
      "@fused_nn_conv2d_nn_bias_add_nn_relu = fn (%p0: Tensor[(1, 4, 6, 6), float32], %p1: "
      "Tensor[(4, 4, 3, 3), float32], %p2: Tensor[(4,), float32]) -> Tensor[(1, 4, 6, 6), "
      "float32] {\n"
      "  %0 = nn.conv2d(%p0, %p1, dilation=[1, 1], groups=1, out_dtype=\"\", padding=[1, 1, 1, 1], "
      "strides=[1, "
      "1]) /* conv1 */;\n"
      "  %1 = nn.bias_add(%0, %p2, axis=1) /* bias1 */;\n"
      "  %2 = nn.relu(%1) /* relu1 */;\n"
      "  %2\n"
      "}\n"
      "@fused_nn_conv2d_nn_bias_add_add_nn_relu = fn (%p0: Tensor[(1, 4, 6, 6), float32], %p1: "
      "Tensor[(4, 4, 3, 3), float32], %p2: Tensor[(4,), float32], %p3: Tensor[(1, 4, 6, 6), "
      "float32]) -> Tensor[(1, 4, 6, 6), float32] {\n"
      "  %0 = nn.conv2d(%p0, %p1, dilation=[1, 1], groups=1, out_dtype=\"\", padding=[1, 1, 1, 1], "
      "strides=[1, "
      "1]) /* conv2 */;\n"
      "  %1 = nn.bias_add(%0, %p2, axis=1) /* bias2 */;\n"
      "  %2 = add(%1, %p3) /* residual */;\n"
      "  %3 = nn.relu(%2) /* relu2 */;\n"
      "  %3\n"
      "}\n");
}

TEST(FuseOps, FusingAFusedModuleAgainChangesNothing) {
  IRModule once = FuseOps().run(IRModule::FromFunction(ResidualBlock()));
  EXPECT_EQ(ToText(FuseOps().run(once)), ToText(once));
}

TEST(FuseOps, DiamondFusesAtItsPostDominator) {
  Var x = MakeVar("x", TensorType({8}, kF32));
  Expr e = MakeCall("exp", {x});
  Expr out =
      MakeCall("nn.relu", {MakeCall("add", {MakeCall("sqrt", {e}), MakeCall("negative", {e})})});
  EXPECT_EQ(Fused(MakeFunction({x}, out)),
            "def @main fn (%x: Tensor[(8,), float32]) -> Tensor[(8,), float32] {\n"
            "  %0 = @fused_exp_sqrt_negative_add_nn_relu(%x);\n"
            "  %0\n"
            "}\n"
            "@fused_exp_sqrt_negative_add_nn_relu = fn (%p0: Tensor[(8,), float32]) -> "
            "Tensor[(8,), float32] {\n"
            "  %0 = exp(%p0);\n"
            "  %1 = sqrt(%0);\n"
            "  %2 = negative(%0);\n"
            "  %3 = add(%1, %2);\n"
            "  %4 = nn.relu(%3);\n"
            "  %4\n"
            "}\n");
}

TEST(FuseOps, ValueUsedByTheResultAndInsideStaysAGroupBoundary) {
  // exp's value leaves through the result tuple, so it cannot disappear into add's group.
  Var x = MakeVar("x", TensorType({8}, kF32));
  Expr e = MakeCall("exp", {x}, {}, "e");
  Expr out = MakeTuple({e, MakeCall("add", {e, x}, {}, "a")});
  EXPECT_EQ(Fused(MakeFunction({x}, out)),
            "def @main fn (%x: Tensor[(8,), float32]) -> (Tensor[(8,), float32], Tensor[(8,), "
            "float32]) {\n"
            "  %0 = @fused_exp(%x) /* e */;\n"
            "  %1 = @fused_add(%0, %x) /* a */;\n"
            "  %2 = (%0, %1);\n"
            "  %2\n"
            "}\n"
            "@fused_exp = fn (%p0: Tensor[(8,), float32]) -> Tensor[(8,), float32] {\n"
            "  %0 = exp(%p0) /* e */;\n"
            "  %0\n"
            "}\n"
            "@fused_add = fn (%p0: Tensor[(8,), float32], %p1: Tensor[(8,), float32]) -> "
            "Tensor[(8,), float32] {\n"
            "  %0 = add(%p0, %p1) /* a */;\n"
            "  %0\n"
            "}\n");
}

// A chain of n unary calls on x; the names of the groups FuseOps makes, in order.
std::vector<std::string> ChainGroups(int n, int max_group_size) {
  Var x = MakeVar("x", TensorType({8}, kF32));
  Expr value = x;
  for (int i = 0; i < n; ++i) value = MakeCall(i % 2 ? "exp" : "nn.relu", {value});
  IRModule fused = FuseOps(max_group_size).run(IRModule::FromFunction(MakeFunction({x}, value)));
  std::vector<std::string> names;
  PostOrderVisit(fused.main()->body, [&](const Expr& e) {
    const auto* call = e.as<CallNode>();
    if (call && call->callee.defined()) {  // not the calls inside the fused functions
      names.push_back(call->callee.as<FunctionNode>()->attrs.GetString("name"));
    }
  });
  return names;
}

TEST(FuseOps, GroupsRespectTheSizeLimit) {
  using Names = std::vector<std::string>;
  EXPECT_EQ(ChainGroups(5, 256), Names{"fused_nn_relu_exp_nn_relu_exp_nn_relu"});
  EXPECT_EQ(ChainGroups(5, 2), (Names{"fused_nn_relu_exp", "fused_nn_relu_exp", "fused_nn_relu"}));
  EXPECT_EQ(ChainGroups(3, 1), (Names{"fused_nn_relu", "fused_exp", "fused_nn_relu"}));
  EXPECT_NE(ErrorOf([] { FuseOps(0); }).find("max_group_size must be at least 1"),
            std::string::npos);
}

TEST(FuseOps, OpaqueOperatorsStayAlone) {
  Var x = MakeVar("x", TensorType({2, 8}, kF32));
  Expr soft = MakeCall("nn.softmax", {MakeCall("nn.relu", {x})}, {{"axis", int64_t{1}}});
  std::string text = Fused(MakeFunction({x}, MakeCall("exp", {soft})));
  EXPECT_NE(text.find("  %0 = @fused_nn_relu(%x);\n"
                      "  %1 = @fused_nn_softmax(%0);\n"
                      "  %2 = @fused_exp(%1);\n"),
            std::string::npos)
      << text;
}

TEST(FuseOps, ReductionAbsorbsTheInjectiveOperatorsBeforeIt) {
  Var x = MakeVar("x", TensorType({2, 8}, kF32));
  Expr reshaped = MakeCall("reshape", {MakeCall("exp", {x})}, {{"newshape", Ints{4, 4}}});
  Expr sum = MakeCall("sum", {reshaped}, {{"axis", Ints{1}}});
  std::string text = Fused(MakeFunction({x}, MakeCall("nn.relu", {sum})));
  // The relu after the reduction starts a kernel of its own.
  EXPECT_NE(text.find("  %0 = @fused_exp_reshape_sum(%x);\n"
                      "  %1 = @fused_nn_relu(%0);\n"),
            std::string::npos)
      << text;
}

TEST(FuseOps, AnInjectiveCallAfterAnEpilogueIsAKernelOfItsOwn) {
  // conv -> relu -> flatten -> dense -> relu: once conv2d has fused into its relu, the group
  // is an epilogue of conv2d's schedule, which computes the conv's shape: flatten stays
  // out; nor does it fuse into the dense that reads it.
  Var x = MakeVar("x", TensorType({1, 2, 4, 4}, kF32));
  Expr conv =
      MakeCall("nn.relu", {MakeCall("nn.conv2d", {x, RandomConstant({3, 2, 3, 3}, "w", 7)})});
  Expr flat = MakeCall("flatten", {conv}, {{"axis", int64_t{1}}});
  Expr dense = MakeCall("nn.dense", {flat, RandomConstant({5, 12}, "fc", 7)});
  std::string text = Fused(MakeFunction({x}, MakeCall("nn.relu", {dense})));
  EXPECT_NE(text.find("  %0 = @fused_nn_conv2d_nn_relu(%x, meta[Constant 'w' "), std::string::npos)
      << text;
  EXPECT_NE(text.find("  %1 = @fused_flatten(%0);\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  %2 = @fused_nn_dense_nn_relu(%1, meta[Constant 'fc' "), std::string::npos)
      << text;
}

TEST(FuseOps, TwoConvolutionsNeverShareAGroup) {
  // relu(conv1) + conv2: the add joins one convolution's epilogue, the other stays apart.
  Var x = MakeVar("x", TensorType({1, 2, 4, 4}, kF32));
  Expr a = MakeCall("nn.relu", {MakeCall("nn.conv2d", {x, RandomConstant({2, 2, 1, 1}, "w1", 7)})});
  Expr b = MakeCall("nn.conv2d", {x, RandomConstant({2, 2, 1, 1}, "w2", 7)});
  std::string text = Fused(MakeFunction({x}, MakeCall("add", {a, b})));
  EXPECT_NE(text.find("  %0 = @fused_nn_conv2d(%x, meta[Constant 'w2' "), std::string::npos)
      << text;
  EXPECT_NE(text.find("  %1 = @fused_nn_conv2d_nn_relu_add(%x, meta[Constant 'w1' Tensor[(2, 2, "
                      "1, 1), float32]], %0);"),
            std::string::npos)
      << text;
}

// The primitive functions' names in a fused module's text, in order.
std::vector<std::string> GroupNames(const std::string& text) {
  std::vector<std::string> names;
  for (size_t at = text.find("\n@"); at != std::string::npos; at = text.find("\n@", at + 1)) {
    names.push_back(text.substr(at + 2, text.find(' ', at + 2) - at - 2));
  }
  return names;
}

// A dequantization (uint8 -> float32, same shape) joins its producer's epilogue when its
// consumer is an anchor, which takes no producer; before an elementwise consumer it stays
// with the consumer, so the producer writes 8 bits.
TEST(FuseOps, AConversionJoinsItsProducerOnlyBeforeAnAnchor) {
  const DataType u8 = DataType::UInt(8);
  auto quantized_conv = [&](const Expr& x, const std::string& name) {
    Expr conv = MakeCall("nn.conv2d", {x, RandomConstant({4, 4, 1, 1}, name + ".w", 3)}, {}, name);
    Expr q = MakeCall("cast", {conv}, {{"dtype", std::string("uint8")}});
    Expr scale = MakeConstant(test::ArrayOf({}, kF32, {0.5}));
    Expr zero = MakeConstant(test::ArrayOf({}, u8, {3}));
    return MakeCall("qnn.dequantize", {q, scale, zero}, {}, name + ".dq");
  };
  Var x = MakeVar("x", TensorType({1, 4, 5, 5}, kF32));
  Expr first = quantized_conv(x, "a");
  Expr anchor_after =
      MakeCall("nn.conv2d", {first, RandomConstant({4, 4, 1, 1}, "c.w", 4)}, {}, "c");
  EXPECT_EQ(GroupNames(Fused(MakeFunction({x}, anchor_after))),
            (std::vector<std::string>{"fused_nn_conv2d_cast_qnn_dequantize", "fused_nn_conv2d"}));
  Expr sum = MakeCall("add", {quantized_conv(x, "d"), x}, {}, "sum");
  EXPECT_EQ(GroupNames(Fused(MakeFunction({x}, sum))),
            (std::vector<std::string>{"fused_nn_conv2d_cast", "fused_qnn_dequantize_add"}));
}

TEST(FuseOps, TuplesAndProjectionsStayBetweenGroups) {
  // split's tuple result makes it a kernel of its own; its projections, and a tuple the
  // graph builds and projects, are values between groups (exp's output leaves through one,
  // so exp stays apart from the add that also reads it); add fuses into concatenate.
  Var x = MakeVar("x", TensorType({4, 6}, kF32));
  Expr r = MakeCall("nn.relu", {x});
  Expr pieces = MakeCall("split", {r}, {{"indices_or_sections", Ints{2}}, {"axis", int64_t{1}}});
  Expr e = MakeCall("exp", {MakeTupleGetItem(pieces, 0)});
  Expr pair = MakeTuple({e, r});
  Expr sum = MakeCall("add", {MakeTupleGetItem(pair, 0), MakeTupleGetItem(pieces, 1)});
  Expr joined = MakeCall("concatenate", {sum, e}, {{"axis", int64_t{0}}});
  Function main = MakeFunction({x}, MakeTuple({joined, MakeCall("sum", {r}, {{"axis", Ints{1}}})}));
  std::string text = Fused(main);
  EXPECT_NE(text.find("  %0 = @fused_nn_relu(%x);\n"
                      "  %1 = @fused_split(%0);\n"
                      "  %2 = %1.0;\n"
                      "  %3 = @fused_exp(%2);\n"
                      "  %4 = (%3, %0);\n"
                      "  %5 = %4.0;\n"
                      "  %6 = %1.1;\n"
                      "  %7 = @fused_add_concatenate(%5, %6, %3);\n"
                      "  %8 = @fused_sum(%0);\n"
                      "  %9 = (%7, %8);\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("@fused_split = fn (%p0: Tensor[(4, 6), float32]) -> (Tensor[(4, 3), "
                      "float32], Tensor[(4, 3), float32]) {\n"
                      "  %0 = split(%p0, axis=1, indices_or_sections=[2]);\n"),
            std::string::npos)
      << text;
}

TEST(FuseOps, ConstantsBecomeParametersOncePerGroup) {
  Var x = MakeVar("x", TensorType({4}, kF32));
  Constant c = RandomConstant({4}, "c", 7);
  Expr out = MakeCall("multiply", {MakeCall("add", {x, c}), c});
  IRModule fused = FuseOps().run(IRModule::FromFunction(MakeFunction({x}, out)));
  const auto* call = fused.main()->body.as<CallNode>();
  ASSERT_NE(call, nullptr);
  ASSERT_EQ(call->args.size(), 2u);
  EXPECT_TRUE(call->args[1].same_as(c));
  EXPECT_EQ(call->callee.as<FunctionNode>()->params.size(), 2u);
}

}  // namespace
}  // namespace loom::graph
