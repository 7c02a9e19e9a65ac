// CommuteDequantize: max pooling of a dequantized tensor pools the integers (padding
// included) and dequantizes after, with exactly the same results; per-channel
// dequantization stays where it is. Reshapes and transposes move the integers, and a
// QuantizeLinear of a dequantized tensor with its own scale and zero point is the integers,
// exactly, on every value of the type; with another scale or zero point it stays.
#include <tuple>

#include "pass_test_util.h"

namespace loom::graph::test {
namespace {

const DataType kU8 = DataType::UInt(8), kF32 = DataType::Float(32);

Expr Scalar(DataType t, double value) { return MakeConstant(ArrayOf({}, t, {value})); }

TEST(CommuteDequantize, MaxPoolRunsOnTheIntegers) {
  Var x = MakeVar("x", TensorType({1, 3, 9, 8}, kU8));
  Expr dequantized = MakeCall("qnn.dequantize", {x, Scalar(kF32, 0.125), Scalar(kU8, 3)});
  Attrs pool = {{"pool_size", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"padding", Ints{1, 1, 1, 1}}};
  Function before = MakeFunction({x}, MakeCall("nn.max_pool2d", {dequantized}, pool, "pool"));
  Function after = RunPass(CommuteDequantize(), before);
  const std::string text = ToText(after);
  EXPECT_NE(text.find("nn.max_pool2d(%x"), std::string::npos) << text;
  EXPECT_NE(text.find("qnn.dequantize(%0"), std::string::npos) << text;
  ExpectSameResults(before, after, 0);
}

// QuantizeLinear as the ONNX importer writes it: cast(clip(round(x / s) + z)).
Expr Quantize(const Expr& x, double scale, DataType t, double zero_point) {
  Expr q = MakeCall("round", {MakeCall("divide", {x, Scalar(kF32, scale)})});
  q = MakeCall("add", {q, MakeCall("cast", {Scalar(t, zero_point)}, {{"dtype", std::string("float32")}})});
  const double low = t.is_uint() ? 0 : -128, high = t.is_uint() ? 255 : 127;
  q = MakeCall("clip", {q}, {{"a_min", low}, {"a_max", high}});
  return MakeCall("cast", {q}, {{"dtype", t.str()}});
}

TEST(CommuteDequantize, DataMovementAndRequantizationKeepTheIntegers) {
  // Every uint8 / int8 value, with scales whose products round (0.1, 0.37) and zero points.
  for (const auto& [t, scale, zero_point] :
       {std::tuple{kU8, 0.1, 128.0}, std::tuple{DataType::Int(8), 0.37, -3.0}}) {
    Var x = MakeVar("x", TensorType({1, 16, 16}, t));
    Expr dequantized = MakeCall("qnn.dequantize", {x, Scalar(kF32, scale), Scalar(t, zero_point)});
    Expr heads = MakeCall("reshape", {dequantized}, {{"newshape", Ints{1, 16, 4, 4}}});
    Expr requantized = Quantize(heads, scale, t, zero_point);
    Expr again = MakeCall("qnn.dequantize", {requantized, Scalar(kF32, scale), Scalar(t, zero_point)});
    Expr moved = MakeCall("transpose", {again}, {{"axes", Ints{0, 2, 1, 3}}});
    Function before = MakeFunction({x}, Quantize(moved, scale, t, zero_point));
    Function after = RunPass(CommuteDequantize(), before);
    const std::string text = ToText(after);
    EXPECT_EQ(text.find("divide("), std::string::npos) << text;
    EXPECT_EQ(text.find("qnn.dequantize("), std::string::npos) << text;
    runtime::NDArray all = runtime::NDArray::Empty({1, 16, 16}, t);
    for (int64_t i = 0; i < 256; ++i) SetValue(all, i, t.is_uint() ? i : i - 128);
    ExpectSameResults(before, after, {all}, 0);
  }
  // Another scale, or another zero point: a requantization, which stays.
  Var x = MakeVar("x", TensorType({4, 4}, kU8));
  Expr dequantized = MakeCall("qnn.dequantize", {x, Scalar(kF32, 0.1), Scalar(kU8, 128)});
  for (Expr other : {Quantize(dequantized, 0.2, kU8, 128), Quantize(dequantized, 0.1, kU8, 127)}) {
    const std::string text = ToText(RunPass(CommuteDequantize(), MakeFunction({x}, other)));
    EXPECT_NE(text.find("divide("), std::string::npos) << text;
  }
}

TEST(CommuteDequantize, PerChannelScalesStay) {
  Var x = MakeVar("x", TensorType({1, 3, 6, 6}, kU8));
  Expr dequantized =
      MakeCall("qnn.dequantize", {x, MakeConstant(ArrayOf({3}, kF32, {0.5, 0.25, 1})),
                                  MakeConstant(ArrayOf({3}, kU8, {0, 1, 2}))});
  Function before =
      MakeFunction({x}, MakeCall("nn.max_pool2d", {dequantized}, {{"pool_size", Ints{2, 2}}}));
  EXPECT_EQ(ToText(RunPass(CommuteDequantize(), before)), ToText(before));
}

}  // namespace
}  // namespace loom::graph::test
