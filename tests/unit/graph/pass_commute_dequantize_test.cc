// CommuteDequantize: max pooling of a dequantized tensor pools the integers (padding
// included) and dequantizes after, with exactly the same results; per-channel
// dequantization stays where it is.
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
