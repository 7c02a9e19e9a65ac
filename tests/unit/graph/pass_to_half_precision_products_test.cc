// ToHalfPrecisionProducts (--precision bf16 / fp16): which products take bfloat16 operands (conv2d
// with groups 1 and dense with constant weights, matmuls of two activations, but for the logits),
// that the two forms
// (bfloat16 kernels, and rounding by conversion) compute the same values, and that those are
// the float32 model's within bfloat16's rounding.
#include "error_of.h"
#include "loom/graph/strategy.h"
#include "pass_test_util.h"

namespace loom::graph::test {
namespace {

const DataType kF32 = DataType::Float(32);

Expr Weight(std::vector<int64_t> shape, unsigned seed) {
  return MakeConstant(RandomArray(std::move(shape), kF32, seed));
}

// x -> stem conv (reads the input) -> relu -> conv -> relu -> depthwise conv -> pool ->
// dense -> relu -> dense + bias (the logits).
Function SmallNetwork() {
  Var x = MakeVar("x", TensorType({1, 8, 6, 6}, kF32));
  Attrs same = {{"padding", Ints{1, 1, 1, 1}}};
  Expr stem = MakeCall("nn.relu", {MakeCall("nn.conv2d", {x, Weight({16, 8, 3, 3}, 1)}, same)});
  Expr middle =
      MakeCall("nn.relu", {MakeCall("nn.conv2d", {stem, Weight({16, 16, 3, 3}, 2)}, same)});
  Expr depthwise =
      MakeCall("nn.conv2d", {middle, Weight({16, 1, 3, 3}, 3)}, same.With("groups", int64_t{16}));
  Expr pooled = MakeCall("reshape", {MakeCall("nn.global_avg_pool2d", {depthwise})},
                         {{"newshape", Ints{1, 16}}});
  Expr hidden = MakeCall("nn.relu", {MakeCall("nn.dense", {pooled, Weight({32, 16}, 4)})});
  Expr logits = MakeCall("nn.bias_add",
                         {MakeCall("nn.dense", {hidden, Weight({10, 32}, 5)}), Weight({10}, 6)});
  return MakeFunction({x}, logits);
}

TEST(ToHalfPrecisionProducts, TheInnerProductsTakeBFloat16Operands) {
  Function before = SmallNetwork();
  Function after = RunPass(ToHalfPrecisionProducts(DataType::BFloat16(), /*units=*/true), before);
  const std::string text = ToText(after);
  // The stem, the middle conv and the hidden dense; not the depthwise conv or the logits.
  EXPECT_EQ(test::Occurrences(text, "out_dtype=\"float32\""), 3) << text;
  EXPECT_EQ(test::Occurrences(text, "dtype=\"bfloat16\""), 6) << text;
  // Within bfloat16's rounding (2^-9 relative per operand) grown by the sums' cancellation.
  ExpectSameResults(before, after, 5e-2);
}

TEST(ToHalfPrecisionProducts, ConversionComputesTheSameValues) {
  Function before = SmallNetwork();
  Function units = RunPass(ToHalfPrecisionProducts(DataType::BFloat16(), true), before);
  Function conversion = RunPass(ToHalfPrecisionProducts(DataType::BFloat16(), false), before);
  const std::string text = ToText(conversion);
  EXPECT_EQ(test::Occurrences(text, "out_dtype=\"float32\""), 0) << text;
  EXPECT_EQ(test::Occurrences(text, "dtype=\"bfloat16\""), 6) << text;
  EXPECT_EQ(test::Occurrences(text, "dtype=\"float32\""), 6) << text;  // each rounded operand back
  ExpectSameResults(units, conversion, 1e-5);
}

// float16: the same products, rounded to 11 significant bits (bfloat16 keeps 8), so closer
// to the float32 model; by conversion, the same values.
TEST(ToHalfPrecisionProducts, Float16OperandsAreCloserToFloat32) {
  Function before = SmallNetwork();
  Function units = RunPass(ToHalfPrecisionProducts(DataType::Float(16), true), before);
  const std::string text = ToText(units);
  EXPECT_EQ(test::Occurrences(text, "out_dtype=\"float32\""), 3) << text;
  EXPECT_EQ(test::Occurrences(text, "dtype=\"float16\""), 6) << text;
  ExpectSameResults(before, units, 1e-2);
  ExpectSameResults(RunPass(ToHalfPrecisionProducts(DataType::Float(16), false), before), units,
                    1e-5);
  EXPECT_NE(::loom::testing::ErrorOf([] {
              ToHalfPrecisionProducts(DataType::Float(32), true);
            }).find("must be bfloat16 or float16, got float32"),
            std::string::npos);
}

TEST(ToHalfPrecisionProducts, TheLogitsAloneAreUnchanged) {
  Var x = MakeVar("x", TensorType({2, 16}, kF32));
  Function before = MakeFunction({x}, MakeCall("nn.dense", {x, Weight({4, 16}, 7)}));
  EXPECT_EQ(ToText(RunPass(ToHalfPrecisionProducts(DataType::BFloat16(), true), before)),
            ToText(before));
}

// Attention: softmax(q x k^T) x v, then a dense layer (the logits). Both activation products
// take bfloat16 operands, rounded when they run.
TEST(ToHalfPrecisionProducts, ProductsOfActivationsTakeBFloat16Operands) {
  Var q = MakeVar("q", TensorType({2, 8, 16}, kF32));
  Var k = MakeVar("k", TensorType({2, 16, 8}, kF32));
  Var v = MakeVar("v", TensorType({2, 8, 16}, kF32));
  Expr scores = MakeCall("nn.softmax", {MakeCall("nn.batch_matmul", {q, k})});
  Expr context = MakeCall("nn.matmul", {scores, v});
  Function before = MakeFunction({q, k, v}, MakeCall("nn.dense", {context, Weight({4, 16}, 8)}));
  Function after = RunPass(ToHalfPrecisionProducts(DataType::BFloat16(), /*units=*/true), before);
  const std::string text = ToText(after);
  EXPECT_EQ(test::Occurrences(text, "out_dtype=\"float32\""), 2) << text;
  EXPECT_EQ(test::Occurrences(text, "dtype=\"bfloat16\""), 4) << text;
  // The same values by conversion. (Not within a tolerance of float32's: the softmax of
  // scores of random operands this large turns bfloat16's rounding into a different weighting.)
  ExpectSameResults(RunPass(ToHalfPrecisionProducts(DataType::BFloat16(), false), before), after,
                    1e-5);
}

TEST(ToHalfPrecisionProducts, X86HasBFloat16ProductsWhereTheCpuHasAmxOrAvx512Bf16) {
  EXPECT_TRUE(
      HasHalfPrecisionProducts(Target::Parse("llvm -mcpu=sapphirerapids"), DataType::BFloat16()));
  EXPECT_TRUE(
      HasHalfPrecisionProducts(Target::Parse("llvm -mcpu=cooperlake"), DataType::BFloat16()));
  EXPECT_TRUE(HasHalfPrecisionProducts(Target::Parse("llvm -mcpu=znver4"), DataType::BFloat16()));
  EXPECT_FALSE(
      HasHalfPrecisionProducts(Target::Parse("llvm -mcpu=skylake-avx512"), DataType::BFloat16()));
  EXPECT_FALSE(HasHalfPrecisionProducts(Target::Parse("c"), DataType::BFloat16()));
}

}  // namespace
}  // namespace loom::graph::test
