// TabulateByteFunctions: a QDQ GELU of a uint8 or int8 tensor (erf between quantizations)
// becomes a lookup in a table of its 256 values, with exactly the results of the chain on
// every value of the type, interpreted and compiled (FoldConstant computing the table); a
// chain without a costly operator, and one with a second non-constant input, stay.
#include "compile_test_models.h"
#include "pass_test_util.h"

namespace loom::graph::test {
namespace {

const DataType kU8 = DataType::UInt(8), kI8 = DataType::Int(8), kF32 = DataType::Float(32);

Expr Scalar(DataType t, double value) { return MakeConstant(ArrayOf({}, t, {value})); }

// QuantizeLinear as the ONNX importer writes it (the zero point a cast of its constant, which
// FoldConstant folds later).
Expr Quantize(const Expr& x, double scale, DataType t, double zero_point) {
  Expr q = MakeCall("round", {MakeCall("divide", {x, Scalar(kF32, scale)})});
  q = MakeCall("add", {q, MakeCall("cast", {Scalar(t, zero_point)},
                                   {{"dtype", std::string("float32")}})});
  const double low = t.is_uint() ? 0 : -128, high = t.is_uint() ? 255 : 127;
  q = MakeCall("clip", {q}, {{"a_min", low}, {"a_max", high}});
  return MakeCall("cast", {q}, {{"dtype", t.str()}});
}

Expr Dequantize(const Expr& q, double scale, double zero_point) {
  return MakeCall("qnn.dequantize", {q, Scalar(kF32, scale), Scalar(q.type().dtype(), zero_point)});
}

// x * 0.5 * (1 + erf(x / sqrt(2))), each operator's result quantized and dequantized again.
Expr QuantizedGelu(const Expr& q, DataType t, double zero_point) {
  Expr x = Dequantize(q, 0.05, zero_point);
  auto qdq = [&](const Expr& v, double scale) {
    return Dequantize(Quantize(v, scale, t, zero_point), scale, zero_point);
  };
  Expr scaled = qdq(MakeCall("divide", {x, Scalar(kF32, 1.4142135)}), 0.04);
  Expr erf = qdq(MakeCall("erf", {scaled}), 0.008);
  Expr shifted = qdq(MakeCall("add", {erf, Scalar(kF32, 1.0)}), 0.008);
  Expr product = qdq(MakeCall("multiply", {x, shifted}), 0.1);
  return Quantize(MakeCall("multiply", {product, Scalar(kF32, 0.5)}), 0.05, t, zero_point);
}

// Every value of the type, in a [2, 128] tensor.
runtime::NDArray EveryValue(DataType t) {
  runtime::NDArray all = runtime::NDArray::Empty({2, 128}, t);
  for (int64_t i = 0; i < 256; ++i) SetValue(all, i, t.is_uint() ? double(i) : double(i - 128));
  return all;
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(TabulateByteFunctions, AQuantizedGeluIsATableOfItsValues) {
  for (const auto& [t, zero_point] : {std::pair{kU8, 100.0}, std::pair{kI8, -20.0}}) {
    SCOPED_TRACE(t.str());
    Var q = MakeVar("q", TensorType({2, 128}, t));
    Function before = MakeFunction({q}, QuantizedGelu(q, t, zero_point));
    Function after = RunPass(TabulateByteFunctions(), before);
    const std::string text = ToText(after);
    // The whole chain, from q to the last quantization, is one lookup.
    const auto* lookup = after->body.as<CallNode>();
    ASSERT_TRUE(lookup != nullptr && lookup->op->name == "take") << text;
    // The chain is left only in the table's expression (on the constant of every value).
    EXPECT_TRUE(Has(text, "erf(meta[Constant") || Has(text, "byte_values")) << text;
    std::vector<runtime::NDArray> inputs = {EveryValue(t)};
    ExpectSameResults(before, after, inputs, 0);
    // Compiled: the table computed by FoldConstant with the target's kernels; the chain
    // compiled as one fused kernel may round differently only where fma contracts.
    CompiledModel compiled = Compile(IRModule::FromFunction(before), {.opt_level = 3});
    bool erf_kernel = false;
    for (const std::string& kernel : compiled.kernel_names) erf_kernel |= Has(kernel, "erf");
    EXPECT_FALSE(erf_kernel) << "the table is a constant";
    runtime::NDArray got = models::RunModel(MakeGraphModel(compiled), inputs).at(0);
    runtime::NDArray want = Interpret(before, inputs).tensor;
    for (int64_t i = 0; i < want.NumElements(); ++i) {
      EXPECT_LE(std::abs(GetInt(got, i) - GetInt(want, i)), 1) << "value " << i;
    }
  }
}

TEST(TabulateByteFunctions, CheapOrMixedChainsStay) {
  Var q = MakeVar("q", TensorType({4, 8}, kU8));
  // A requantization alone: no costly operator.
  Function requantize = MakeFunction({q}, Quantize(Dequantize(q, 0.05, 3), 0.07, kU8, 9));
  EXPECT_FALSE(Has(ToText(RunPass(TabulateByteFunctions(), requantize)), "take("));
  // erf of the sum of two tensors: two sources.
  Var r = MakeVar("r", TensorType({4, 8}, kU8));
  Expr sum = MakeCall("add", {Dequantize(q, 0.05, 3), Dequantize(r, 0.05, 3)});
  Function mixed = MakeFunction({q, r}, MakeCall("erf", {sum}));
  EXPECT_FALSE(Has(ToText(RunPass(TabulateByteFunctions(), mixed)), "take("));
  // A float result read by a product: the table holds floats, and the product reads it.
  Var w = MakeVar("w", TensorType({8, 8}, kF32));
  Expr sigmoid = MakeCall("sigmoid", {Dequantize(q, 0.05, 3)});
  Function read = MakeFunction({q, w}, MakeCall("nn.matmul", {sigmoid, w}));
  Function tabulated = RunPass(TabulateByteFunctions(), read);
  EXPECT_TRUE(Has(ToText(tabulated), "take(")) << ToText(tabulated);
  ExpectSameResults(read, tabulated, 0);
}

}  // namespace
}  // namespace loom::graph::test
