// AlterOpLayout: golden text of the rewrite (conv blocks with a bias, a ReLU and a residual
// add; transforms that meet; a conv before flatten and dense; the algorithm chosen per
// layer; channel concatenations kept blocked or given NCHW back; output channels padded
// to whole vectors), nothing changed off AVX-512, and the rewritten graph computing what
// the original does, every call compiled alone or the whole graph at -O3 against -O0.
#include <gtest/gtest.h>

#include "loom/graph/compile.h"
#include "loom/runtime/graph_executor.h"
#include "pass_test_util.h"

namespace loom::graph {
namespace {

using test::RandomConstant;

const DataType kF32 = DataType::Float(32);
const Target kAvx512 = Target::Parse("llvm -mcpu=skylake-avx512");

Function Rewrite(const Function& f, const Target& target = kAvx512) {
  return test::RunPass(AlterOpLayout(target), f);
}

Attrs ConvAttrs(int64_t pad, int64_t groups = 1, int64_t stride = 1) {
  return {
      {"strides", Ints{stride, stride}}, {"padding", Ints{pad, pad, pad, pad}}, {"groups", groups}};
}

// x -> conv3x3 + bias -> relu -> conv3x3, + the relu (a residual block's shape).
Function ResidualBlock() {
  Var x = MakeVar("x", TensorType({1, 16, 8, 8}, kF32));
  Call conv1 =
      MakeCall("nn.conv2d", {x, RandomConstant({32, 16, 3, 3}, "w1", 1)}, ConvAttrs(1), "conv1");
  Call biased = MakeCall("add", {conv1, RandomConstant({32, 1, 1}, "b1", 2)});
  Call relu = MakeCall("nn.relu", {biased});
  Call conv2 =
      MakeCall("nn.conv2d", {relu, RandomConstant({32, 32, 3, 3}, "w2", 3)}, ConvAttrs(1), "conv2");
  return MakeFunction({x}, MakeCall("add", {conv2, relu}));
}

TEST(GraphAlterOpLayout, ResidualBlockIsBlockedBetweenOneTransformInAndOut) {
  EXPECT_EQ(ToText(Rewrite(ResidualBlock())),
            R"TXT(fn (%x: Tensor[(1, 16, 8, 8), float32]) -> Tensor[(1, 32, 8, 8), float32] {
  %0 = layout_transform(%x, dst_layout="NCHW16c", src_layout="NCHW");
  %1 = layout_transform(meta[Constant 'w1' Tensor[(32, 16, 3, 3), float32]], dst_layout="OIHW16i16o", src_layout="OIHW");
  %2 = nn.contrib_conv2d_nchwc(%0, %1, dilation=[1, 1], groups=1, oc_tile=2, padding=[1, 1, 1, 1], reg_h=1, reg_w=8, row_tiles_per_task=1, strides=[1, 1], unroll_kw=0) /* conv1 */;
  %3 = layout_transform(meta[Constant 'b1' Tensor[(32, 1, 1), float32]], dst_layout="NCHW16c", src_layout="CHW");
  %4 = add(%2, %3);
  %5 = nn.relu(%4);
  %6 = layout_transform(meta[Constant 'w2' Tensor[(32, 32, 3, 3), float32]], dst_layout="OIHW16i16o", src_layout="OIHW");
  %7 = nn.contrib_conv2d_nchwc(%5, %6, dilation=[1, 1], groups=1, oc_tile=2, padding=[1, 1, 1, 1], reg_h=1, reg_w=8, row_tiles_per_task=1, strides=[1, 1], unroll_kw=0) /* conv2 */;
  %8 = add(%7, %5);
  %9 = layout_transform(%8, dst_layout="NCHW", src_layout="NCHW16c");
  %9
}
)TXT");
}

TEST(GraphAlterOpLayout, TransformsThatMeetCancelOrMerge) {
  Var x = MakeVar("x", TensorType({1, 2, 4, 4, 16}, kF32));
  auto transform = [](const Expr& e, const std::string& src, const std::string& dst) {
    return MakeCall("layout_transform", {e}, {{"src_layout", src}, {"dst_layout", dst}});
  };
  Expr nchw = transform(x, "NCHW16c", "NCHW");
  Function cancel = MakeFunction({x}, transform(MakeCall("nn.relu", {nchw}), "NCHW", "NCHW16c"));
  EXPECT_EQ(ToText(Rewrite(cancel)),
            R"TXT(fn (%x: Tensor[(1, 2, 4, 4, 16), float32]) -> Tensor[(1, 2, 4, 4, 16), float32] {
  %0 = nn.relu(%x);
  %0
}
)TXT");
  Var y = MakeVar("y", TensorType({1, 4, 4, 4, 8}, kF32));
  Function merge = MakeFunction({y}, transform(transform(y, "NCHW8c", "NCHW"), "NCHW", "NCHW16c"));
  EXPECT_EQ(ToText(Rewrite(merge)),
            R"TXT(fn (%y: Tensor[(1, 4, 4, 4, 8), float32]) -> Tensor[(1, 2, 4, 4, 16), float32] {
  %0 = layout_transform(%y, dst_layout="NCHW16c", src_layout="NCHW8c");
  %0
}
)TXT");
}

// The dense layer after it takes its constant weight packed into column panels.
TEST(GraphAlterOpLayout, FlattenGetsNCHWBack) {
  Var x = MakeVar("x", TensorType({1, 16, 4, 4}, kF32));
  Call conv = MakeCall("nn.conv2d", {x, RandomConstant({16, 16, 1, 1}, "w", 4)}, ConvAttrs(0));
  Call relu = MakeCall("nn.relu", {conv});
  Call flat = MakeCall("flatten", {relu});
  Function f = MakeFunction({x}, MakeCall("nn.dense", {flat, RandomConstant({10, 256}, "fc", 5)}));
  EXPECT_EQ(ToText(Rewrite(f)),
            R"TXT(fn (%x: Tensor[(1, 16, 4, 4), float32]) -> Tensor[(1, 10), float32] {
  %0 = layout_transform(%x, dst_layout="NCHW16c", src_layout="NCHW");
  %1 = layout_transform(meta[Constant 'w' Tensor[(16, 16, 1, 1), float32]], dst_layout="OIHW16i16o", src_layout="OIHW");
  %2 = nn.contrib_conv2d_nchwc(%0, %1, dilation=[1, 1], groups=1, oc_tile=1, padding=[0, 0, 0, 0], reg_h=4, reg_w=4, row_tiles_per_task=1, strides=[1, 1], unroll_kw=0);
  %3 = nn.relu(%2);
  %4 = layout_transform(%3, dst_layout="NCHW", src_layout="NCHW16c");
  %5 = flatten(%4, axis=1);
  %6 = nn.contrib_dense_pack(meta[Constant 'fc' Tensor[(10, 256), float32]], tile_columns=16);
  %7 = nn.contrib_dense_packed(%5, %6, block_bytes=1048576, block_columns=16, k_unroll=8, tile_rows=1, units=10);
  %7
}
)TXT");
}

// A graph through every rewrite: Winograd, bias_add, pooling, depthwise, a per-channel
// multiply, blocks of 12, global pooling, flatten and dense.
Function EveryRewrite() {
  Var x = MakeVar("x", TensorType({1, 16, 16, 16}, kF32));
  Call conv1 = MakeCall("nn.conv2d", {x, RandomConstant({32, 16, 3, 3}, "w1", 11)}, ConvAttrs(1),
                        "winograd");
  Call biased = MakeCall("nn.bias_add", {conv1, RandomConstant({32}, "b1", 12)});
  Call relu = MakeCall("nn.relu", {biased});
  Call pool =
      MakeCall("nn.max_pool2d", {relu}, {{"pool_size", Ints{2, 2}}, {"strides", Ints{2, 2}}});
  Call dw = MakeCall("nn.conv2d", {pool, RandomConstant({32, 1, 3, 3}, "w2", 13)}, ConvAttrs(1, 32),
                     "depthwise");
  Call scaled = MakeCall("multiply", {dw, RandomConstant({1, 32, 1, 1}, "s", 14)});
  Call conv3 = MakeCall("nn.conv2d", {scaled, RandomConstant({24, 32, 1, 1}, "w3", 15)},
                        ConvAttrs(0), "pointwise");
  Call conv4 = MakeCall("nn.conv2d", {conv3, RandomConstant({24, 24, 3, 3}, "w4", 16)},
                        ConvAttrs(1, 1, 2), "strided");
  Call gap = MakeCall("nn.global_avg_pool2d", {MakeCall("nn.relu", {conv4})});
  Call flat = MakeCall("flatten", {gap});
  return MakeFunction({x}, MakeCall("nn.dense", {flat, RandomConstant({10, 24}, "fc", 17)}));
}

TEST(GraphAlterOpLayout, EachLayerGetsItsKernel) {
  EXPECT_EQ(ToText(Rewrite(EveryRewrite())),
            R"TXT(fn (%x: Tensor[(1, 16, 16, 16), float32]) -> Tensor[(1, 10), float32] {
  %0 = layout_transform(%x, dst_layout="NCHW16c", src_layout="NCHW");
  %1 = nn.contrib_conv2d_winograd_weight_transform(meta[Constant 'w1' Tensor[(32, 16, 3, 3), float32]]);
  %2 = nn.contrib_conv2d_winograd_nchwc(%0, %1, dilation=[1, 1], fuse_tile_rows=1, gemm_columns=32, gemm_rows=4, gemm_unroll=4, oc_bn=16, padding=[1, 1, 1, 1], strides=[1, 1]) /* winograd */;
  %3 = layout_transform(meta[Constant 'b1' Tensor[(32,), float32]], dst_layout="NCHW16c", src_layout="C");
  %4 = add(%2, %3);
  %5 = nn.relu(%4);
  %6 = nn.max_pool2d(%5, ceil_mode=0, dilation=[1, 1], layout="NCHW16c", padding=[0, 0, 0, 0], pool_size=[2, 2], strides=[2, 2]);
  %7 = layout_transform(meta[Constant 'w2' Tensor[(32, 1, 3, 3), float32]], dst_layout="OIHW1i16o", src_layout="OIHW");
  %8 = nn.contrib_depthwise_conv2d_nchwc(%6, %7, dilation=[1, 1], oc_tile=1, padding=[1, 1, 1, 1], reg_h=1, reg_w=8, row_tiles_per_task=1, strides=[1, 1], unroll_kw=0) /* depthwise */;
  %9 = layout_transform(meta[Constant 's' Tensor[(1, 32, 1, 1), float32]], dst_layout="NCHW16c", src_layout="NCHW");
  %10 = multiply(%8, %9);
  %11 = layout_transform(meta[Constant 'w3' Tensor[(24, 32, 1, 1), float32]], dst_layout="OIHW16i12o", src_layout="OIHW");
  %12 = nn.contrib_conv2d_nchwc(%10, %11, dilation=[1, 1], groups=1, oc_tile=2, padding=[0, 0, 0, 0], reg_h=1, reg_w=8, row_tiles_per_task=1, strides=[1, 1], unroll_kw=0) /* pointwise */;
  %13 = layout_transform(meta[Constant 'w4' Tensor[(24, 24, 3, 3), float32]], dst_layout="OIHW12i12o", src_layout="OIHW");
  %14 = nn.contrib_conv2d_nchwc(%12, %13, dilation=[1, 1], groups=1, oc_tile=2, padding=[1, 1, 1, 1], reg_h=2, reg_w=4, row_tiles_per_task=1, strides=[2, 2], unroll_kw=0) /* strided */;
  %15 = nn.relu(%14);
  %16 = nn.global_avg_pool2d(%15, layout="NCHW12c");
  %17 = layout_transform(%16, dst_layout="NCHW", src_layout="NCHW12c");
  %18 = flatten(%17, axis=1);
  %19 = nn.contrib_dense_pack(meta[Constant 'fc' Tensor[(10, 24), float32]], tile_columns=16);
  %20 = nn.contrib_dense_packed(%18, %19, block_bytes=1048576, block_columns=16, k_unroll=8, tile_rows=1, units=10);
  %20
}
)TXT");
}

TEST(GraphAlterOpLayout, RewrittenGraphsComputeTheOriginal) {
  for (const Function& original : {ResidualBlock(), EveryRewrite()}) {
    Function rewritten = Rewrite(original);
    ASSERT_FALSE(rewritten.same_as(original));
    // Sums of up to 288 products of values in [-4, 4), layers deep; Winograd's transforms
    // round a little more.
    test::ExpectSameResults(original, rewritten, 1e-3);
  }
}

// Dense layers with constant weights become the packed-panel GEMM: rows from leading
// dimensions (a [2, 3, 40] activation, as a transformer's), widths that are not whole
// panels (70, 5), a folded weight expression (W * 2), and a bias epilogue; a weight that
// is a model input stays nn.dense.
TEST(GraphAlterOpLayout, DenseLayersTakePackedWeights) {
  Var x = MakeVar("x", TensorType({2, 3, 40}, kF32));
  Expr scaled = MakeCall("multiply", {RandomConstant({70, 40}, "fc1", 21),
                                      MakeConstant(test::ArrayOf({1}, kF32, {2.0}), "two")});
  Expr h = MakeCall("nn.relu", {MakeCall("nn.dense", {x, scaled})});
  h = MakeCall("add", {h, RandomConstant({70}, "b1", 22)});
  Expr out = MakeCall("nn.dense", {h, RandomConstant({5, 70}, "fc2", 23)});
  Function f = MakeFunction({x}, out);
  Function rewritten = Rewrite(f);
  int packed = 0;
  PostOrderVisit(rewritten, [&](const Expr& e) {
    const auto* call = e.as<CallNode>();
    packed += call && call->op->name == "nn.contrib_dense_packed";
    EXPECT_FALSE(call && call->op->name == "nn.dense") << ToText(rewritten);
  });
  EXPECT_EQ(packed, 2);
  test::ExpectSameResults(f, rewritten, 1e-4);
  Var w2 = MakeVar("w", TensorType({5, 40}, kF32));
  Function unchanged = MakeFunction({x, w2}, MakeCall("nn.dense", {x, w2}));
  EXPECT_TRUE(Rewrite(unchanged).same_as(unchanged));
}

// Channel counts no block of 16 divides (3, 17, 10, 24: blocks of 3, 1, 10 and 12), odd
// sizes, asymmetric padding, unequal strides and dilations, a strided depthwise conv, two
// convs of different blocks added, and a per-channel scale.
TEST(GraphAlterOpLayout, OddChannelsPaddingStridesAndDilationsComputeTheOriginal) {
  auto conv = [](const Expr& x, int64_t k, int64_t c, int64_t r, Ints strides, Ints pads,
                 Ints dilation, int64_t groups, unsigned seed) {
    return MakeCall("nn.conv2d", {x, RandomConstant({k, c / groups, r, r}, "w", seed)},
                    {{"strides", strides}, {"padding", pads}, {"dilation", dilation},
                     {"groups", groups}});
  };
  Var x = MakeVar("x", TensorType({1, 3, 15, 13}, kF32));
  Expr stem = MakeCall("nn.relu", {conv(x, 17, 3, 7, {2, 2}, {3, 2, 1, 3}, {1, 1}, 1, 1)});
  Expr dilated = conv(stem, 10, 17, 3, {1, 2}, {0, 1, 2, 1}, {2, 1}, 1, 2);
  Expr depthwise = conv(dilated, 10, 10, 3, {2, 1}, {1, 0, 0, 1}, {1, 1}, 10, 3);
  Expr sum = MakeCall("add", {conv(depthwise, 24, 10, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, 4),
                              conv(depthwise, 24, 10, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, 5)});
  Function original =
      MakeFunction({x}, MakeCall("multiply", {sum, RandomConstant({24, 1, 1}, "s", 6)}));
  Function rewritten = Rewrite(original);
  std::string text = ToText(rewritten);
  for (const char* kernel : {"nn.contrib_conv2d_nchwc(", "nn.contrib_depthwise_conv2d_nchwc("}) {
    EXPECT_NE(text.find(kernel), std::string::npos) << text;
  }
  EXPECT_EQ(text.find("nn.conv2d("), std::string::npos) << text;
  test::ExpectSameResults(original, rewritten, 1e-3);
}

Call ConvRelu(const Expr& x, int64_t out_channels, int64_t in_channels, int64_t size,
              unsigned seed) {
  Expr weight = RandomConstant({out_channels, in_channels, size, size}, "w", seed);
  return MakeCall("nn.relu", {MakeCall("nn.conv2d", {x, weight}, ConvAttrs(size / 2))});
}

// A SqueezeNet Fire module: a 1x1 squeeze conv, 1x1 and 3x3 expand convs of its output
// joined along the channels (`axis` 1 or -3), then a 2x2 max pool.
Function FireModule(int64_t axis) {
  Var x = MakeVar("x", TensorType({1, 32, 8, 8}, kF32));
  Call squeeze = ConvRelu(x, 16, 32, 1, 31);
  Call joined = MakeCall("concatenate",
                         {ConvRelu(squeeze, 32, 16, 1, 32), ConvRelu(squeeze, 32, 16, 3, 33)},
                         {{"axis", axis}});
  return MakeFunction({x}, MakeCall("nn.max_pool2d", {joined}, {{"pool_size", Ints{2, 2}},
                                                                {"strides", Ints{2, 2}}}));
}

TEST(GraphAlterOpLayout, ChannelConcatOfOneBlockedLayoutStaysBlocked) {
  EXPECT_EQ(ToText(Rewrite(FireModule(-3))),
            R"TXT(fn (%x: Tensor[(1, 32, 8, 8), float32]) -> Tensor[(1, 64, 4, 4), float32] {
  %0 = layout_transform(%x, dst_layout="NCHW16c", src_layout="NCHW");
  %1 = layout_transform(meta[Constant 'w' Tensor[(16, 32, 1, 1), float32]], dst_layout="OIHW16i16o", src_layout="OIHW");
  %2 = nn.contrib_conv2d_nchwc(%0, %1, dilation=[1, 1], groups=1, oc_tile=1, padding=[0, 0, 0, 0], reg_h=2, reg_w=8, row_tiles_per_task=1, strides=[1, 1], unroll_kw=0);
  %3 = nn.relu(%2);
  %4 = layout_transform(meta[Constant 'w' Tensor[(32, 16, 1, 1), float32]], dst_layout="OIHW16i16o", src_layout="OIHW");
  %5 = nn.contrib_conv2d_nchwc(%3, %4, dilation=[1, 1], groups=1, oc_tile=2, padding=[0, 0, 0, 0], reg_h=1, reg_w=8, row_tiles_per_task=1, strides=[1, 1], unroll_kw=0);
  %6 = nn.relu(%5);
  %7 = layout_transform(meta[Constant 'w' Tensor[(32, 16, 3, 3), float32]], dst_layout="OIHW16i16o", src_layout="OIHW");
  %8 = nn.contrib_conv2d_nchwc(%3, %7, dilation=[1, 1], groups=1, oc_tile=2, padding=[1, 1, 1, 1], reg_h=1, reg_w=8, row_tiles_per_task=1, strides=[1, 1], unroll_kw=0);
  %9 = nn.relu(%8);
  %10 = concatenate(%6, %9, axis=1);
  %11 = nn.max_pool2d(%10, ceil_mode=0, dilation=[1, 1], layout="NCHW16c", padding=[0, 0, 0, 0], pool_size=[2, 2], strides=[2, 2]);
  %12 = layout_transform(%11, dst_layout="NCHW", src_layout="NCHW16c");
  %12
}
)TXT");
}

// Two conv outputs in different blocks (16 and 12 channels: NCHW16c and NCHW12c), and a
// conv output joined with an NCHW input: each operand is given NCHW back.
TEST(GraphAlterOpLayout, ChannelConcatOfMixedLayoutsGetsNCHWBack) {
  Var x = MakeVar("x", TensorType({1, 16, 4, 4}, kF32));
  Var y = MakeVar("y", TensorType({1, 8, 4, 4}, kF32));
  Expr mixed_blocks =
      MakeCall("concatenate", {ConvRelu(x, 16, 16, 1, 41), ConvRelu(x, 12, 16, 1, 42)},
               {{"axis", int64_t{1}}});
  Expr with_input =
      MakeCall("concatenate", {ConvRelu(x, 16, 16, 3, 43), y}, {{"axis", int64_t{1}}});
  Function f = MakeFunction({x, y}, MakeTuple({mixed_blocks, with_input}));
  Function rewritten = Rewrite(f);
  EXPECT_EQ(ToText(rewritten),
            R"TXT(fn (%x: Tensor[(1, 16, 4, 4), float32], %y: Tensor[(1, 8, 4, 4), float32]) -> (Tensor[(1, 28, 4, 4), float32], Tensor[(1, 24, 4, 4), float32]) {
  %0 = layout_transform(%x, dst_layout="NCHW16c", src_layout="NCHW");
  %1 = layout_transform(meta[Constant 'w' Tensor[(16, 16, 1, 1), float32]], dst_layout="OIHW16i16o", src_layout="OIHW");
  %2 = nn.contrib_conv2d_nchwc(%0, %1, dilation=[1, 1], groups=1, oc_tile=1, padding=[0, 0, 0, 0], reg_h=4, reg_w=4, row_tiles_per_task=1, strides=[1, 1], unroll_kw=0);
  %3 = nn.relu(%2);
  %4 = layout_transform(%3, dst_layout="NCHW", src_layout="NCHW16c");
  %5 = layout_transform(meta[Constant 'w' Tensor[(12, 16, 1, 1), float32]], dst_layout="OIHW16i12o", src_layout="OIHW");
  %6 = nn.contrib_conv2d_nchwc(%0, %5, dilation=[1, 1], groups=1, oc_tile=1, padding=[0, 0, 0, 0], reg_h=4, reg_w=4, row_tiles_per_task=1, strides=[1, 1], unroll_kw=0);
  %7 = nn.relu(%6);
  %8 = layout_transform(%7, dst_layout="NCHW", src_layout="NCHW12c");
  %9 = concatenate(%4, %8, axis=1);
  %10 = layout_transform(meta[Constant 'w' Tensor[(16, 16, 3, 3), float32]], dst_layout="OIHW16i16o", src_layout="OIHW");
  %11 = nn.contrib_conv2d_nchwc(%0, %10, dilation=[1, 1], groups=1, oc_tile=1, padding=[1, 1, 1, 1], reg_h=4, reg_w=4, row_tiles_per_task=1, strides=[1, 1], unroll_kw=0);
  %12 = nn.relu(%11);
  %13 = layout_transform(%12, dst_layout="NCHW", src_layout="NCHW16c");
  %14 = concatenate(%13, %y, axis=1);
  %15 = (%9, %14);
  %15
}
)TXT");
  test::ExpectSameResults(f, rewritten, 1e-4);
}

// `f`'s outputs compiled at -O3 (blocked layouts, fused kernels) equal those at -O0 (each
// operator as written, in a kernel of its own) within `tolerance`.
void ExpectO3MatchesO0(const Function& f, double tolerance) {
  std::vector<runtime::NDArray> inputs;
  for (size_t i = 0; i < f->params.size(); ++i) {
    inputs.push_back(test::RandomOf(f->params[i].type(), 51 + static_cast<unsigned>(i)));
  }
  auto run = [&](int opt_level) {
    CompiledModel compiled = Compile(IRModule::FromFunction(f), {.opt_level = opt_level});
    runtime::GraphExecutor executor(MakeGraphModel(compiled));
    for (int i = 0; i < executor.NumInputs(); ++i) {
      executor.SetInput(executor.InputName(i), inputs.at(i));
    }
    executor.Run();
    runtime::NDArray output = executor.GetOutput(0);
    runtime::NDArray copy = runtime::NDArray::Empty(output.Shape(), output.dtype());
    copy.CopyFrom(output);
    return copy;
  };
  runtime::NDArray want = run(0);
  runtime::NDArray got = run(3);
  ASSERT_EQ(got.Shape(), want.Shape());
  test::ExpectClose(got, test::Values(want), tolerance, "-O3 against -O0");
}

// A DenseNet transition and block: a pad of rows and columns and a pool keep the blocked
// layout, and the block's concatenation of its input with a layer's output, and with a
// model input of whole blocks, stays blocked (the input converted).
TEST(GraphAlterOpLayout, SpatialPadsAndConcatsOfWholeBlocksStayBlocked) {
  Var x = MakeVar("x", TensorType({1, 16, 8, 8}, kF32));
  Var y = MakeVar("y", TensorType({1, 32, 4, 4}, kF32));
  Expr transition = MakeCall(
      "nn.avg_pool2d",
      {MakeCall("nn.pad", {ConvRelu(x, 32, 16, 1, 71)},
                {{"pad_width", Ints{0, 0, 1, 0, 0, 0, 0, 1}}})},
      {{"pool_size", Ints{2, 2}}, {"strides", Ints{2, 2}}});
  Expr joined = MakeCall("concatenate", {transition, ConvRelu(transition, 16, 32, 3, 72), y},
                         {{"axis", int64_t{1}}});
  Function original = MakeFunction({x, y}, ConvRelu(joined, 16, 80, 1, 73));
  Function rewritten = Rewrite(original);
  std::string text = ToText(rewritten);
  EXPECT_NE(text.find("pad_width=[0, 0, 1, 0, 0, 0, 0, 0, 1, 0]"), std::string::npos) << text;
  EXPECT_NE(text.find("layout_transform(%y, dst_layout=\"NCHW16c\""), std::string::npos) << text;
  // Only the inputs go in, and the result comes out.
  EXPECT_EQ(text.find("dst_layout=\"NCHW\""), text.rfind("dst_layout=\"NCHW\"")) << text;
  test::ExpectSameResults(original, rewritten, 1e-3);
  ExpectO3MatchesO0(original, 1e-3);
}

// Tolerances as for the blocks above: the 3x3 expand conv runs as Winograd.
TEST(GraphAlterOpLayout, BlockedChannelConcatComputesTheOriginal) {
  for (int64_t axis : {1, -3}) {
    Function original = FireModule(axis);
    test::ExpectSameResults(original, Rewrite(original), 1e-3);
    ExpectO3MatchesO0(original, 1e-3);
  }
}

// 40 output channels: 3 vectors of 16 after 8 zero filters, not 4 blocks of 10; the
// padding is sliced off in NCHW, before the bias and the ReLU.
Function ClassifierConv() {
  Var x = MakeVar("x", TensorType({1, 32, 5, 5}, kF32));
  Call conv = MakeCall("nn.conv2d", {x, RandomConstant({40, 32, 1, 1}, "w", 61)}, ConvAttrs(0));
  Call biased = MakeCall("nn.bias_add", {conv, RandomConstant({40}, "b", 62)});
  return MakeFunction({x}, MakeCall("nn.global_avg_pool2d", {MakeCall("nn.relu", {biased})}));
}

TEST(GraphAlterOpLayout, OutputChannelsArePaddedToWholeVectors) {
  EXPECT_EQ(ToText(Rewrite(ClassifierConv())),
            R"TXT(fn (%x: Tensor[(1, 32, 5, 5), float32]) -> Tensor[(1, 40, 1, 1), float32] {
  %0 = layout_transform(%x, dst_layout="NCHW16c", src_layout="NCHW");
  %1 = nn.pad(meta[Constant 'w' Tensor[(40, 32, 1, 1), float32]], pad_mode="constant", pad_value=0, pad_width=[0, 0, 0, 0, 8, 0, 0, 0]);
  %2 = layout_transform(%1, dst_layout="OIHW16i16o", src_layout="OIHW");
  %3 = nn.contrib_conv2d_nchwc(%0, %2, dilation=[1, 1], groups=1, oc_tile=1, padding=[0, 0, 0, 0], reg_h=5, reg_w=5, row_tiles_per_task=1, strides=[1, 1], unroll_kw=0);
  %4 = layout_transform(%3, dst_layout="NCHW", src_layout="NCHW16c");
  %5 = strided_slice(%4, axes=[1], begin=[0], end=[40], strides=[]);
  %6 = nn.bias_add(%5, meta[Constant 'b' Tensor[(40,), float32]], axis=1);
  %7 = nn.relu(%6);
  %8 = nn.global_avg_pool2d(%7, layout="NCHW");
  %8
}
)TXT");
}

// The classifier, and a 3x3 conv to 40 channels that runs as Winograd once padded to 48.
TEST(GraphAlterOpLayout, PaddedOutputChannelsComputeTheOriginal) {
  Var x = MakeVar("x", TensorType({1, 16, 16, 16}, kF32));
  Function winograd = MakeFunction({x}, ConvRelu(x, 40, 16, 3, 63));
  EXPECT_NE(ToText(Rewrite(winograd)).find("nn.contrib_conv2d_winograd_nchwc("), std::string::npos)
      << ToText(Rewrite(winograd));
  for (const Function& original : {ClassifierConv(), winograd}) {
    test::ExpectSameResults(original, Rewrite(original), 1e-3);
    ExpectO3MatchesO0(original, 1e-3);
  }
}

// Groups of at least 4 output channels get the direct kernel with a groups attribute, and
// compute what the generic grouped convolution does: 2 groups of 32 channels, 4 groups of
// 16 output channels over 8 input channels each (strided), 16 groups of 4.
TEST(GraphAlterOpLayout, GroupsOfFourChannelsOrMoreGetTheDirectKernel) {
  // Weights of [-0.25, 0.25): activations stay O(1) over three layers, so float32 rounding
  // stays far below the tolerance.
  auto Small = [](const std::vector<int64_t>& shape, const std::string& name, unsigned seed) {
    return RandomConstant(shape, name, seed, -0.25, 0.25);
  };
  Var x = MakeVar("x", TensorType({1, 64, 10, 10}, kF32));
  Expr first = MakeCall("nn.relu", {MakeCall("nn.conv2d", {x, Small({64, 32, 3, 3}, "w1", 7)},
                                              ConvAttrs(1, 2), "grouped1")});
  Expr second = MakeCall("nn.conv2d", {MakeCall("strided_slice", {first}, {{"begin", Ints{0}},
                                                                           {"end", Ints{32}},
                                                                           {"axes", Ints{1}}}),
                                       Small({64, 8, 3, 3}, "w2", 8)},
                         ConvAttrs(1, 4, 2), "grouped2");
  Expr third = MakeCall("nn.conv2d", {second, Small({64, 4, 3, 3}, "w3", 9)},
                        ConvAttrs(1, 16), "grouped3");
  Function original = MakeFunction({x}, third);
  Function rewritten = Rewrite(original);
  std::string text = ToText(rewritten);
  EXPECT_NE(text.find("nn.contrib_conv2d_nchwc(%"), std::string::npos) << text;
  for (const char* groups : {"groups=2,", "groups=4,", "groups=16,"}) {
    EXPECT_NE(text.find(groups), std::string::npos) << groups << "\n" << text;
  }
  EXPECT_EQ(text.find("nn.conv2d("), std::string::npos) << text;
  test::ExpectSameResults(original, rewritten, 1e-3);
}

TEST(GraphAlterOpLayout, ConvsWithoutAnX86KernelKeepNCHW) {
  // Eight groups of 2 output channels: narrower than a 128-bit vector.
  Var x = MakeVar("x", TensorType({1, 16, 8, 8}, kF32));
  Function grouped = MakeFunction(
      {x}, MakeCall("nn.conv2d", {x, RandomConstant({16, 2, 3, 3}, "w", 6)}, ConvAttrs(1, 8)));
  EXPECT_TRUE(Rewrite(grouped).same_as(grouped));
}

TEST(GraphAlterOpLayout, EmptyConvsKeepNCHW) {
  // A batch of none is a valid model (its kernels do nothing); the blocked kernels take
  // positive sizes only.
  Var x = MakeVar("x", TensorType({0, 16, 4, 4}, kF32));
  Function empty = MakeFunction(
      {x}, MakeCall("nn.conv2d", {x, RandomConstant({16, 16, 3, 3}, "w", 7)}, ConvAttrs(1)));
  EXPECT_TRUE(Rewrite(empty).same_as(empty));
}

TEST(GraphAlterOpLayout, GraphsWithoutConvsAreTheSameNodes) {
  Var x = MakeVar("x", TensorType({1, 16, 4, 4}, kF32));
  Call blocked =
      MakeCall("layout_transform", {x},
               {{"src_layout", std::string("NCHW")}, {"dst_layout", std::string("NCHW16c")}});
  Function f = MakeFunction({x}, MakeCall("nn.relu", {blocked}));
  EXPECT_TRUE(Rewrite(f).same_as(f));
}

// The graph of the bfloat16 tests: a 3-channel 7x7 stem, a conv of whole blocks of 32
// channels and filters, a 1x1 conv to 16 filters, a 3x3 conv of 16 channels (48 lanes
// unfolded: more than a block), a dense layer before a softmax (a product) and the logits'
// dense (float32), rounded by ToHalfPrecisionProducts.
Function BFloat16Products() {
  Var x = MakeVar("x", TensorType({1, 3, 20, 20}, kF32));
  Expr stem = MakeCall(
      "nn.relu",
      {MakeCall("nn.conv2d", {x, RandomConstant({32, 3, 7, 7}, "w1", 1)}, ConvAttrs(3, 1, 2))});
  Expr whole = MakeCall("nn.conv2d", {stem, RandomConstant({32, 32, 3, 3}, "w2", 2)}, ConvAttrs(1));
  Expr narrow =
      MakeCall("nn.conv2d", {whole, RandomConstant({16, 32, 1, 1}, "w3", 3)}, ConvAttrs(0));
  Expr wide =
      MakeCall("nn.conv2d", {narrow, RandomConstant({32, 16, 3, 3}, "w4", 4)}, ConvAttrs(1));
  Expr pooled =
      MakeCall("reshape", {MakeCall("nn.global_avg_pool2d", {wide})}, {{"newshape", Ints{1, 32}}});
  Expr hidden =
      MakeCall("nn.softmax", {MakeCall("nn.dense", {pooled, RandomConstant({24, 32}, "w5", 5)})});
  Function original =
      MakeFunction({x}, MakeCall("nn.dense", {hidden, RandomConstant({10, 24}, "w6", 6)}));
  return test::RunPass(ToHalfPrecisionProducts(DataType::BFloat16(), /*units=*/true), original);
}

// --precision bf16 on a CPU with AMX (and AVX-512 BF16): the stem on the tiles with its
// kernel columns unfolded; whole blocks of 32 channels and filters on the tiles; the 16-filter
// and 16-channel convs on vdpbf16ps; the hidden dense layer on the tiles, the logits' in
// float32; all computing what the rounded graph does.
TEST(GraphAlterOpLayout, BFloat16ProductsTakeTheAmxKernelsOrTheDpbf16Ones) {
  Function rounded = BFloat16Products();
  Function rewritten = Rewrite(rounded, Target::Parse("llvm -mcpu=sapphirerapids"));
  const std::string text = ToText(rewritten);
  EXPECT_EQ(test::Occurrences(text, "nn.contrib_unfold_columns("), 1) << text;
  EXPECT_EQ(test::Occurrences(text, "nn.contrib_conv2d_nchwc_bf16("), 2) << text;
  EXPECT_EQ(test::Occurrences(text, "nn.contrib_conv2d_nchwc_dpbf16("), 2) << text;
  EXPECT_EQ(test::Occurrences(text, "nn.contrib_conv2d_nchwc("), 0) << text;
  EXPECT_EQ(test::Occurrences(text, "nn.contrib_dense_bf16("), 1) << text;
  EXPECT_EQ(test::Occurrences(text, "nn.contrib_dense_packed("), 1) << text;
  if (!Target::Parse("llvm").HasFeature("amx-bf16")) return;  // the tiles cannot run here
  // Sums of up to 1568 products of values in [-4, 4) rounded to bfloat16, in another order.
  test::ExpectSameResults(rounded, rewritten, 2e-3);
}

// --precision bf16 on a CPU with AVX-512 BF16 and no AMX (Cooper Lake, Zen 4): every conv on
// vdpbf16ps (the stem's 3 channels padded to 4), the hidden dense layer on the packed GEMM
// of a bfloat16 weight; on a CPU with AMX bf16 but not AVX-512 BF16, the shapes the tiles do
// not take go by conversion to the float32 kernels.
TEST(GraphAlterOpLayout, BFloat16ProductsWithoutAmxTakeTheDpbf16Kernels) {
  Function rounded = BFloat16Products();
  Function rewritten = Rewrite(rounded, Target::Parse("llvm -mcpu=cooperlake"));
  std::string text = ToText(rewritten);
  EXPECT_EQ(test::Occurrences(text, "nn.contrib_conv2d_nchwc_dpbf16("), 4) << text;
  EXPECT_EQ(test::Occurrences(text, "nn.contrib_conv2d_nchwc_bf16("), 0) << text;
  EXPECT_EQ(test::Occurrences(text, "nn.contrib_dense_packed("), 2) << text;
  EXPECT_EQ(test::Occurrences(text, "nn.contrib_conv2d_dot_weight_pack("), 4) << text;

  const Target tiles_only = Target::Parse(
      "llvm -mcpu=skylake-avx512 -mattr=+amx-tile,+amx-bf16");
  ASSERT_FALSE(tiles_only.HasFeature("avx512bf16"));
  text = ToText(Rewrite(rounded, tiles_only));
  EXPECT_EQ(test::Occurrences(text, "nn.contrib_conv2d_nchwc_bf16("), 2) << text;
  EXPECT_EQ(test::Occurrences(text, "nn.contrib_conv2d_nchwc("), 2) << text;
  EXPECT_EQ(test::Occurrences(text, "nn.contrib_conv2d_nchwc_dpbf16("), 0) << text;

  if (!Target::Parse("llvm").HasFeature("avx512bf16")) return;  // vdpbf16ps cannot run here
  test::ExpectSameResults(rounded, Rewrite(rounded, Target::Parse("llvm")), 2e-3);
}

// 24 filters on a dot-product kernel take blocks of 8 (256-bit registers, where the CPU has
// AVX-512 VL) rather than padding to 32 and slicing, and the next conv reads that block as it
// is: no conversion between.
TEST(GraphAlterOpLayout, TwentyFourFiltersTakeBlocksOfEight) {
  Var x = MakeVar("x", TensorType({1, 16, 9, 9}, kF32));
  Expr narrow = MakeCall(
      "nn.relu",
      {MakeCall("nn.conv2d", {x, RandomConstant({24, 16, 1, 1}, "w1", 1)}, ConvAttrs(0))});
  Expr wide = MakeCall("nn.conv2d", {narrow, RandomConstant({32, 24, 3, 3}, "w2", 2)}, ConvAttrs(1));
  Function rounded = test::RunPass(ToHalfPrecisionProducts(DataType::BFloat16(), /*units=*/true),
                                   MakeFunction({x}, MakeCall("nn.softmax", {wide})));
  Function rewritten = Rewrite(rounded, Target::Parse("llvm -mcpu=cooperlake"));
  const std::string text = ToText(rewritten);
  EXPECT_EQ(test::Occurrences(text, "nn.contrib_conv2d_nchwc_dpbf16("), 2) << text;
  EXPECT_EQ(test::Occurrences(text, "strided_slice("), 0) << text;
  EXPECT_EQ(test::Occurrences(text, "layout_transform("), 2) << text;  // in and out only
  EXPECT_EQ(test::Occurrences(text, "oc_bn=8)"), 1) << text;  // the 24 filters
  EXPECT_EQ(test::Occurrences(text, "ic_bn=8,"), 1) << text;  // read by the next conv
  // Without AVX-512 VL (no 256-bit forms of the instructions) the filters are padded to 32.
  const Target no_vl = Target::Parse("llvm -mcpu=x86-64 -mattr=+avx512f,+avx512bf16");
  ASSERT_FALSE(no_vl.HasFeature("avx512vl"));
  const std::string padded = ToText(Rewrite(rounded, no_vl));
  EXPECT_EQ(test::Occurrences(padded, "oc_bn=8)"), 0) << padded;
  EXPECT_EQ(test::Occurrences(padded, "strided_slice("), 1) << padded;
  if (!Target::Parse("llvm").HasFeature("avx512bf16")) return;  // vdpbf16ps cannot run here
  test::ExpectSameResults(rounded, Rewrite(rounded, Target::Parse("llvm")), 2e-3);
}

// --precision bf16's products of two activations on AVX-512 BF16: equal batch dimensions and
// whole 16-column b take the dot-product kernel (b packed when it runs, a's odd K padded),
// on CPUs with AMX too; a broadcast batch stays nn.matmul, computed by conversion.
TEST(GraphAlterOpLayout, BFloat16MatmulsTakeTheDotProductKernel) {
  Var q = MakeVar("q", TensorType({2, 12, 15}, kF32));
  Var k = MakeVar("k", TensorType({2, 15, 32}, kF32));
  Var shared = MakeVar("shared", TensorType({1, 32, 16}, kF32));
  Expr scores = MakeCall("nn.softmax", {MakeCall("nn.batch_matmul", {q, k})});
  Expr broadcast = MakeCall("nn.batch_matmul", {scores, shared});
  Function rounded =
      test::RunPass(ToHalfPrecisionProducts(DataType::BFloat16(), /*units=*/true),
                    MakeFunction({q, k, shared}, MakeCall("nn.softmax", {broadcast})));
  for (const char* cpu : {"cooperlake", "sapphirerapids"}) {
    SCOPED_TRACE(cpu);
    const std::string text =
        ToText(Rewrite(rounded, Target::Parse(std::string("llvm -mcpu=") + cpu)));
    EXPECT_EQ(test::Occurrences(text, "nn.contrib_batch_matmul_dot("), 1) << text;
    EXPECT_EQ(test::Occurrences(text, "nn.contrib_batch_matmul_dot_pack("), 1) << text;
    EXPECT_EQ(test::Occurrences(text, "nn.batch_matmul("), 1) << text;
    EXPECT_EQ(test::Occurrences(text, "nn.pad("), 1) << text;  // K 15 -> 16
  }
  EXPECT_EQ(ToText(Rewrite(rounded, Target::Parse("llvm -mcpu=skylake-avx512"))),
            ToText(rounded));
  if (!Target::Parse("llvm").HasFeature("avx512bf16")) return;  // vdpbf16ps cannot run here
  test::ExpectSameResults(rounded, Rewrite(rounded, Target::Parse("llvm")), 2e-3);
}

// bf16 dense layers on AMX tiles: data [2, 48, K] keeps its shape (the GEMM tiles each
// leading index's 48 rows, and its epilogue joins it), data [16, 1, K] (a batch of single
// tokens) is one [16, K] (one-row tiles took 15x the time), and both compute what the
// rounded graph does.
TEST(GraphAlterOpLayout, AmxGemmsTileEachLeadingIndexOrFlattenFewRows) {
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{2, 48, 64}, {16, 1, 64}}) {
    SCOPED_TRACE(shape[1]);
    Var x = MakeVar("x", TensorType(shape, kF32));
    Expr dense = MakeCall("nn.dense", {x, RandomConstant({96, 64}, "w", 1)});
    Function original = MakeFunction({x}, MakeCall("nn.softmax", {dense}));
    Function rounded =
        test::RunPass(ToHalfPrecisionProducts(DataType::BFloat16(), /*units=*/true), original);
    Function rewritten = Rewrite(rounded, Target::Parse("llvm -mcpu=sapphirerapids"));
    const std::string text = ToText(rewritten);
    EXPECT_EQ(test::Occurrences(text, "nn.contrib_dense_bf16("), 1) << text;
    EXPECT_EQ(test::Occurrences(text, "reshape("), shape[1] == 1 ? 2 : 0) << text;
    if (!Target::Parse("llvm").HasFeature("amx-bf16")) continue;  // the tiles cannot run here
    test::ExpectSameResults(rounded, rewritten, 2e-3);
  }
}

// A depthwise conv after an AMX conv (NCHW32c) takes the 32-channel blocks of its data
// rather than converting it to its own 16.
TEST(GraphAlterOpLayout, DepthwiseConvsTakeTheirDatasWiderBlock) {
  Var x = MakeVar("x", TensorType({1, 32, 10, 10}, kF32));
  Expr conv = MakeCall(
      "nn.relu",
      {MakeCall("nn.conv2d", {x, RandomConstant({64, 32, 3, 3}, "w1", 1)}, ConvAttrs(1))});
  Expr depthwise =
      MakeCall("nn.conv2d", {conv, RandomConstant({64, 1, 3, 3}, "w2", 2)}, ConvAttrs(1, 64));
  Function original = MakeFunction({x}, depthwise);
  Function rounded =
      test::RunPass(ToHalfPrecisionProducts(DataType::BFloat16(), /*units=*/true), original);
  Function rewritten = Rewrite(rounded, Target::Parse("llvm -mcpu=sapphirerapids"));
  const std::string text = ToText(rewritten);
  EXPECT_EQ(test::Occurrences(text, "nn.contrib_conv2d_nchwc_bf16("), 1) << text;
  EXPECT_EQ(test::Occurrences(text, "nn.contrib_depthwise_conv2d_nchwc("), 1) << text;
  // Only the data in, the depthwise weight and the result out are converted.
  EXPECT_EQ(test::Occurrences(text, "layout_transform("), 3) << text;
  EXPECT_EQ(test::Occurrences(text, "OIHW1i32o"), 1) << text;
  EXPECT_EQ(test::Occurrences(text, "NCHW16c"), 0) << text;
  if (!Target::Parse("llvm").HasFeature("amx-bf16")) return;  // the tiles cannot run here
  test::ExpectSameResults(rounded, rewritten, 2e-3);
}

TEST(GraphAlterOpLayout, OtherTargetsKeepNCHW) {
  IRModule module = IRModule::FromFunction(ResidualBlock());
  IRModule result = AlterOpLayout(Target::Parse("llvm -mcpu=haswell")).run(module);
  EXPECT_TRUE(result.main().same_as(module.main()));
}

}  // namespace
}  // namespace loom::graph
