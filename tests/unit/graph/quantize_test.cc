// QuantizeInt8: the calibrated ranges, scales and zero points of each layer's data, its
// per-channel weight scales, and the quantized model compiled (the int8 kernels where the CPU
// has VNNI) against the float model; the errors of calibration without samples or a model
// without a layer to quantize.
#include "loom/graph/quantize.h"

#include <cmath>
#include <limits>

#include "compile_test_models.h"
#include "pass_test_util.h"
#include "quantize_test_samples.h"

namespace loom::graph::test {
namespace {

const DataType kF32 = DataType::Float(32);

// conv2d (8 -> 16 channels, 3x3, pad 1) -> relu -> flatten -> dense (16 * 6 * 6 -> 10).
Function ConvDenseModel() {
  Var x = MakeVar("x", TensorType({1, 8, 6, 6}, kF32));
  Expr conv = MakeCall("nn.conv2d", {x, RandomConstant({16, 8, 3, 3}, "conv.w", 1, -0.5, 0.5)},
                       {{"padding", Ints{1, 1, 1, 1}}}, "conv");
  Expr relu = MakeCall("nn.relu", {conv});
  Expr flat = MakeCall("reshape", {relu}, {{"newshape", Ints{1, 16 * 6 * 6}}});
  Expr dense = MakeCall("nn.dense", {flat, RandomConstant({10, 16 * 6 * 6}, "fc.w", 2, -0.1, 0.1)},
                        {}, "fc");
  return MakeFunction({x}, dense);
}

TEST(QuantizeInt8, CalibratesEachLayerAndComputesCloseToFloat) {
  IRModule model = IRModule::FromFunction(ConvDenseModel());
  QuantizeReport report;
  IRModule quantized = QuantizeInt8(model, Samples(4), {}, &report);
  EXPECT_EQ(report.samples, 4);
  ASSERT_EQ(report.layers.size(), 2u);
  const QuantizedLayer& conv = report.layers[0];
  EXPECT_EQ(conv.name, "conv");
  EXPECT_EQ(conv.op, "nn.conv2d");
  EXPECT_EQ(conv.data_min, -1);
  EXPECT_EQ(conv.data_max, 3);
  // [-1, 3] over 255 steps, zero at round(1 / (4 / 255)) = 64.
  EXPECT_FLOAT_EQ(conv.data_scale, static_cast<float>(4.0 / 255.0));
  EXPECT_EQ(conv.data_zero_point, 64);
  // Rounding to 255 steps costs well under a percent of values of this size.
  EXPECT_GT(conv.data_error, 0);
  EXPECT_LT(conv.data_error, 0.01);
  EXPECT_LT(conv.weight_error, 0.01);
  const QuantizedLayer& fc = report.layers[1];
  EXPECT_EQ(fc.data_min, 0);  // after the ReLU
  EXPECT_EQ(fc.data_zero_point, 0);

  const std::string text = ToText(quantized);
  EXPECT_NE(text.find("meta[Constant 'conv.weight_quantized' Tensor[(16, 8, 3, 3), int8]]"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("meta[Constant 'fc.weight_scale' Tensor[(10,), float32]]"), std::string::npos)
      << text;

  std::vector<runtime::NDArray> input = Samples(5).back();
  auto run = [&](const IRModule& module) {
    return models::RunModel(MakeGraphModel(Compile(module, {})), input).at(0);
  };
  runtime::NDArray want = run(model), got = run(quantized);
  double largest = 0, error = 0;
  for (int64_t i = 0; i < want.NumElements(); ++i) {
    largest = std::max(largest, std::fabs(GetFloat(want, i)));
    error = std::max(error, std::fabs(GetFloat(got, i) - GetFloat(want, i)));
  }
  EXPECT_LT(error, 0.03 * largest) << "int8 differs from float32 by " << error << " of " << largest;
}

TEST(QuantizeInt8, PercentileCalibrationLeavesOutliersOut) {
  IRModule model = IRModule::FromFunction(ConvDenseModel());
  std::vector<std::vector<runtime::NDArray>> samples = Samples(4);
  SetValue(samples[2][0], 7, 100);  // one outlier among 1152 values in [-1, 3]
  QuantizeReport by_max, by_percentile;
  IRModule wide_model = QuantizeInt8(model, samples, {}, &by_max);
  IRModule clipped_model =
      QuantizeInt8(model, samples, {.calibration = "percentile", .percentile = 99}, &by_percentile);
  const QuantizedLayer& wide = by_max.layers[0];
  const QuantizedLayer& clipped = by_percentile.layers[0];
  EXPECT_EQ(wide.range_max, 100);
  EXPECT_EQ(clipped.data_max, 100);  // seen, but left out: 0.5% of the values at each end
  EXPECT_GT(clipped.range_max, 2.5);
  EXPECT_LE(clipped.range_max, 3.1);
  EXPECT_LT(clipped.range_min, -0.5);
  EXPECT_GE(clipped.range_min, -1.1);
  EXPECT_LT(clipped.data_scale, wide.data_scale / 20);
  // On an input without outliers the finer steps compute closer to float32.
  std::vector<runtime::NDArray> input = Samples(5).back();
  auto run = [&](const IRModule& module) {
    return models::RunModel(MakeGraphModel(Compile(module, {})), input).at(0);
  };
  runtime::NDArray want = run(model);
  auto max_error = [&](const IRModule& module) {
    runtime::NDArray got = run(module);
    double error = 0;
    for (int64_t i = 0; i < want.NumElements(); ++i) {
      error = std::max(error, std::fabs(GetFloat(got, i) - GetFloat(want, i)));
    }
    return error;
  };
  EXPECT_LT(max_error(clipped_model), max_error(wide_model) / 4);
}

TEST(QuantizeInt8, LayersKeptInFloatStayFloat) {
  IRModule model = IRModule::FromFunction(ConvDenseModel());
  for (const std::string scheme : {"affine", "power-of-two"}) {
    SCOPED_TRACE(scheme);
    QuantizeReport report;
    IRModule quantized =
        QuantizeInt8(model, Samples(2), {.scheme = scheme, .keep_float = {"fc"}}, &report);
    ASSERT_EQ(report.layers.size(), 1u);
    EXPECT_EQ(report.layers[0].name, "conv");
    EXPECT_EQ(report.kept_float, std::vector<std::string>{"fc"});
    int float_dense = 0, quantized_conv = 0;
    PostOrderVisit(quantized.main()->body, [&](const Expr& e) {
      const auto* call = e.as<CallNode>();
      if (call == nullptr) return;
      float_dense += call->op->name == "nn.dense" && call->args[1].as<ConstantNode>() &&
                     call->args[1].type().dtype() == kF32;
      quantized_conv += call->op->name == "nn.conv2d" || call->op->name == "qnn.conv2d";
    });
    EXPECT_EQ(float_dense, 1) << ToText(quantized);
    EXPECT_EQ(quantized_conv, 1);
  }
  EXPECT_NE(ErrorOf([&] {
              QuantizeInt8(model, Samples(1), {.keep_float = {"fc1"}}, nullptr);
            }).find("no layer to quantize is named 'fc1' (to keep in float); the layers: conv, fc"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              QuantizeInt8(model, Samples(1), {.keep_float = {"fc", "conv"}}, nullptr);
            }).find("every layer to quantize is kept in float"),
            std::string::npos);
}

TEST(QuantizeInt8, AnOutlierLayerThatDoesLittleWorkIsNotWorthQuantizing) {
  auto layer = [](double data_error, double weight_error) {
    QuantizedLayer l;
    l.data_error = data_error;
    l.weight_error = weight_error;
    return l;
  };
  // Errors about 1% but for layers 4-6; the median 1.08%. Layer 4 (8%, 1% of the work) is
  // not worth quantizing; as large an error with a large share of the work (layer 5), or an
  // error under 4x the median (layer 6, 1.9%), keeps a layer quantized.
  std::vector<QuantizedLayer> layers = {layer(0.008, 0.006), layer(0.009, 0.005),
                                        layer(0.01, 0.004),  layer(0.01, 0.003),
                                        layer(0.08, 0.004),  layer(0.08, 0.004),
                                        layer(0.001, 0.019)};
  EXPECT_EQ(LayersNotWorthQuantizing(layers, {1000, 1000, 1000, 1000, 50, 1000, 50}),
            (std::vector<bool>{false, false, false, false, true, false, false}));
  // An outlier whose error is too small to notice (1.5% against a median of 0.1%) stays
  // quantized.
  std::vector<QuantizedLayer> precise = {layer(0.001, 0), layer(0.001, 0), layer(0.001, 0),
                                         layer(0.015, 0)};
  EXPECT_EQ(LayersNotWorthQuantizing(precise, {1000, 1000, 1000, 10}),
            (std::vector<bool>{false, false, false, false}));
}

TEST(QuantizeInt8, LayersNotWorthQuantizingStayFloatUnlessAsked) {
  // The conv as ConvDenseModel's; a dense layer of a twentieth of its work on a second input
  // whose values are within [-1, 1] but one: 255 steps over [-1, 60] round the rest coarsely
  // (about 7% against the conv's 0.3%).
  Var x = MakeVar("x", TensorType({1, 8, 6, 6}, kF32));
  Var y = MakeVar("y", TensorType({1, 2048}, kF32));
  Expr conv = MakeCall("nn.conv2d", {x, RandomConstant({16, 8, 3, 3}, "conv.w", 1, -0.5, 0.5)},
                       {{"padding", Ints{1, 1, 1, 1}}}, "conv");
  Expr side =
      MakeCall("nn.dense", {y, RandomConstant({1, 2048}, "side.w", 2, -0.1, 0.1)}, {}, "side");
  IRModule model = IRModule::FromFunction(MakeFunction({x, y}, MakeTuple({conv, side})));
  std::vector<std::vector<runtime::NDArray>> samples = Samples(2);
  for (size_t s = 0; s < samples.size(); ++s) {
    runtime::NDArray values = RandomArray({1, 2048}, kF32, 60 + static_cast<unsigned>(s));
    if (s == 0) SetValue(values, 7, 60.0);
    samples[s].push_back(values);
  }
  QuantizeReport report;
  IRModule quantized = QuantizeInt8(model, samples, {}, &report);
  ASSERT_EQ(report.layers.size(), 1u);
  EXPECT_EQ(report.layers[0].name, "conv");
  ASSERT_EQ(report.kept_float, std::vector<std::string>{"side"});
  EXPECT_NE(report.kept_float_why[0].find("of the multiply-adds"), std::string::npos)
      << report.kept_float_why[0];
  int float_dense = 0;
  PostOrderVisit(quantized.main()->body, [&](const Expr& e) {
    const auto* call = e.as<CallNode>();
    float_dense += call != nullptr && call->op->name == "nn.dense" &&
                   call->args[1].type().dtype() == kF32 && call->args[1].as<ConstantNode>();
  });
  EXPECT_EQ(float_dense, 1) << ToText(quantized);

  QuantizeReport every;
  QuantizeInt8(model, samples, {.auto_keep_float = false}, &every);
  EXPECT_EQ(every.layers.size(), 2u);
  EXPECT_TRUE(every.kept_float.empty());
  EXPECT_GT(every.layers[1].data_error, kOutlierFactor * every.layers[0].data_error);
}

TEST(QuantizeInt8, ErrorsSayWhatIsMissing) {
  IRModule model = IRModule::FromFunction(ConvDenseModel());
  EXPECT_NE(ErrorOf([&] {
              QuantizeInt8(model, {}, {}, nullptr);
            }).find("calibration needs at least one sample"),
            std::string::npos);
  Var x = MakeVar("x", TensorType({1, 4}, kF32));
  IRModule no_layers = IRModule::FromFunction(MakeFunction({x}, MakeCall("nn.relu", {x})));
  runtime::NDArray sample = RandomArray({1, 4}, kF32, 1);
  EXPECT_NE(ErrorOf([&] {
              QuantizeInt8(no_layers, {{sample}}, {}, nullptr);
            }).find("the model has no layer to quantize"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              QuantizeInt8(model, Samples(1), {.calibration = "entropy"}, nullptr);
            }).find("unknown calibration method 'entropy'; the methods are max and percentile"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              QuantizeInt8(model, Samples(1), {.calibration = "percentile", .percentile = 0},
                           nullptr);
            }).find("the percentile must be in (0, 100], got 0"),
            std::string::npos);
  std::vector<std::vector<runtime::NDArray>> overflowing = Samples(2);
  SetValue(overflowing[1][0], 5, std::numeric_limits<double>::infinity());
  EXPECT_NE(ErrorOf([&] { QuantizeInt8(model, overflowing, {}, nullptr); })
                .find("the data of layer 'conv' takes an infinite or NaN value"),
            std::string::npos);
  // A weight that cannot be scaled.
  Var y = MakeVar("y", TensorType({1, 4}, kF32));
  runtime::NDArray infinite = RandomArray({3, 4}, kF32, 2);
  SetValue(infinite, 5, std::numeric_limits<double>::infinity());
  IRModule bad_weight = IRModule::FromFunction(
      MakeFunction({y}, MakeCall("nn.dense", {y, MakeConstant(infinite)}, {}, "fc")));
  EXPECT_NE(ErrorOf([&] {
              QuantizeInt8(bad_weight, {{RandomArray({1, 4}, kF32, 3)}}, {}, nullptr);
            }).find("the weight of layer 'fc' holds an infinite or NaN value"),
            std::string::npos);
  // A sample of another shape: the executor's error names the input.
  runtime::NDArray wrong = RandomArray({1, 8, 6, 5}, kF32, 1);
  EXPECT_NE(ErrorOf([&] { QuantizeInt8(model, {{wrong}}, {}, nullptr); }).find("'x'"),
            std::string::npos);
}

}  // namespace
}  // namespace loom::graph::test
