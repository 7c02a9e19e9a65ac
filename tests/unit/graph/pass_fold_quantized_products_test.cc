// FoldQuantizedProducts: a conv2d or dense layer of dequantized 8-bit operands becomes
// qnn.conv2d / qnn.dense times one scale per output channel, with the same results; compiled
// at -O3 (the x86 int8 kernels where the CPU has AVX-512 VNNI: channels, filters and K padded,
// int8 data shifted to uint8, the zero point's share subtracted) it agrees with the unfolded
// graph at -O1. What the pass must leave alone stays as it is.
#include "compile_test_models.h"
#include "pass_test_util.h"

namespace loom::graph::test {
namespace {

const DataType kU8 = DataType::UInt(8), kI8 = DataType::Int(8), kF32 = DataType::Float(32);

Expr Scalar(DataType t, double value) { return MakeConstant(ArrayOf({}, t, {value})); }

// Positive per-channel scales in [0.001, 0.01).
Constant ChannelScales(int64_t channels, unsigned seed) {
  return RandomConstant({channels}, "weight_scale", seed, 0.001, 0.01);
}

struct QuantizedConv {
  DataType data_type = kU8;
  int64_t data_zero_point = 0;
  std::vector<int64_t> data_shape;  // NCHW
  int64_t filters = 0;
  Attrs attrs;
  // The weight's zero points, one per filter (all zero unless given).
  std::vector<double> weight_zero_points;
};

// conv2d(dequantize(x), dequantize(w)) + a bias, x a parameter, w an int8 constant.
Function MakeQuantizedConv(const QuantizedConv& q) {
  Var x = MakeVar("x", TensorType(q.data_shape, q.data_type));
  Expr data = MakeCall("qnn.dequantize",
                       {x, Scalar(kF32, 0.05), Scalar(q.data_type, double(q.data_zero_point))});
  const int64_t groups = q.attrs.Has("groups") ? q.attrs.GetInt("groups") : 1;
  const std::vector<int64_t> shape = {q.filters, q.data_shape[1] / groups, 3, 3};
  std::vector<double> zero_points = q.weight_zero_points;
  zero_points.resize(static_cast<size_t>(q.filters), 0.0);
  Expr weight =
      MakeCall("qnn.dequantize",
               {MakeConstant(RandomArray(shape, kI8, 5), "weight"), ChannelScales(q.filters, 6),
                MakeConstant(ArrayOf({q.filters}, kI8, zero_points))},
               {{"axis", int64_t{0}}});
  Expr conv = MakeCall("nn.conv2d", {data, weight}, q.attrs, "conv");
  Expr bias = RandomConstant({q.filters, 1, 1}, "bias", 7);
  return MakeFunction({x}, MakeCall("add", {conv, bias}));
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// `before` folded computes what it does, interpreted and compiled: its `product` (conv2d or
// dense) becomes the qnn one; at -O3 on a CPU with `features` (VNNI, or AMX int8 tiles) a
// kernel named with `int8_kernel` computes it, unless that is empty (the kernels take weight
// zero point 0 only). Grouped convolutions fold where `grouped` says so.
void ExpectFoldsAndAgrees(const Function& before, const std::string& product,
                          const std::string& int8_kernel,
                          const std::vector<std::string>& features = {"avx512vnni"},
                          IntegerKernelOf grouped = nullptr) {
  Function after = RunPass(FoldQuantizedProducts(grouped), before);
  const std::string text = ToText(after);
  EXPECT_TRUE(Has(text, "qnn." + product + "(%x, meta[Constant 'weight'")) << text;
  EXPECT_FALSE(Has(text, "= nn." + product + "(")) << text;
  std::vector<runtime::NDArray> inputs = {RandomOf(before->params[0].type(), 9)};
  // The integer convolution is exact; only the float multiply and the bias round.
  ExpectSameResults(before, after, inputs, 1e-5);
  const runtime::NDArray want = Interpret(before, inputs).tensor;
  for (int level : {1, 3}) {
    CompiledModel compiled = Compile(IRModule::FromFunction(before), {.opt_level = level});
    runtime::NDArray got = models::RunModel(MakeGraphModel(compiled), inputs).at(0);
    ExpectClose(got, Values(want), 1e-5, "-O" + std::to_string(level));
    bool used = false;
    for (const std::string& kernel : compiled.kernel_names)
      used |= !int8_kernel.empty() && Has(kernel, int8_kernel);
    bool has_features = true;
    for (const std::string& feature : features) has_features &= HostTarget().HasFeature(feature);
    EXPECT_EQ(used, !int8_kernel.empty() && level == 3 && has_features) << "-O" << level;
  }
}

void ExpectFoldsAndAgrees(const QuantizedConv& q, bool int8_kernel = true) {
  ExpectFoldsAndAgrees(MakeQuantizedConv(q), "conv2d",
                       int8_kernel ? "nn_contrib_conv2d_nchwc_int8" : "");
}

// dense(dequantize(x), dequantize(w)) + a bias: x [..., 30] int8 with zero point 9, w [20,
// 30] int8 per output channel. K = 30 is padded to 32 (VNNI: a multiple of 4) for the int8
// GEMMs.
Function MakeQuantizedDense(const std::vector<int64_t>& data_shape) {
  Var x = MakeVar("x", TensorType(data_shape, kI8));
  Expr data = MakeCall("qnn.dequantize", {x, Scalar(kF32, 0.05), Scalar(kI8, 9)});
  Expr weight =
      MakeCall("qnn.dequantize",
               {MakeConstant(RandomArray({20, 30}, kI8, 5), "weight"), ChannelScales(20, 6),
                MakeConstant(ArrayOf({20}, kI8, std::vector<double>(20, 0)))},
               {{"axis", int64_t{0}}});
  Expr dense = MakeCall("nn.dense", {data, weight}, {}, "fc");
  return MakeFunction({x}, MakeCall("add", {dense, RandomConstant({20}, "bias", 7)}));
}

TEST(FoldQuantizedProducts, UnsignedDataWithAZeroPointOddChannelsAndFilters) {
  // 3 channels (padded to 4 with the zero point), 20 filters (padded to 32), a border.
  ExpectFoldsAndAgrees(
      {kU8, 131, {1, 3, 11, 9}, 20, {{"padding", Ints{1, 2, 1, 0}}, {"strides", Ints{2, 2}}}, {}});
}

TEST(FoldQuantizedProducts, SignedDataAndAUniformWeightZeroPoint) {
  // int8 data (shifted to uint8 for vpdpbusd), zero point -5.
  ExpectFoldsAndAgrees({kI8, -5, {1, 16, 8, 8}, 32, {{"padding", Ints{1, 1, 1, 1}}}, {}});
  // A weight zero point of 3 everywhere: folded; the generic integer kernel computes it.
  ExpectFoldsAndAgrees({kU8, 0, {1, 8, 6, 6}, 16, {}, std::vector<double>(16, 3.0)}, false);
}

TEST(FoldQuantizedProducts, WholeChannelBlocksTakeTheAmxKernel) {
  // 32 channels (one block), 64 filters (two output blocks), int8 data with a zero point
  // (shifted to uint8, the border padded with it), stride 2.
  ExpectFoldsAndAgrees(
      MakeQuantizedConv({kI8, 7, {1, 32, 9, 10}, 64,
                         {{"padding", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}}, {}}),
      "conv2d", "nn_contrib_conv2d_nchwc_amx_int8", {"amx-int8"});
}

TEST(FoldQuantizedProducts, DepthwiseTakesTheIntegerKernelWhereTheTargetHasOne) {
  // Folded where the target says it has a kernel (the compile asks HasIntegerKernel:
  // x86 with VNNI and VBMI), computed by vpdpbusd over the taps. 48 channels (3 blocks of
  // 16), a zero point as the border, stride 2; int8 data (shifted to uint8) whose 24
  // channels are padded to 32 with the zero point and sliced off after.
  auto always = [](const CallNode&) { return true; };
  const std::vector<std::string> features = {"avx512vnni", "avx512vbmi"};
  const std::string kernel = "nn_contrib_depthwise_conv2d_nchwc_int8";
  ExpectFoldsAndAgrees(
      MakeQuantizedConv({kU8, 131, {1, 48, 11, 9}, 48,
                         {{"groups", int64_t{48}}, {"padding", Ints{1, 1, 1, 1}},
                          {"strides", Ints{2, 2}}},
                         {}}),
      "conv2d", kernel, features, always);
  ExpectFoldsAndAgrees(
      MakeQuantizedConv(
          {kI8, -5, {1, 24, 8, 8}, 24, {{"groups", int64_t{24}}, {"padding", Ints{1, 1, 1, 1}}}, {}}),
      "conv2d", kernel, features, always);
}

TEST(FoldQuantizedProducts, DenseWithSignedDataAndKNotAMultipleOf4) {
  // The int8 GEMM subtracts the zero point's share after the product: on AMX tiles where the
  // CPU has them (rows of 5 in 2 batches; N = 20 padded to 32 and sliced off after the
  // subtraction, which stays in the GEMM's kernel), else on VNNI.
  const bool amx = HostTarget().HasFeature("amx-int8");
  ExpectFoldsAndAgrees(
      MakeQuantizedDense({2, 5, 30}), "dense",
      amx ? "nn_contrib_dense_amx_int8_subtract" : "nn_contrib_dense_packed_subtract",
      std::vector<std::string>{amx ? "amx-int8" : "avx512vnni"});
  // One row: VNNI's GEMM even where there are tiles (they would gain nothing).
  ExpectFoldsAndAgrees(MakeQuantizedDense({1, 30}), "dense", "nn_contrib_dense_packed_subtract");
}

// matmul(dequantize(a), dequantize(b)) of two parameters (activations), as a QDQ model's
// attention products.
Function MakeQuantizedMatmul(DataType a_type, int64_t a_zero, DataType b_type, int64_t b_zero,
                             const std::vector<int64_t>& a_shape,
                             const std::vector<int64_t>& b_shape) {
  Var a = MakeVar("a", TensorType(a_shape, a_type));
  Var b = MakeVar("b", TensorType(b_shape, b_type));
  Expr da = MakeCall("qnn.dequantize", {a, Scalar(kF32, 0.05), Scalar(a_type, double(a_zero))});
  Expr db = MakeCall("qnn.dequantize", {b, Scalar(kF32, 0.02), Scalar(b_type, double(b_zero))});
  return MakeFunction({a, b}, MakeCall("nn.matmul", {da, db}, {}, "scores"));
}

TEST(FoldQuantizedProducts, ProductsOfActivationsTakeTheIntegerKernel) {
  // Folded where the target has a kernel (the compile asks HasIntegerKernel: x86 with VNNI,
  // N a multiple of 16), computed by vpdpbusd with b packed when it runs and both zero
  // points' shares subtracted: uint8 operands (b shifted to int8), K = 10 padded to 12; int8
  // a (shifted to uint8) with a zero point of 0 for b. Exact in the integers.
  auto always = [](const CallNode&) { return true; };
  const bool vnni = HostTarget().HasFeature("avx512vnni");
  for (const Function& before :
       {MakeQuantizedMatmul(kU8, 131, kU8, 120, {1, 3, 20, 10}, {1, 3, 10, 32}),
        MakeQuantizedMatmul(kI8, -7, kI8, 0, {2, 9, 16}, {2, 16, 16})}) {
    Function after = RunPass(FoldQuantizedProducts(always), before);
    const std::string text = ToText(after);
    EXPECT_TRUE(Has(text, "qnn.matmul(%a, %b")) << text;
    std::vector<runtime::NDArray> inputs = {RandomOf(before->params[0].type(), 9),
                                            RandomOf(before->params[1].type(), 10)};
    ExpectSameResults(before, after, inputs, 1e-5);
    const runtime::NDArray want = Interpret(before, inputs).tensor;
    CompiledModel compiled = Compile(IRModule::FromFunction(before), {.opt_level = 3});
    runtime::NDArray got = models::RunModel(MakeGraphModel(compiled), inputs).at(0);
    ExpectClose(got, Values(want), 1e-5, "-O3");
    bool used = false;
    for (const std::string& kernel : compiled.kernel_names)
      used |= Has(kernel, "nn_contrib_batch_matmul_dot");
    EXPECT_EQ(used, vnni);
  }
  // Without a kernel (N = 20 is no multiple of 16 on x86), the product stays float.
  Function odd = MakeQuantizedMatmul(kU8, 3, kU8, 4, {1, 4, 8}, {1, 8, 20});
  CompiledModel compiled = Compile(IRModule::FromFunction(odd), {.opt_level = 3});
  for (const std::string& kernel : compiled.kernel_names)
    EXPECT_FALSE(Has(kernel, "qnn_matmul") || Has(kernel, "int8")) << kernel;
  EXPECT_TRUE(Has(ToText(RunPass(FoldQuantizedProducts(), odd)), "= nn.matmul(")) << "no predicate";
}

TEST(FoldQuantizedProducts, RequantizationMultipliesByTheReciprocal) {
  // The product's result plus biases (an add, then a bias_add), quantized (QuantizeLinear's
  // arithmetic).
  Function conv = MakeQuantizedConv({kU8, 131, {1, 3, 11, 9}, 20, {}, {}});
  Expr biased = MakeCall("nn.bias_add", {conv->body, RandomConstant({20}, "bias2", 8)});
  Expr q = MakeCall("round", {MakeCall("divide", {biased, Scalar(kF32, 0.07)})});
  q = MakeCall("clip", {MakeCall("add", {q, Scalar(kF32, 128)})},
               {{"a_min", 0.0}, {"a_max", 255.0}});
  Function before =
      MakeFunction(conv->params, MakeCall("cast", {q}, {{"dtype", std::string("uint8")}}));
  Function after = RunPass(FoldQuantizedProducts(), before);
  const std::string text = ToText(after);
  EXPECT_FALSE(Has(text, "divide(")) << text;
  EXPECT_TRUE(Has(text, "multiply(%")) << text;
  // At most one step apart, and only where the quotient sits at a .5 boundary.
  std::vector<runtime::NDArray> inputs = {RandomOf(before->params[0].type(), 9)};
  runtime::NDArray want = Interpret(before, inputs).tensor, got = Interpret(after, inputs).tensor;
  int64_t moved = 0;
  for (int64_t i = 0; i < want.NumElements(); ++i) {
    const int64_t step = std::abs(GetInt(got, i) - GetInt(want, i));
    EXPECT_LE(step, 1) << "element " << i;
    moved += step;
  }
  EXPECT_LE(moved * 100, want.NumElements()) << moved << " of " << want.NumElements() << " moved";
  // A depthwise conv of dequantized operands stays float, and is requantized alike.
  Function depthwise = MakeQuantizedConv({kU8, 3, {1, 8, 6, 6}, 8, {{"groups", int64_t{8}}}, {}});
  Expr divided = MakeCall("divide", {depthwise->body, Scalar(kF32, 0.07)});
  const std::string depthwise_text =
      ToText(RunPass(FoldQuantizedProducts(), MakeFunction(depthwise->params, divided)));
  EXPECT_TRUE(Has(depthwise_text, "= nn.conv2d(")) << depthwise_text;
  EXPECT_FALSE(Has(depthwise_text, "divide(")) << depthwise_text;
  // So is one that no kernel could take (weight zero points that differ).
  Function uneven = MakeQuantizedConv(
      {kU8, 3, {1, 8, 6, 6}, 8, {{"groups", int64_t{8}}}, {1, 2, 0, 0, 0, 0, 0, 0}});
  const std::string uneven_text = ToText(RunPass(
      FoldQuantizedProducts([](const CallNode&) { return true; }),
      MakeFunction(uneven->params, MakeCall("divide", {uneven->body, Scalar(kF32, 0.07)}))));
  EXPECT_TRUE(Has(uneven_text, "= nn.conv2d(")) << uneven_text;
  EXPECT_FALSE(Has(uneven_text, "divide(")) << uneven_text;
  // Through a ReLU6 (a clip) too, as ONNX Runtime fuses it into QLinearConv.
  Expr clipped = MakeCall("clip", {conv->body}, {{"a_min", 0.0}, {"a_max", 6.0}});
  const std::string clipped_text = ToText(RunPass(
      FoldQuantizedProducts(),
      MakeFunction(conv->params, MakeCall("divide", {clipped, Scalar(kF32, 0.07)}))));
  EXPECT_FALSE(Has(clipped_text, "divide(")) << clipped_text;
  // A division of anything else stays.
  Var x = MakeVar("x", TensorType({4}, kF32));
  Function plain = MakeFunction({x}, MakeCall("divide", {x, Scalar(kF32, 0.07)}));
  EXPECT_TRUE(Has(ToText(RunPass(FoldQuantizedProducts(), plain)), "divide("));
}

TEST(FoldQuantizedProducts, WhatItCannotFoldStays) {
  // Grouped, per-channel weight zero points that differ, a data scale that is no constant.
  Function grouped = MakeQuantizedConv({kU8, 0, {1, 8, 6, 6}, 8, {{"groups", int64_t{2}}}, {}});
  EXPECT_TRUE(Has(ToText(RunPass(FoldQuantizedProducts(), grouped)), "= nn.conv2d("));
  Function uneven = MakeQuantizedConv({kU8, 0, {1, 8, 6, 6}, 16, {}, {1, 2}});
  EXPECT_TRUE(Has(ToText(RunPass(FoldQuantizedProducts(), uneven)), "= nn.conv2d("));

  Var x = MakeVar("x", TensorType({1, 4, 5, 5}, kU8));
  Var scale = MakeVar("scale", TensorType(std::vector<int64_t>{}, kF32));
  Expr data = MakeCall("qnn.dequantize", {x, scale, Scalar(kU8, 0)});
  Expr weight = MakeCall("qnn.dequantize", {MakeConstant(RandomArray({8, 4, 3, 3}, kI8, 1)),
                                            Scalar(kF32, 0.5), Scalar(kI8, 0)});
  Function dynamic = MakeFunction({x, scale}, MakeCall("nn.conv2d", {data, weight}));
  EXPECT_TRUE(Has(ToText(RunPass(FoldQuantizedProducts(), dynamic)), "= nn.conv2d("));
}

}  // namespace
}  // namespace loom::graph::test
