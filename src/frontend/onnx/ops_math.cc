// Converters of the ONNX math operators: elementwise arithmetic, comparisons and logic,
// casts, reductions, softmax, layer normalization and matrix products (MatMul, Einsum).
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "frontend/onnx/converter.h"

namespace loom::frontend::onnx {
namespace {

using graph::Expr;
using graph::Ints;

int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t product = 1;
  for (size_t d = begin; d < end; ++d) product *= dims[d];
  return product;
}

Expr Reshape(NodeContext& ctx, Expr x, const std::vector<int64_t>& shape) {
  return ctx.Call("reshape", {std::move(x)}, {{"newshape", Ints(shape)}});
}

// Inputs 0 and 1 of a binary operator. Before opset 7 broadcasting was opt-in: with
// broadcast = 1, B's dimensions line up with A's from `axis` on (or with A's trailing ones
// without an axis, which is NumPy's rule); without it the shapes must be equal.
std::pair<Expr, Expr> BinaryOperands(NodeContext& ctx) {
  Expr a = ctx.Input(0);
  Expr b = ctx.Input(1);
  if (ctx.opset() >= 7) return {a, b};
  std::vector<int64_t> a_shape = ctx.InputShape(0);
  std::vector<int64_t> b_shape = ctx.InputShape(1);
  if (ctx.AttrInt("broadcast", 0) == 0) {
    if (a_shape != b_shape) {
      ctx.Fail("inputs of shapes " + runtime::ShapeString(a_shape) + " and " +
               runtime::ShapeString(b_shape) +
               " need broadcast = 1 before opset 7 (equal shapes otherwise)");
    }
    return {a, b};
  }
  if (!ctx.HasAttr("axis")) return {a, b};
  int64_t rank = static_cast<int64_t>(a_shape.size());
  int64_t axis = NormalizeAxis(ctx, ctx.AttrInt("axis"), rank);
  int64_t trailing = rank - axis - static_cast<int64_t>(b_shape.size());
  if (trailing < 0) {
    ctx.Fail("input B " + runtime::ShapeString(b_shape) + " does not fit into A " +
             runtime::ShapeString(a_shape) + " from axis " + std::to_string(axis));
  }
  if (trailing > 0) {
    b_shape.insert(b_shape.end(), static_cast<size_t>(trailing), 1);
    b = Reshape(ctx, b, b_shape);
  }
  return {a, b};
}

Converter Binary(const std::string& op) {
  return [op](NodeContext& ctx) -> Outputs {
    auto [a, b] = BinaryOperands(ctx);
    return {ctx.Call(op, {a, b})};
  };
}

Converter Unary(const std::string& op) {
  return [op](NodeContext& ctx) -> Outputs { return {ctx.Call(op, {ctx.Input(0)})}; };
}

// Max, Min, Sum: the inputs combined pairwise (all broadcasting together).
Expr FoldInputs(NodeContext& ctx, const std::string& op) {
  if (ctx.NumInputs() < 1 || !ctx.HasInput(0)) ctx.Fail("needs at least one input");
  Expr result = ctx.Input(0);
  for (int i = 1; i < ctx.NumInputs(); ++i) result = ctx.Call(op, {result, ctx.Input(i)});
  return result;
}

Converter Variadic(const std::string& op) {
  return [op](NodeContext& ctx) -> Outputs {
    // A single input passes through; a copy keeps the output a tensor of its own.
    if (ctx.NumInputs() == 1) return {ctx.Call("copy", {ctx.Input(0)})};
    return {FoldInputs(ctx, op)};
  };
}

// True when input 1 is a constant holding the single value `value` that broadcasts to no
// more dimensions than input 0 has (so the output has input 0's shape).
bool IsConstantScalar(const NodeContext& ctx, double value) {
  std::optional<runtime::NDArray> constant = ctx.ConstantInput(1);
  return constant && constant->NumElements() == 1 && ctx.InputRank(1) <= ctx.InputRank(0) &&
         ctx.ConstantFloats(1)[0] == value;
}

// Pow: ONNX lets the exponent's type differ from the base's, and takes integer bases. The
// exponent is cast to a float base's type; integer powers are computed in float64 (exact for
// results below 2^53) and cast back. A constant exponent 2 (decomposed LayerNorm's variance)
// is x * x: one rounding, where pow goes through exp and log.
Outputs ConvertPow(NodeContext& ctx) {
  auto [base, exponent] = BinaryOperands(ctx);
  DataType base_type = ctx.InputDtype(0);
  if (base_type.is_float() && IsConstantScalar(ctx, 2.0)) {
    return {ctx.Call("multiply", {base, base})};
  }
  if (base_type.is_float()) {
    if (ctx.InputDtype(1) != base_type) {
      exponent = ctx.Call("cast", {exponent}, {{"dtype", base_type.str()}});
    }
    return {ctx.Call("power", {base, exponent})};
  }
  const std::string f64 = DataType::Float(64).str();
  Expr result = ctx.Call("power", {ctx.Call("cast", {base}, {{"dtype", f64}}),
                                   ctx.Call("cast", {exponent}, {{"dtype", f64}})});
  return {ctx.Call("cast", {result}, {{"dtype", base_type.str()}})};
}

// Equal on bool operands (opset 11): not (a xor b); the comparison operators take numbers.
Outputs ConvertEqual(NodeContext& ctx) {
  auto [a, b] = BinaryOperands(ctx);
  if (ctx.InputDtype(0).is_bool()) {
    return {ctx.Call("logical_not", {ctx.Call("logical_xor", {a, b})})};
  }
  return {ctx.Call("equal", {a, b})};
}

Outputs ConvertMod(NodeContext& ctx) {
  int64_t fmod = ctx.AttrInt("fmod", 0);
  if (ctx.InputDtype(0).is_float() && fmod == 0) {
    ctx.Fail("float inputs need fmod = 1 (ONNX Mod takes the sign of the dividend for floats)");
  }
  return {ctx.Call("mod", {ctx.Input(0), ctx.Input(1)}, {{"fmod", fmod}})};
}

// BitShift: unsigned integers shifted LEFT or RIGHT (logically) by the second input's bits.
Outputs ConvertBitShift(NodeContext& ctx) {
  const std::string direction = ctx.AttrString("direction", "");
  if (direction != "LEFT" && direction != "RIGHT") {
    ctx.Fail("attribute 'direction' is '" + direction + "'; expected LEFT or RIGHT");
  }
  if (!ctx.InputDtype(0).is_uint()) {
    ctx.Fail("takes unsigned integers (uint8/16/32/64); input 0 is " + ctx.InputDtype(0).str());
  }
  auto [a, b] = BinaryOperands(ctx);
  return {ctx.Call(direction == "LEFT" ? "left_shift" : "right_shift", {a, b})};
}

Outputs ConvertMean(NodeContext& ctx) {
  Expr sum = FoldInputs(ctx, "add");
  if (ctx.NumInputs() == 1) return {ctx.Call("copy", {sum})};
  return {ctx.Call("divide", {sum, ctx.Scalar(ctx.NumInputs(), ctx.InputDtype(0))})};
}

// Gelu (opset 20): exact (erf) or, with approximate = "tanh",
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
Outputs ConvertGelu(NodeContext& ctx) {
  std::string approximate = ctx.AttrString("approximate", "none");
  Expr x = ctx.Input(0);
  if (approximate == "none") return {ctx.Call("nn.gelu", {x})};
  if (approximate != "tanh") {
    ctx.Fail("approximate must be \"none\" or \"tanh\", got \"" + approximate + "\"");
  }
  DataType t = ctx.InputDtype(0);
  Expr cube = ctx.Call("multiply", {ctx.Call("multiply", {x, x}), x});
  Expr inner = ctx.Call("add", {x, ctx.Call("multiply", {cube, ctx.Scalar(0.044715, t)})});
  Expr scaled = ctx.Call("multiply", {inner, ctx.Scalar(0.7978845608028654, t)});
  Expr one_plus = ctx.Call("add", {ctx.Call("tanh", {scaled}), ctx.Scalar(1.0, t)});
  return {ctx.Call("multiply", {ctx.Call("multiply", {x, ctx.Scalar(0.5, t)}), one_plus})};
}

Outputs ConvertCast(NodeContext& ctx) {
  DataType to =
      DataTypeOfOnnx(static_cast<int32_t>(ctx.AttrInt("to")), ctx.Where() + " attribute 'to'");
  return {ctx.Call("cast", {ctx.Input(0)}, {{"dtype", to.str()}})};
}

Outputs ConvertCastLike(NodeContext& ctx) {
  return {ctx.Call("cast", {ctx.Input(0)}, {{"dtype", ctx.InputDtype(1).str()}})};
}

// Whether a Reduce* node's axes are input 1 (from opset `input_since` on), a tensor only a
// run knows and not empty (its length, which the output's rank depends on, is static).
bool ReducedAxesAtRunTime(NodeContext& ctx, int64_t input_since) {
  if (ctx.opset() < input_since || !ctx.HasInput(1) || ctx.ConstantInput(1)) return false;
  std::vector<int64_t> shape = ctx.InputShape(1);
  if (shape.size() != 1) {
    ctx.Fail("axes must be a 1-d tensor, got shape " + runtime::ShapeString(shape));
  }
  return shape[0] > 0;
}

// The reduced axes of a Reduce* node: the attribute before `input_since` (opset 13 for
// ReduceSum, 18 for the others), the optional input 1 from then on (an empty one may be
// given at run time). nullopt when there are none and noop_with_empty_axes asks for the
// input unchanged.
std::optional<Ints> ReducedAxes(NodeContext& ctx, int64_t input_since) {
  Ints axes;
  if (ctx.opset() < input_since) {
    axes = ctx.AttrInts("axes", Ints{});
  } else if (ctx.HasInput(1) && ctx.ConstantInput(1)) {
    axes = ctx.ConstantInts(1);
  }
  if (axes.empty() && ctx.opset() >= input_since && ctx.AttrInt("noop_with_empty_axes", 0) != 0) {
    return std::nullopt;
  }
  int64_t rank = ctx.InputRank(0);
  for (int64_t& axis : axes) axis = NormalizeAxis(ctx, axis, rank, "reduced axis");
  return axes;
}

// `op` over the reduced axes; `post` (when given) applied to its result (ReduceLogSum).
Converter Reduce(const std::string& op, int64_t input_since, const std::string& post = "") {
  return [op, input_since, post](NodeContext& ctx) -> Outputs {
    const int64_t keepdims = ctx.AttrInt("keepdims", 1);
    Expr result;
    if (ReducedAxesAtRunTime(ctx, input_since)) {
      // The reduced dimensions only a run knows: reduced to 1 first (reduce_dims with
      // keepdims), then, without keepdims, dropped by a reshape.
      const Expr& x = ctx.Input(0);
      result = ShapedAtRunTime(ctx, x, "reduce_dims", {{"keepdims", int64_t{1}}}, "reduce_to",
                               {{"reducer", op}}, "reduced");
      if (keepdims == 0) {
        result = ShapedAtRunTime(ctx, result, "reduce_dims", {{"keepdims", int64_t{0}}},
                                 "reshape_to", {}, "kept");
        // Every dimension reduced: reduce_dims kept one of 1 (to refuse repeated axes).
        if (ctx.InputShape(1)[0] == ctx.InputRank(0)) result = ScalarOfOne(ctx, result);
      }
    } else {
      std::optional<Ints> axes = ReducedAxes(ctx, input_since);
      if (!axes) return {ctx.Call("copy", {ctx.Input(0)})};
      result = ctx.Call(op, {ctx.Input(0)}, {{"axis", *axes}, {"keepdims", keepdims}});
    }
    if (!post.empty()) result = ctx.Call(post, {result});
    return {result};
  };
}

Converter ArgReduce(const std::string& op) {
  return [op](NodeContext& ctx) -> Outputs {
    int64_t axis = NormalizeAxis(ctx, ctx.AttrInt("axis", 0), ctx.InputRank(0));
    return {ctx.Call(op, {ctx.Input(0)},
                     {{"axis", axis},
                      {"keepdims", ctx.AttrInt("keepdims", 1)},
                      {"select_last_index", ctx.AttrInt("select_last_index", 0)}})};
  };
}

// Softmax / LogSoftmax. From opset 13 they normalize along one axis (default -1); before,
// the input is taken as a 2-d matrix, dimensions before `axis` (default 1) as rows, and each
// row is normalized as a whole.
Converter SoftmaxLike(const std::string& op) {
  return [op](NodeContext& ctx) -> Outputs {
    if (ctx.opset() >= 13) {
      int64_t axis = NormalizeAxis(ctx, ctx.AttrInt("axis", -1), ctx.InputRank(0));
      return {ctx.Call(op, {ctx.Input(0)}, {{"axis", axis}})};
    }
    std::vector<int64_t> shape = ctx.InputShape(0);
    int64_t rank = static_cast<int64_t>(shape.size());
    int64_t axis = ctx.AttrInt("axis", 1);
    if (axis < -rank || axis > rank) {
      ctx.Fail("axis " + std::to_string(axis) + " is out of range for an input of rank " +
               std::to_string(rank));
    }
    if (axis < 0) axis += rank;
    if (axis == rank - 1) return {ctx.Call(op, {ctx.Input(0)}, {{"axis", int64_t{-1}}})};
    size_t split = static_cast<size_t>(axis);
    Expr matrix =
        Reshape(ctx, ctx.Input(0), {Product(shape, 0, split), Product(shape, split, shape.size())});
    return {Reshape(ctx, ctx.Call(op, {matrix}, {{"axis", int64_t{1}}}), shape)};
  };
}

// LayerNormalization (opset 17). Scale and B broadcast to the normalized dimensions; the
// optional Mean and InvStdDev outputs are the statistics with the reduced dimensions kept.
Outputs ConvertLayerNormalization(NodeContext& ctx) {
  int64_t rank = ctx.InputRank(0);
  int64_t axis = NormalizeAxis(ctx, ctx.AttrInt("axis", -1), rank);
  double epsilon = ctx.AttrFloat("epsilon", 1e-5f);
  DataType dtype = ctx.InputDtype(0);
  // The normalized dimensions (the trailing ones) need constant sizes; those before may be
  // symbolic (a sequence length).
  const std::vector<PrimExpr>& dims = ctx.Input(0).type().shape();
  std::vector<int64_t> normalized;
  for (int64_t d = axis; d < rank; ++d) {
    int64_t size = 0;
    if (!IsConstInt(dims[static_cast<size_t>(d)], &size)) {
      ctx.Fail("the normalized dimension " + std::to_string(d) + " of " +
               ctx.Input(0).type().str() + " is symbolic; it needs a constant size");
    }
    normalized.push_back(size);
  }
  auto parameter = [&](int i, double fallback) -> Expr {
    if (!ctx.HasInput(i)) {
      return ctx.Call("broadcast_to", {ctx.Scalar(fallback, dtype)}, {{"shape", normalized}});
    }
    if (ctx.InputShape(i) == normalized) return ctx.Input(i);
    return ctx.Call("broadcast_to", {ctx.Input(i)}, {{"shape", normalized}});
  };
  Expr x = ctx.Input(0);
  Outputs outputs = {ctx.Call("nn.layer_norm", {x, parameter(1, 1.0), parameter(2, 0.0)},
                              {{"axis", axis}, {"epsilon", epsilon}})};
  bool wants_statistics = (ctx.node().output_size() > 1 && !ctx.node().output(1).empty()) ||
                          (ctx.node().output_size() > 2 && !ctx.node().output(2).empty());
  if (wants_statistics) {
    Ints axes;
    for (int64_t d = axis; d < rank; ++d) axes.push_back(d);
    graph::Attrs reduce = {{"axis", axes}, {"keepdims", int64_t{1}}};
    Expr mean = ctx.Call("mean", {x}, reduce);
    Expr centered = ctx.Call("subtract", {x, mean});
    Expr variance = ctx.Call("mean", {ctx.Call("multiply", {centered, centered})}, reduce);
    Expr inv_std_dev = ctx.Call("rsqrt", {ctx.Call("add", {variance, ctx.Scalar(epsilon, dtype)})});
    outputs.push_back(mean);
    outputs.push_back(inv_std_dev);
  }
  return outputs;
}

// A 2-d host array transposed (any element type).
runtime::NDArray TransposeMatrix(const runtime::NDArray& matrix) {
  std::vector<int64_t> shape = matrix.Shape();
  int64_t rows = shape[0], columns = shape[1];
  runtime::NDArray result = runtime::NDArray::Empty({columns, rows}, matrix.dtype());
  size_t bytes = runtime::ElementBytes(matrix.dtype());
  const auto* from = static_cast<const uint8_t*>(matrix.data());
  auto* to = static_cast<uint8_t*>(result.data());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < columns; ++c) {
      std::memcpy(to + (c * rows + r) * bytes, from + (r * columns + c) * bytes, bytes);
    }
  }
  return result;
}

// MatMul. A constant 2-d B (a weight) becomes nn.dense(A, B transposed): dense takes its
// weight as [N, K], and AlterOpLayout packs a constant one for the x86 GEMM kernel.
Outputs ConvertMatMul(NodeContext& ctx) {
  std::optional<runtime::NDArray> b = ctx.ConstantInput(1);
  if (b && b->Shape().size() == 2 && !ctx.ConstantInput(0)) {
    return {ctx.Call("nn.dense", {ctx.Input(0), ctx.Const(TransposeMatrix(*b))})};
  }
  // A dequantized constant weight (QDQ models): the dequantization of the transposed
  // integers, so that the dense layer stays an 8-bit product to fold (FoldQuantizedProducts).
  const auto* dequantize = ctx.Input(1).as<graph::CallNode>();
  if (dequantize != nullptr && dequantize->op->name == "qnn.dequantize" &&
      !ctx.ConstantInput(0)) {
    const auto* q = dequantize->args[0].as<graph::ConstantNode>();
    if (q != nullptr && q->data.Shape().size() == 2) {
      const int64_t axis = dequantize->attrs.GetInt("axis");
      const int64_t transposed_axis = (axis == 0 || axis == -2) ? 1 : 0;
      Expr weight = ctx.Call("qnn.dequantize",
                             {ctx.Const(TransposeMatrix(q->data)), dequantize->args[1],
                              dequantize->args[2]},
                             {{"axis", transposed_axis}});
      return {ctx.Call("nn.dense", {ctx.Input(0), weight})};
    }
  }
  return {ctx.Call("nn.matmul", {ctx.Input(0), ctx.Input(1)})};
}

// One Einsum operand: its subscripts (one letter per dimension) and its value.
struct EinsumTerm {
  std::string letters;
  Expr value;
};

// `term` with the dimensions of `letters` summed away.
EinsumTerm SumLetters(NodeContext& ctx, EinsumTerm term, const std::string& letters) {
  Ints axes;
  std::string kept;
  for (size_t d = 0; d < term.letters.size(); ++d) {
    if (letters.find(term.letters[d]) != std::string::npos) {
      axes.push_back(static_cast<int64_t>(d));
    } else {
      kept += term.letters[d];
    }
  }
  if (axes.empty()) return term;
  return {kept, ctx.Call("sum", {term.value}, {{"axis", axes}, {"keepdims", int64_t{0}}})};
}

// `term` transposed to the order of `letters` (a permutation of its own).
Expr TransposeTo(NodeContext& ctx, const EinsumTerm& term, const std::string& letters) {
  if (term.letters == letters) return term.value;
  Ints perm;
  for (char letter : letters) perm.push_back(static_cast<int64_t>(term.letters.find(letter)));
  return ctx.Call("transpose", {term.value}, {{"axes", perm}});
}

// Einsum of one or two operands without ellipses or repeated subscripts: letters only one
// operand has and the output lacks are summed first; two operands then meet in one batched
// product, [batch, M, K] x [batch, K, N], the letters they share being batch (kept) or K
// (contracted) dimensions.
Outputs ConvertEinsum(NodeContext& ctx) {
  std::string equation;
  for (char c : ctx.AttrString("equation")) {
    if (c != ' ') equation += c;
  }
  size_t arrow = equation.find("->");
  std::string inputs_text = equation.substr(0, arrow);
  std::vector<EinsumTerm> terms;
  for (size_t begin = 0;;) {
    size_t comma = inputs_text.find(',', begin);
    terms.push_back({inputs_text.substr(begin, comma - begin), Expr()});
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  if (terms.size() != static_cast<size_t>(ctx.NumInputs()) || terms.size() > 2) {
    ctx.Fail("equation '" + equation + "' must name one or two operands, one per input");
  }
  std::map<char, int64_t> sizes, uses;
  for (size_t i = 0; i < terms.size(); ++i) {
    terms[i].value = ctx.Input(static_cast<int>(i));
    std::vector<int64_t> shape = ctx.InputShape(static_cast<int>(i));
    const std::string& letters = terms[i].letters;
    if (letters.find('.') != std::string::npos || letters.size() != shape.size()) {
      ctx.Fail("operand '" + letters + "' must name each of the " + std::to_string(shape.size()) +
               " dimensions of input " + std::to_string(i) + " with a letter (no ellipsis)");
    }
    for (size_t d = 0; d < letters.size(); ++d) {
      char letter = letters[d];
      if (letters.find(letter) != d) {
        ctx.Fail("repeated subscripts in operand '" + letters + "' (diagonals) are not supported");
      }
      if (sizes.count(letter) && sizes[letter] != shape[d]) {
        ctx.Fail("subscript '" + std::string(1, letter) + "' has sizes " +
                 std::to_string(sizes[letter]) + " and " + std::to_string(shape[d]));
      }
      sizes[letter] = shape[d];
      ++uses[letter];
    }
  }
  // Without "->" the output has the letters used once, in alphabetical order.
  std::string output;
  if (arrow != std::string::npos) {
    output = equation.substr(arrow + 2);
  } else {
    for (const auto& [letter, count] : uses) output += count == 1 ? std::string(1, letter) : "";
  }
  for (char letter : output) {
    if (!sizes.count(letter))
      ctx.Fail("output subscript '" + std::string(1, letter) + "' is unused");
  }
  auto in = [](const std::string& letters, char letter) {
    return letters.find(letter) != std::string::npos;
  };
  std::string other = terms.size() == 2 ? terms[1].letters : "";
  std::string alone[2];  // letters of one operand that neither the other nor the output has
  for (size_t i = 0; i < terms.size(); ++i) {
    const std::string& peer = i == 0 ? other : terms[0].letters;
    for (char letter : terms[i].letters) {
      if (!in(peer, letter) && !in(output, letter)) alone[i] += letter;
    }
    terms[i] = SumLetters(ctx, terms[i], alone[i]);
  }
  if (terms.size() == 1) return {TransposeTo(ctx, terms[0], output)};

  std::string batch, m, k, n;
  for (char letter : terms[0].letters) {
    (in(terms[1].letters, letter) ? (in(output, letter) ? batch : k) : m) += letter;
  }
  for (char letter : terms[1].letters)
    n += in(terms[0].letters, letter) ? "" : std::string(1, letter);
  auto size = [&](const std::string& letters) {
    int64_t product = 1;
    for (char letter : letters) product *= sizes[letter];
    return product;
  };
  Expr a = Reshape(ctx, TransposeTo(ctx, terms[0], batch + m + k), {size(batch), size(m), size(k)});
  Expr b = Reshape(ctx, TransposeTo(ctx, terms[1], batch + k + n), {size(batch), size(k), size(n)});
  std::vector<int64_t> product_shape;
  for (char letter : batch + m + n) product_shape.push_back(sizes[letter]);
  Expr product = Reshape(ctx, ctx.Call("nn.batch_matmul", {a, b}), product_shape);
  return {TransposeTo(ctx, {batch + m + n, product}, output)};
}

void RegisterArithmetic() {
  LOOM_REGISTER_ONNX_CONVERTER("Add", Binary("add"));
  LOOM_REGISTER_ONNX_CONVERTER("Sub", Binary("subtract"));
  LOOM_REGISTER_ONNX_CONVERTER("Mul", Binary("multiply"));
  // Integer division truncates toward zero, as in C (the divide operator's rule).
  LOOM_REGISTER_ONNX_CONVERTER("Div", Binary("divide"));
  LOOM_REGISTER_ONNX_CONVERTER("Pow", ConvertPow);
  LOOM_REGISTER_ONNX_CONVERTER("Mod", ConvertMod);
  LOOM_REGISTER_ONNX_CONVERTER("BitShift", ConvertBitShift);
  LOOM_REGISTER_ONNX_CONVERTER("Max", Variadic("maximum"));
  LOOM_REGISTER_ONNX_CONVERTER("Min", Variadic("minimum"));
  LOOM_REGISTER_ONNX_CONVERTER("Sum", Variadic("add"));
  LOOM_REGISTER_ONNX_CONVERTER("Mean", ConvertMean);
  LOOM_REGISTER_ONNX_CONVERTER("Neg", Unary("negative"));
  LOOM_REGISTER_ONNX_CONVERTER("Abs", Unary("abs"));
  LOOM_REGISTER_ONNX_CONVERTER("Exp", Unary("exp"));
  LOOM_REGISTER_ONNX_CONVERTER("Log", Unary("log"));
  LOOM_REGISTER_ONNX_CONVERTER("Sqrt", Unary("sqrt"));
  LOOM_REGISTER_ONNX_CONVERTER("Reciprocal", Unary("reciprocal"));
  LOOM_REGISTER_ONNX_CONVERTER("Floor", Unary("floor"));
  LOOM_REGISTER_ONNX_CONVERTER("Ceil", Unary("ceil"));
  LOOM_REGISTER_ONNX_CONVERTER("Round", Unary("round"));
  LOOM_REGISTER_ONNX_CONVERTER("Sign", Unary("sign"));
  LOOM_REGISTER_ONNX_CONVERTER("Sin", Unary("sin"));
  LOOM_REGISTER_ONNX_CONVERTER("Cos", Unary("cos"));
  LOOM_REGISTER_ONNX_CONVERTER("Tanh", Unary("tanh"));
  LOOM_REGISTER_ONNX_CONVERTER("Erf", Unary("erf"));
  LOOM_REGISTER_ONNX_CONVERTER("Gelu", ConvertGelu);
}

void RegisterLogic() {
  LOOM_REGISTER_ONNX_CONVERTER("Equal", ConvertEqual);
  LOOM_REGISTER_ONNX_CONVERTER("Less", Binary("less"));
  LOOM_REGISTER_ONNX_CONVERTER("LessOrEqual", Binary("less_equal"));
  LOOM_REGISTER_ONNX_CONVERTER("Greater", Binary("greater"));
  LOOM_REGISTER_ONNX_CONVERTER("GreaterOrEqual", Binary("greater_equal"));
  LOOM_REGISTER_ONNX_CONVERTER("And", Binary("logical_and"));
  LOOM_REGISTER_ONNX_CONVERTER("Or", Binary("logical_or"));
  LOOM_REGISTER_ONNX_CONVERTER("Xor", Binary("logical_xor"));
  LOOM_REGISTER_ONNX_CONVERTER("Not", Unary("logical_not"));
  LOOM_REGISTER_ONNX_CONVERTER("Where", [](NodeContext& ctx) -> Outputs {
    return {ctx.Call("where", {ctx.Input(0), ctx.Input(1), ctx.Input(2)})};
  });
  LOOM_REGISTER_ONNX_CONVERTER("Cast", ConvertCast);
  LOOM_REGISTER_ONNX_CONVERTER("CastLike", ConvertCastLike);
}

void RegisterReductions() {
  LOOM_REGISTER_ONNX_CONVERTER("ReduceSum", Reduce("sum", 13));
  LOOM_REGISTER_ONNX_CONVERTER("ReduceMean", Reduce("mean", 18));
  LOOM_REGISTER_ONNX_CONVERTER("ReduceMax", Reduce("max", 18));
  LOOM_REGISTER_ONNX_CONVERTER("ReduceMin", Reduce("min", 18));
  LOOM_REGISTER_ONNX_CONVERTER("ReduceProd", Reduce("prod", 18));
  LOOM_REGISTER_ONNX_CONVERTER("ReduceLogSumExp", Reduce("logsumexp", 18));
  LOOM_REGISTER_ONNX_CONVERTER("ReduceLogSum", Reduce("sum", 18, "log"));
  LOOM_REGISTER_ONNX_CONVERTER("ReduceL1", Reduce("l1_norm", 18));
  LOOM_REGISTER_ONNX_CONVERTER("ReduceL2", Reduce("l2_norm", 18));
  LOOM_REGISTER_ONNX_CONVERTER("ReduceSumSquare", Reduce("sum_square", 18));
  LOOM_REGISTER_ONNX_CONVERTER("ArgMax", ArgReduce("argmax"));
  LOOM_REGISTER_ONNX_CONVERTER("ArgMin", ArgReduce("argmin"));
  LOOM_REGISTER_ONNX_CONVERTER("Softmax", SoftmaxLike("nn.softmax"));
  LOOM_REGISTER_ONNX_CONVERTER("LogSoftmax", SoftmaxLike("nn.log_softmax"));
  LOOM_REGISTER_ONNX_CONVERTER("LayerNormalization", ConvertLayerNormalization);
  LOOM_REGISTER_ONNX_CONVERTER("MatMul", ConvertMatMul);
  LOOM_REGISTER_ONNX_CONVERTER("Einsum", ConvertEinsum);
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterArithmetic();
  RegisterLogic();
  RegisterReductions();
  return true;
}();

}  // namespace
}  // namespace loom::frontend::onnx
