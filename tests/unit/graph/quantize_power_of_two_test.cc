// QuantizeInt8's power-of-two scheme: the exponents it calibrates, the integer-only form it
// realizes (no float arithmetic between the input's quantization and the output's), its
// rounding (half up, by add and shift) on a case computed here by hand, the compiled model
// (the int8 kernels of this CPU) bit for bit against every operator run alone, and its
// errors.
#include <cmath>
#include <set>

#include "compile_test_models.h"
#include "loom/graph/quantize.h"
#include "pass_test_util.h"
#include "quantize_test_samples.h"

namespace loom::graph::test {
namespace {

const DataType kF32 = DataType::Float(32);
const QuantizeOptions kPowerOfTwo{.scheme = "power-of-two"};

Expr Bias(const Expr& x, int64_t channels, unsigned seed) {
  return MakeCall(
      "add", {x, RandomConstant({channels, 1, 1}, "b" + std::to_string(seed), seed, -0.2, 0.2)});
}

// A residual block between two layers, as ResNets have them:
//   conv 8->16 3x3 + bias -> relu (r) -> conv 16->16 3x3 + bias -> add r -> relu
//   -> max pool 2x2 -> reshape -> dense 144 -> 10 + bias
Function ResidualModel() {
  Var x = MakeVar("x", TensorType({1, 8, 6, 6}, kF32));
  const Attrs pad = {{"padding", Ints{1, 1, 1, 1}}};
  Expr conv1 =
      MakeCall("nn.conv2d", {x, RandomConstant({16, 8, 3, 3}, "w1", 1, -0.5, 0.5)}, pad, "conv1");
  Expr r = MakeCall("nn.relu", {Bias(conv1, 16, 2)});
  Expr conv2 =
      MakeCall("nn.conv2d", {r, RandomConstant({16, 16, 3, 3}, "w2", 3, -0.3, 0.3)}, pad, "conv2");
  Expr block = MakeCall("nn.relu", {MakeCall("add", {Bias(conv2, 16, 4), r})});
  Expr pool =
      MakeCall("nn.max_pool2d", {block}, {{"pool_size", Ints{2, 2}}, {"strides", Ints{2, 2}}});
  Expr flat = MakeCall("reshape", {pool}, {{"newshape", Ints{1, 16 * 3 * 3}}});
  Expr dense =
      MakeCall("nn.dense", {flat, RandomConstant({10, 144}, "fc.w", 5, -0.1, 0.1)}, {}, "fc");
  return MakeFunction({x}, MakeCall("add", {dense, RandomConstant({10}, "fc.b", 6, -0.1, 0.1)}));
}

// The operators of main's body, by name, with how often each is called.
std::map<std::string, int> Operators(const IRModule& module) {
  std::map<std::string, int> ops;
  PostOrderVisit(module.main()->body, [&](const Expr& e) {
    if (const auto* call = e.as<CallNode>()) ++ops[call->op->name];
  });
  return ops;
}

TEST(QuantizePowerOfTwo, ExponentsCoverTheCalibratedRanges) {
  QuantizeReport report;
  QuantizeInt8(IRModule::FromFunction(ResidualModel()), Samples(3), kPowerOfTwo, &report);
  EXPECT_EQ(report.scheme, "power-of-two");
  ASSERT_EQ(report.layers.size(), 3u);
  // The input reaches 3: 127 * 2^-6 < 3 <= 127 * 2^-5.
  EXPECT_EQ(report.layers[0].data_scale, std::ldexp(1.0, -5));
  EXPECT_EQ(report.layers[0].data_zero_point, 0);
  for (const QuantizedLayer& layer : report.layers) {
    SCOPED_TRACE(layer.name);
    const double largest = std::max(std::fabs(layer.data_min), std::fabs(layer.data_max));
    if (layer.name != "conv2") {  // conv2 reads relu's int8 form, scaled as relu's range
      EXPECT_GE(127 * layer.data_scale, largest);
      EXPECT_LT(127 * layer.data_scale / 2, largest);
    }
    EXPECT_EQ(std::exp2(std::ilogb(layer.weight_scale)), layer.weight_scale);
    EXPECT_GT(layer.data_error, 0);
    EXPECT_LT(layer.data_error, 0.02);
    EXPECT_LT(layer.weight_error, 0.02);
  }
  // Every activation on one scale: 8 -> 2^(3 - 7).
  QuantizeOptions global = kPowerOfTwo;
  global.global_scale = 8;
  QuantizeInt8(IRModule::FromFunction(ResidualModel()), Samples(3), global, &report);
  for (const QuantizedLayer& layer : report.layers) EXPECT_EQ(layer.data_scale, 1.0 / 16);
}

TEST(QuantizePowerOfTwo, BetweenTheInputAndTheOutputAllArithmeticIsInteger) {
  IRModule quantized =
      QuantizeInt8(IRModule::FromFunction(ResidualModel()), Samples(3), kPowerOfTwo, nullptr);
  std::map<std::string, int> ops = Operators(quantized);
  // The input's quantization (multiply, round, clip) and the output's dequantization are the
  // float operators; the rest computes in int8 and int32.
  const std::set<std::string> integer_ops = {"qnn.conv2d",    "qnn.dense", "add",  "left_shift",
                                             "right_shift",   "clip",      "cast", "nn.relu",
                                             "nn.max_pool2d", "reshape"};
  for (const auto& [op, count] : ops) {
    if (op == "multiply" || op == "round" || op == "qnn.dequantize") {
      EXPECT_EQ(count, 1) << op;
    } else {
      EXPECT_TRUE(integer_ops.count(op)) << op << " in\n" << ToText(quantized);
    }
  }
  EXPECT_EQ(ops["qnn.conv2d"], 2);
  EXPECT_EQ(ops["qnn.dense"], 1);
  // The residual add shifts the block input's int8 form to the accumulator's exponent.
  EXPECT_EQ(ops["left_shift"], 1);
  // Requantized by shift: conv1's relu and the block's relu (before max pool); the logits,
  // the model's result, are dequantized from their int32 sums.
  EXPECT_EQ(ops["right_shift"], 2);
  // Every value between is int8 or int32.
  PostOrderVisit(quantized.main()->body, [&](const Expr& e) {
    const auto* call = e.as<CallNode>();
    const DataType t = e.type().dtype();
    if (call == nullptr || call->op->name == "qnn.dequantize" || call->op->name == "multiply" ||
        call->op->name == "round" || (call->op->name == "clip" && t == DataType::Float(32))) {
      return;  // the input's quantization and the output's dequantization
    }
    EXPECT_TRUE(t == DataType::Int(8) || t == DataType::Int(32))
        << call->op->name << " " << t.str();
  });
}

TEST(QuantizePowerOfTwo, CompiledMatchesEachOperatorRunAloneBitForBitAndFloatClosely) {
  IRModule model = IRModule::FromFunction(ResidualModel());
  IRModule quantized = QuantizeInt8(model, Samples(4), kPowerOfTwo, nullptr);
  for (unsigned seed : {5u, 6u}) {
    std::vector<runtime::NDArray> input = Samples(static_cast<int>(seed)).back();
    runtime::NDArray got = models::RunModel(MakeGraphModel(Compile(quantized, {})), input).at(0);
    runtime::NDArray want = models::Reference(quantized.main(), input).at(0);
    ExpectClose(got, Values(want), 0, "compiled against the operators alone");
    runtime::NDArray real = models::RunModel(MakeGraphModel(Compile(model, {})), input).at(0);
    double largest = 0, error = 0;
    for (int64_t i = 0; i < real.NumElements(); ++i) {
      largest = std::max(largest, std::fabs(GetFloat(real, i)));
      error = std::max(error, std::fabs(GetFloat(got, i) - GetFloat(real, i)));
    }
    EXPECT_LT(error, 0.06 * largest)
        << "int8 differs from float32 by " << error << " of " << largest;
  }
}

// y = 0.5 x + 2^-8 on x = k / 64: the weight is 64 * 2^-7, x is k at 2^-6, the bias 32 at the
// product's 2^-13, and y (its range a little over 0.5) is requantized to 2^-7 for the max
// pooling after by (64 k + 32 + 32) >> 6 = k + 1: y = (k + 1/2) * 2^-7 lies halfway, and
// rounds up, negative k alike (round half to even would give k for even k).
TEST(QuantizePowerOfTwo, RequantizationRoundsHalfUp) {
  Var x = MakeVar("x", TensorType({1, 1, 1, 11}, kF32));
  runtime::NDArray half = runtime::NDArray::Empty({1, 1, 1, 1}, kF32);
  SetValue(half, 0, 0.5);
  runtime::NDArray bias = runtime::NDArray::Empty({1, 1, 1}, kF32);
  SetValue(bias, 0, 1.0 / 256);
  Expr y = MakeCall("add", {MakeCall("nn.conv2d", {x, MakeConstant(half)}), MakeConstant(bias)});
  Expr pooled = MakeCall("nn.max_pool2d", {y}, {{"pool_size", Ints{1, 1}}});
  IRModule module = IRModule::FromFunction(MakeFunction({x}, pooled));
  runtime::NDArray input = runtime::NDArray::Empty({1, 1, 1, 11}, kF32);
  for (int k = -5; k <= 4; ++k) SetValue(input, k + 5, k / 64.0);
  SetValue(input, 10, 1.0);  // k = 64: the range reaches 1
  QuantizeReport report;
  IRModule quantized = QuantizeInt8(module, {{input}}, kPowerOfTwo, &report);
  EXPECT_EQ(report.layers[0].data_scale, 1.0 / 64);
  EXPECT_EQ(report.layers[0].weight_scale, 1.0 / 128);
  runtime::NDArray got = models::RunModel(MakeGraphModel(Compile(quantized, {})), {input}).at(0);
  for (int k = -5; k <= 4; ++k) {
    EXPECT_EQ(GetFloat(got, k + 5), (k + 1) / 128.0) << "k = " << k;
  }
  EXPECT_EQ(GetFloat(got, 10), 65 / 128.0);
}

TEST(QuantizePowerOfTwo, ErrorsSayWhatDoesNotFit) {
  IRModule model = IRModule::FromFunction(ResidualModel());
  auto error_with = [&](const QuantizeOptions& options) {
    return ErrorOf([&] { QuantizeInt8(model, Samples(1), options, nullptr); });
  };
  EXPECT_NE(error_with({.scheme = "log"}).find("unknown scheme 'log'"), std::string::npos);
  EXPECT_NE(error_with({.scheme = "power-of-two", .global_scale = 6})
                .find("the global scale must be a power of two (such as 4, 8 or 16), got 6"),
            std::string::npos);
  EXPECT_NE(error_with({.global_scale = 8}).find("a global scale is for the power-of-two scheme"),
            std::string::npos);
  // A residual add of values 2^40 apart: the smaller one's exponent is too fine to shift the
  // other to in int32.
  Var x = MakeVar("x", TensorType({1, 8, 6, 6}, kF32));
  Expr tiny =
      MakeCall("nn.conv2d", {x, RandomConstant({8, 8, 1, 1}, "w", 1, -1e-12, 1e-12)}, {}, "tiny");
  Expr plain = MakeCall("nn.conv2d", {x, RandomConstant({8, 8, 1, 1}, "v", 2, -1, 1)}, {}, "plain");
  IRModule far_apart =
      IRModule::FromFunction(MakeFunction({x}, MakeCall("add", {tiny, plain}, {}, "residual")));
  EXPECT_NE(ErrorOf([&] {
              QuantizeInt8(far_apart, Samples(1), kPowerOfTwo, nullptr);
            }).find("adding 'residual' in int8/int32 takes a shift of -"),
            std::string::npos);
}

}  // namespace
}  // namespace loom::graph::test
