// The quantization converters (ops_quant.cc): rounding half to even and saturation, a
// per-channel QLinearConv bit-exact against an integer reference written here from the ONNX
// specification, and the errors for bad quantization parameters.
#include <gtest/gtest.h>

#include <cmath>

#include "onnx_test_util.h"

namespace loom::frontend::onnx::test {
namespace {

const DataType kI8 = DataType::Int(8);
const DataType kU8 = DataType::UInt(8);
const DataType kI32 = DataType::Int(32);

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// x / scale rounds half to even, then saturates to int8 (ONNX QuantizeLinear).
TEST(OnnxQuantizeLinear, RoundsHalfToEvenAndSaturates) {
  runtime::NDArray x = ArrayOf({8}, kF32, {2.5, 3.5, -2.5, -3.5, 0.49, 1000, -1000, 7.0});
  ModelBuilder model(19);
  model.Input("x", {8})
      .Initializer("scale", ArrayOf({}, kF32, {1.0}))
      .Initializer("zero", ArrayOf({}, kI8, {1}))
      .Node("QuantizeLinear", {"x", "scale", "zero"}, {"q"})
      .Output("q");
  ExpectOutputs(model, {x}, {ArrayOf({8}, kI8, {3, 5, -1, -3, 1, 127, -128, 8})});
}

// Dequantized per channel (axis 1), then quantized back per tensor to uint8.
TEST(OnnxQuantizeLinear, PerAxisDequantizeAndPerTensorQuantize) {
  runtime::NDArray q = ArrayOf({1, 2, 2}, kI8, {-3, 10, 100, -100});
  ModelBuilder model(19);
  model.Input("q", {1, 2, 2}, kI8)
      .Initializer("scale", ArrayOf({2}, kF32, {0.5, 2.0}))
      .Initializer("zero", ArrayOf({2}, kI8, {1, -2}))
      .Node("DequantizeLinear", {"q", "scale", "zero"}, {"x"}, {IntAttr("axis", 1)})
      .Initializer("out_scale", ArrayOf({}, kF32, {0.5}))
      .Initializer("out_zero", ArrayOf({}, kU8, {128}))
      .Node("QuantizeLinear", {"x", "out_scale", "out_zero"}, {"y"})
      .Output("x")
      .Output("y");
  // x = (q - zero) * scale: -2, 4.5 (channel 0); 204, -196 (channel 1).
  ExpectOutputs(model, {q},
                {ArrayOf({1, 2, 2}, kF32, {-2, 4.5, 204, -196}),
                 ArrayOf({1, 2, 2}, kU8, {124, 137, 255, 0})});
}

// Blocks of 2 along axis 1 of 5 columns: 3 scales per row, the last block one column wide.
TEST(OnnxQuantizeLinear, BlockedScalesCoverAPartialLastBlock) {
  runtime::NDArray q = ArrayOf({2, 5}, kI8, {1, 2, 3, 4, 5, -1, -2, -3, -4, -5});
  ModelBuilder model(21);
  model.Input("q", {2, 5}, kI8)
      .Initializer("scale", ArrayOf({2, 3}, kF32, {1, 10, 100, 2, 20, 200}))
      .Node("DequantizeLinear", {"q", "scale"}, {"x"},
            {IntAttr("axis", 1), IntAttr("block_size", 2)})
      .Output("x");
  ExpectOutputs(model, {q}, {ArrayOf({2, 5}, kF32, {1, 2, 30, 40, 500, -2, -4, -60, -80, -1000})});
}

// A per-channel QLinearConv (uint8 data, int8 weights with one scale and zero point per output
// channel, an int32 bias, padding and stride) against the integer reference: the exact int32
// sum, times x_scale * w_scale[k] / y_scale in float32, rounded half to even, plus the output's
// zero point, saturated.
TEST(OnnxQLinearConv, PerChannelMatchesTheIntegerReference) {
  const int64_t C = 3, K = 4, H = 6, W = 5, R = 3;
  runtime::NDArray x = RandomArray({1, C, H, W}, kU8, 1);
  runtime::NDArray w = RandomArray({K, C, R, R}, kI8, 2);
  runtime::NDArray bias = RandomArray({K}, kI32, 3);
  const float x_scale = 0.02f, y_scale = 0.5f;
  const std::vector<double> w_scale = {0.01, 0.03, 0.005, 0.02}, w_zero = {0, 3, -2, 1};
  const int x_zero = 5, y_zero = 10;
  ModelBuilder model(13);
  model.Input("x", {1, C, H, W}, kU8)
      .Initializer("x_scale", ArrayOf({}, kF32, {x_scale}))
      .Initializer("x_zero", ArrayOf({}, kU8, {double(x_zero)}))
      .Initializer("w", w)
      .Initializer("w_scale", ArrayOf({K}, kF32, w_scale))
      .Initializer("w_zero", ArrayOf({K}, kI8, w_zero))
      .Initializer("y_scale", ArrayOf({}, kF32, {y_scale}))
      .Initializer("y_zero", ArrayOf({}, kU8, {double(y_zero)}))
      .Initializer("bias", bias)
      .Node("QLinearConv",
            {"x", "x_scale", "x_zero", "w", "w_scale", "w_zero", "y_scale", "y_zero", "bias"},
            {"y"}, {IntsAttr("pads", {1, 1, 1, 1}), IntsAttr("strides", {2, 1})})
      .Output("y");
  const int64_t P = (H + 2 - R) / 2 + 1, Q = W;
  std::vector<double> expected;
  for (int64_t k = 0; k < K; ++k) {
    const float multiplier =
        x_scale * static_cast<float>(w_scale[size_t(k)]) / y_scale;  // float32, as ONNX's
    for (int64_t p = 0; p < P; ++p) {
      for (int64_t q = 0; q < Q; ++q) {
        int64_t sum = static_cast<int64_t>(GetFloat(bias, k));
        for (int64_t c = 0; c < C; ++c) {
          for (int64_t r = 0; r < R; ++r) {
            for (int64_t s = 0; s < R; ++s) {
              const int64_t h = p * 2 - 1 + r, v = q - 1 + s;
              if (h < 0 || h >= H || v < 0 || v >= W) continue;  // padded with the zero point
              const int64_t xv = static_cast<int64_t>(GetFloat(x, (c * H + h) * W + v)) - x_zero;
              const int64_t wv = static_cast<int64_t>(GetFloat(w, ((k * C + c) * R + r) * R + s)) -
                                 static_cast<int64_t>(w_zero[size_t(k)]);
              sum += xv * wv;
            }
          }
        }
        const float scaled = static_cast<float>(sum) * multiplier;
        const double rounded = std::nearbyint(scaled) + y_zero;
        expected.push_back(std::min(255.0, std::max(0.0, rounded)));
      }
    }
  }
  ExpectOutputs(model, {x}, {ArrayOf({1, K, P, Q}, kU8, expected)});
}

// MatMulInteger with a zero point per row of A and one per column of B: (a - a_zero[i]) .
// (b - b_zero[j]) in int32.
TEST(OnnxMatMulInteger, ZeroPointsPerRowAndPerColumn) {
  runtime::NDArray a = RandomArray({3, 4}, kU8, 4), b = RandomArray({4, 2}, kI8, 5);
  const std::vector<double> a_zero = {1, 7, 200}, b_zero = {-3, 5};
  ModelBuilder model(13);
  model.Input("a", {3, 4}, kU8)
      .Input("b", {4, 2}, kI8)
      .Initializer("a_zero", ArrayOf({3}, kU8, a_zero))
      .Initializer("b_zero", ArrayOf({2}, kI8, b_zero))
      .Node("MatMulInteger", {"a", "b", "a_zero", "b_zero"}, {"y"})
      .Output("y");
  std::vector<double> expected;
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 2; ++j) {
      double sum = 0;
      for (int64_t k = 0; k < 4; ++k) {
        sum += (GetFloat(a, i * 4 + k) - a_zero[size_t(i)]) *
               (GetFloat(b, k * 2 + j) - b_zero[size_t(j)]);
      }
      expected.push_back(sum);
    }
  }
  ExpectOutputs(model, {a, b}, {ArrayOf({3, 2}, kI32, expected)});
}

TEST(OnnxQuantization, BadParametersAreErrorsNamingTheNode) {
  auto quantize = [](const runtime::NDArray& scale, const runtime::NDArray& zero,
                     std::vector<::onnx::AttributeProto> attrs = {}) {
    ModelBuilder model(19);
    model.Input("x", {2, 3})
        .Initializer("scale", scale)
        .Initializer("zero", zero)
        .Node("QuantizeLinear", {"x", "scale", "zero"}, {"q"}, attrs, "quant")
        .Output("q");
    return ErrorOf([&] { model.Import(); });
  };
  std::string error = quantize(ArrayOf({}, kF32, {0.0}), ArrayOf({}, kU8, {0}));
  EXPECT_TRUE(Contains(error, "node 'quant' (QuantizeLinear)")) << error;
  EXPECT_TRUE(Contains(error,
                       "input 1 ('scale'), a scale, holds 0.000000; scales must be "
                       "positive and finite"))
      << error;
  EXPECT_TRUE(Contains(quantize(ArrayOf({}, kF32, {-1.0}), ArrayOf({}, kU8, {0})),
                       "scales must be positive and finite"));
  // Per axis 1 needs 3 values, one per slice.
  error = quantize(ArrayOf({2}, kF32, {1, 1}), ArrayOf({2}, kU8, {0, 0}), {IntAttr("axis", 1)});
  EXPECT_TRUE(Contains(error,
                       "input 1 ('scale') has 2 values, but axis 1 of the tensor it "
                       "applies to has 3 slices; a per-axis parameter has one value per "
                       "slice"))
      << error;
  // The zero point of a dequantized tensor has its type.
  ModelBuilder dequantize(19);
  dequantize.Input("q", {4}, kI8)
      .Initializer("scale", ArrayOf({}, kF32, {1.0}))
      .Initializer("zero", ArrayOf({}, kU8, {3}))
      .Node("DequantizeLinear", {"q", "scale", "zero"}, {"x"}, {}, "dequant")
      .Output("x");
  error = ErrorOf([&] { dequantize.Import(); });
  EXPECT_TRUE(Contains(error,
                       "node 'dequant' (DequantizeLinear): input 2 ('zero'), the zero "
                       "point of input 0, is uint8; it must have input 0's type, int8"))
      << error;
}

}  // namespace
}  // namespace loom::frontend::onnx::test
