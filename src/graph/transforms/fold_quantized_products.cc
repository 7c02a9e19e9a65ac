// FoldQuantizedProducts: a convolution or dense layer of dequantized 8-bit operands becomes
// the integer product, dequantized once.
//
//   nn.conv2d(qnn.dequantize(x, sx, zx), qnn.dequantize(w, sw, zw))
//     -> float32(qnn.conv2d(x, w, data_zero_point = zx, weight_zero_point = zw)) * (sx * sw)
//   nn.dense(...)  alike, with qnn.dense
//
// Exact in the integers: (x - zx) * sx times (w - zw) * sw, summed, is sx * sw times the
// sum of the centered integer products, which int32 holds exactly; only the one float
// multiply rounds. It applies where that product is one scale per output channel and the
// zero points are single integers: x int8 or uint8 with a constant scalar scale and zero
// point; w a constant int8 or uint8 weight ([K, C, R, S] or [N, K]) whose scale is a
// constant scalar or one per output channel (axis 0) and whose zero points are all one
// value. QDQ models (the form ONNX Runtime's quantize_static writes) put exactly this in
// front of every quantized convolution and linear layer; the QuantizeLinear after it stays
// float arithmetic that fuses into the product's epilogue, so consecutive layers pass 8-bit
// tensors.
//
// The QuantizeLinear of the product's result (its division by the output scale) becomes a
// multiplication by the reciprocal, as int8 runtimes requantize (Requantize says why).
//
// Grouped and depthwise convolutions, and matmuls of two dequantized activations (attention:
// qnn.matmul, both zero points subtracted), fold where the target has an integer kernel for
// the folded call (the pass's predicate; x86: depthwise on AVX-512 VNNI and VBMI, batched
// products on VNNI); elsewhere they stay float, whose kernels beat the generic integer
// schedules. Their QuantizeLinear
// multiplies by the reciprocal all the same, as the integer products' does.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <unordered_set>

#include "graph/transforms/map_functions.h"
#include "loom/graph/functor.h"
#include "loom/graph/transform.h"

namespace loom::graph {
namespace {

bool IsInteger8(DataType t) { return t == DataType::Int(8) || t == DataType::UInt(8); }

int64_t Integer8Element(const runtime::NDArray& array, int64_t i) {
  if (array.dtype() == DataType::Int(8)) return static_cast<const int8_t*>(array.data())[i];
  return static_cast<const uint8_t*>(array.data())[i];
}

// The one value every element of a constant 8-bit array holds, if there is one.
std::optional<int64_t> UniformValue(const Expr& e) {
  const auto* constant = e.as<ConstantNode>();
  if (constant == nullptr || !IsInteger8(constant->data.dtype()) ||
      constant->data.NumElements() == 0) {
    return std::nullopt;
  }
  const int64_t first = Integer8Element(constant->data, 0);
  for (int64_t i = 1; i < constant->data.NumElements(); ++i) {
    if (Integer8Element(constant->data, i) != first) return std::nullopt;
  }
  return first;
}

// A qnn.dequantize of an 8-bit tensor with a constant scale and constant zero points.
const CallNode* AsDequantize(const Expr& e) {
  const auto* call = e.as<CallNode>();
  if (call == nullptr || call->op == nullptr || call->op->name != "qnn.dequantize") return nullptr;
  if (!IsInteger8(call->args[0].type().dtype()) || !call->args[1].as<ConstantNode>()) {
    return nullptr;
  }
  return call;
}


class QuantizedProductFolder : public ExprMutator {
 public:
  explicit QuantizedProductFolder(IntegerKernelOf has_kernel) : has_kernel_(std::move(has_kernel)) {}

  Expr VisitExpr_(const CallNode* op) override {
    Expr rebuilt = ExprMutator::VisitExpr_(op);
    const auto* product = rebuilt.as<CallNode>();
    if (product == nullptr || product->op == nullptr) return rebuilt;
    if (std::optional<Expr> requantized = Requantize(rebuilt, *product)) return *requantized;
    const std::string& name = product->op->name;
    const bool conv = name == "nn.conv2d";
    if (name == "nn.matmul" || name == "nn.batch_matmul") return FoldActivations(rebuilt, *product);
    if ((!conv && name != "nn.dense") || !product->attrs.GetString("out_dtype").empty()) {
      return rebuilt;
    }
    const CallNode* data = AsDequantize(product->args[0]);
    const CallNode* weight = AsDequantize(product->args[1]);
    if (data == nullptr || weight == nullptr || !weight->args[0].as<ConstantNode>()) return rebuilt;
    // A grouped convolution left in float is requantized as a product is all the same
    // (QLinearConv's arithmetic, which ONNX Runtime runs it by): a division per output element
    // cost more than a depthwise convolution's multiply-adds.
    const bool grouped = conv && product->attrs.GetInt("groups") != 1;
    auto stays_float = [&] {
      if (grouped) products_.insert(rebuilt.get());
      return rebuilt;
    };
    // The data's scale and zero point one each; the weight's scale one, or one per output
    // channel (its axis 0), and its zero points one value.
    const Type& weight_scale = weight->args[1].type();
    const int64_t weight_rank = weight->args[0].type().ndim();
    const int64_t channels =
        weight->args[0].type().ConstShape().value_or(std::vector<int64_t>{0})[0];
    const bool per_channel = weight_scale.ndim() == 1;
    const int64_t axis = weight->attrs.GetInt("axis");
    if (data->args[1].type().ndim() != 0 || data->args[2].type().ndim() != 0 ||
        weight_rank != (conv ? 4 : 2) ||
        (per_channel && ((axis != 0 && axis != -weight_rank) ||
                         weight_scale.ConstShape() != std::vector<int64_t>{channels}))) {
      return stays_float();
    }
    std::optional<int64_t> data_zero = UniformValue(data->args[2]);
    std::optional<int64_t> weight_zero = UniformValue(weight->args[2]);
    if (!data_zero || !weight_zero) return stays_float();

    const std::string& hint = product->name_hint;
    Call integer =
        MakeIntegerProduct(*product, data->args[0], weight->args[0], *data_zero, *weight_zero);
    if (grouped && !HasKernel(integer)) return stays_float();
    Expr scale = MakeCall("multiply", {data->args[1], weight->args[1]});
    if (per_channel && conv) {
      // [K] -> [K, 1, 1], against the output [N, K, P, Q] (a dense output's channels are
      // its last axis already)
      scale = MakeCall("expand_dims", {scale}, {{"axis", int64_t{1}}, {"num_newaxis", int64_t{2}}});
    }
    Expr real = MakeCall("cast", {integer}, {{"dtype", std::string("float32")}});
    Expr result = MakeCall("multiply", {real, scale}, {}, hint);
    products_.insert(result.get());
    return result;
  }

 private:
  bool HasKernel(const Call& integer) const { return has_kernel_ && has_kernel_(*integer.get()); }

  // A matmul of two dequantized 8-bit activations (one scale and zero point each): the
  // integer product qnn.matmul times sa * sb, where the target has a kernel for it.
  Expr FoldActivations(const Expr& rebuilt, const CallNode& product) {
    const CallNode* a = AsDequantize(product.args[0]);
    const CallNode* b = AsDequantize(product.args[1]);
    if (a == nullptr || b == nullptr) return rebuilt;
    for (const CallNode* operand : {a, b}) {
      if (operand->args[1].type().ndim() != 0 || operand->args[2].type().ndim() != 0) {
        return rebuilt;
      }
    }
    std::optional<int64_t> a_zero = UniformValue(a->args[2]);
    std::optional<int64_t> b_zero = UniformValue(b->args[2]);
    if (!a_zero || !b_zero) return rebuilt;
    Call integer = MakeCall("qnn.matmul", {a->args[0], b->args[0]},
                            {{"a_zero_point", *a_zero}, {"b_zero_point", *b_zero}},
                            product.name_hint);
    if (!HasKernel(integer)) return rebuilt;
    Expr real = MakeCall("cast", {integer}, {{"dtype", std::string("float32")}});
    Expr result = MakeCall("multiply", {real, MakeCall("multiply", {a->args[1], b->args[1]})}, {},
                           product.name_hint);
    products_.insert(result.get());
    return result;
  }

  // The requantization of a folded product: its result, plus or times constants (a bias),
  // through a ReLU or a clip, divided by a constant scalar (QuantizeLinear's output scale) is multiplied by the
  // scale's reciprocal instead, as ONNX Runtime's QLinearConv and int8 runtimes generally
  // requantize. The quotient moves by at most an ulp, which changes the rounded integer only
  // for a value within an ulp of a .5 boundary; a float division per output element cost
  // 5-15% of the int8 models' time. QuantizeLinear anywhere else divides.
  std::optional<Expr> Requantize(const Expr& rebuilt, const CallNode& call) {
    const std::string& name = call.op->name;
    if (call.args.empty() || !products_.count(call.args[0].get())) return std::nullopt;
    if (call.args.size() == 1) {
      // An activation the requantization clamps through (ONNX Runtime fuses ReLU and Clip
      // into its QLinearConv).
      if (name == "nn.relu" || name == "clip") products_.insert(rebuilt.get());
      return std::nullopt;
    }
    if (call.args.size() != 2) return std::nullopt;
    if (name == "add" || name == "subtract" || name == "multiply" || name == "nn.bias_add") {
      if (IsConstantExpr(call.args[1])) products_.insert(rebuilt.get());
      return std::nullopt;
    }
    std::optional<double> divisor = ScalarConstantValue(call.args[1]);
    if (name != "divide" || !divisor || !(*divisor > 0)) return std::nullopt;
    return MakeCall("multiply",
                    {call.args[0], MakeScalarConstant(1.0f / static_cast<float>(*divisor), DataType::Float(32))}, {},
                    call.name_hint);
  }

  IntegerKernelOf has_kernel_;
  // The folded products' results, constants added to or multiplying them, and their ReLUs
  // and clips.
  std::unordered_set<const Object*> products_;
};

}  // namespace

Pass FoldQuantizedProducts(IntegerKernelOf has_kernel) {
  return MutatorPass<QuantizedProductFolder>("FoldQuantizedProducts", std::move(has_kernel));
}

}  // namespace loom::graph
