// WidenFloat16: a float16 network computes in float32 (every operator but cast and the
// tuple-result ones reads widened operands and rounds a float16 result back), gives the
// float32 network's results within float16's rounding, and a float32 network is unchanged.
#include "pass_test_util.h"

namespace loom::graph::test {
namespace {

const DataType kF16 = DataType::Float(16);
const DataType kF32 = DataType::Float(32);

Expr Weight(std::vector<int64_t> shape, DataType dtype, unsigned seed) {
  runtime::NDArray weight = RandomArray(shape, kF32, seed);
  for (int64_t i = 0; i < weight.NumElements(); ++i) {
    SetValue(weight, i, GetFloat(weight, i) / 8);  // activations of order one
  }
  runtime::NDArray typed = runtime::NDArray::Empty(shape, dtype);
  for (int64_t i = 0; i < weight.NumElements(); ++i) SetValue(typed, i, GetFloat(weight, i));
  return MakeConstant(typed);
}

// x -> conv -> relu -> split in two along the channels -> the first half's softmax over the
// flattened rest, in `dtype` throughout.
Function SmallNetwork(DataType dtype) {
  Var x = MakeVar("x", TensorType({1, 4, 6, 6}, dtype));
  Expr conv = MakeCall("nn.relu", {MakeCall("nn.conv2d", {x, Weight({8, 4, 3, 3}, dtype, 1)},
                                            {{"padding", Ints{1, 1, 1, 1}}})});
  Expr halves = MakeCall("split", {conv}, {{"indices_or_sections", Ints{2}}, {"axis", int64_t{1}}});
  Expr flat = MakeCall("reshape", {MakeTupleGetItem(halves, 0)}, {{"newshape", Ints{1, 144}}});
  return MakeFunction({x}, MakeCall("nn.softmax", {flat}));
}

TEST(WidenFloat16, OperatorsComputeInFloat32AndRoundTheirResults) {
  Function after = RunPass(WidenFloat16(), SmallNetwork(kF16));
  const std::string text = ToText(after);
  // Widened: conv2d's two operands, relu's, reshape's and softmax's; split is left as it is.
  EXPECT_EQ(Occurrences(text, "dtype=\"float32\""), 5) << text;
  // Rounded back: the results of conv2d, relu, reshape and softmax.
  EXPECT_EQ(Occurrences(text, "dtype=\"float16\""), 4) << text;
  EXPECT_EQ(after->body.type().dtype(), kF16);
  EXPECT_EQ(after->params[0].type().dtype(), kF16);
}

TEST(WidenFloat16, ComputesTheFloat32NetworkWithinFloat16Rounding) {
  Function widened = RunPass(WidenFloat16(), SmallNetwork(kF16));
  runtime::NDArray x32 = RandomArray({1, 4, 6, 6}, kF32, 9);
  runtime::NDArray x16 = runtime::NDArray::Empty({1, 4, 6, 6}, kF16);
  for (int64_t i = 0; i < x32.NumElements(); ++i) {
    SetValue(x16, i, GetFloat(x32, i));
    SetValue(x32, i, GetFloat(x16, i));  // the same inputs
  }
  Value got = Interpret(widened, {x16});
  Value want = Interpret(SmallNetwork(kF32), {x32});
  // float16 keeps 11 significant bits: each rounding is within 2^-11 relative.
  ExpectCloseValues(got, want, 4e-3, "float16 network");
}

TEST(WidenFloat16, BFloat16NetworksComputeInFloat32Too) {
  const DataType bf16 = DataType::BFloat16();
  Function after = RunPass(WidenFloat16(), SmallNetwork(bf16));
  const std::string text = ToText(after);
  EXPECT_EQ(Occurrences(text, "dtype=\"float32\""), 5) << text;
  EXPECT_EQ(Occurrences(text, "dtype=\"bfloat16\""), 4) << text;
  EXPECT_EQ(after->body.type().dtype(), bf16);
}

TEST(WidenFloat16, AFloat32NetworkIsUnchanged) {
  Function before = SmallNetwork(kF32);
  EXPECT_EQ(ToText(RunPass(WidenFloat16(), before)), ToText(before));
}

}  // namespace
}  // namespace loom::graph::test
