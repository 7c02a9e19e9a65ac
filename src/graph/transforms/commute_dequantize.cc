// CommuteDequantize: max pooling and data movement of a dequantized tensor become the
// dequantization of the pooled or moved integers, and a quantization of a dequantized tensor
// with its own scale and zero point is the integers themselves.
//
//   nn.max_pool2d(qnn.dequantize(q, scale, zero_point))
//     -> qnn.dequantize(nn.max_pool2d(q), scale, zero_point)
//   reshape / transpose / squeeze / expand_dims / flatten of qnn.dequantize(q, s, z)
//     -> qnn.dequantize(the same of q, s, z)
//   quantize(qnn.dequantize(q, s, z), s, z) -> q
//
// Exact: with one positive scale and one zero point, dequantization is increasing, so the
// largest dequantized value of a window is the dequantization of its largest integer (and the
// padding, which never wins a max, is the integer type's minimum instead of -inf). The pool
// then reads 8-bit values, a quarter of the float bytes, and the QuantizeLinear a QDQ model
// puts after it (with the same scale and zero point) meets the dequantization in one
// elementwise epilogue instead of the whole tensor being dequantized first.
//
// Data movement moves each value as it is, so it commutes with any elementwise map. A QDQ
// model quantizes and dequantizes around every reshape and transpose (attention's heads),
// with the scale and zero point it had: QuantizeLinear (as the ONNX importer writes it:
// cast(clip(round(x / s) + z, type min, type max))) of (q - z) * s gives back q exactly, as
// (q - z) * s / s in float32 is within 2^-22 relative of the integer q - z (|q - z| <= 255),
// which rounds to it. The integers then move instead of floats, and the products after see
// their dequantized 8-bit operands (FoldQuantizedProducts).
#include <cmath>
#include <optional>

#include "graph/transforms/map_functions.h"
#include "loom/graph/functor.h"
#include "loom/graph/transform.h"

namespace loom::graph {
namespace {

bool IsOp(const CallNode* call, const char* name) {
  return call != nullptr && call->op != nullptr && call->op->name == name;
}

// A constant float32 scalar scale whose value is positive.
bool PositiveScalarScale(const Expr& scale) {
  std::optional<double> value = ScalarConstantValue(scale);
  return value && *value > 0 && scale.type().ndim() == 0 &&
         scale.type().dtype() == DataType::Float(32);
}

// A qnn.dequantize by one positive constant scale and one constant zero point.
const CallNode* ScalarDequantize(const Expr& e) {
  const auto* dequantize = e.as<CallNode>();
  if (!IsOp(dequantize, "qnn.dequantize") || !PositiveScalarScale(dequantize->args[1]) ||
      dequantize->args[2].type().ndim() != 0 || !ScalarConstantValue(dequantize->args[2])) {
    return nullptr;
  }
  return dequantize;
}

bool MovesData(const CallNode* call) {
  for (const char* name : {"reshape", "transpose", "squeeze", "expand_dims", "flatten"}) {
    if (IsOp(call, name)) return true;
  }
  return false;
}

// q, where `cast` is the QuantizeLinear of qnn.dequantize(q, s, z) by s and z.
std::optional<Expr> RequantizedIntegers(const CallNode* cast) {
  if (!IsOp(cast, "cast")) return std::nullopt;
  const auto* clip = cast->args[0].as<CallNode>();
  if (!IsOp(clip, "clip")) return std::nullopt;
  const auto* shifted = clip->args[0].as<CallNode>();
  std::optional<double> zero_point = 0.0;
  const CallNode* rounded = shifted;
  if (IsOp(shifted, "add")) {
    zero_point = ScalarConstantValue(shifted->args[1]);
    rounded = shifted->args[0].as<CallNode>();
  }
  if (!zero_point || !IsOp(rounded, "round")) return std::nullopt;
  const auto* divided = rounded->args[0].as<CallNode>();
  if (!IsOp(divided, "divide")) return std::nullopt;
  const CallNode* dequantize = ScalarDequantize(divided->args[0]);
  if (dequantize == nullptr) return std::nullopt;
  const Expr& q = dequantize->args[0];
  const DataType t = q.type().dtype();
  const double low = t.is_uint() ? 0.0 : -std::ldexp(1.0, t.bits() - 1);
  const double high = std::ldexp(1.0, t.bits() - (t.is_uint() ? 0 : 1)) - 1;
  const bool same = cast->checked_type.dtype() == t && t.bits() == 8 &&
                    clip->attrs.GetFloat("a_min") <= low && clip->attrs.GetFloat("a_max") >= high &&
                    ScalarConstantValue(divided->args[1]) == ScalarConstantValue(dequantize->args[1]) &&
                    *zero_point == *ScalarConstantValue(dequantize->args[2]);
  if (!same) return std::nullopt;
  return q;
}

class DequantizeCommuter : public ExprMutator {
 public:
  Expr VisitExpr_(const CallNode* op) override {
    Expr rebuilt = ExprMutator::VisitExpr_(op);
    const auto* call = rebuilt.as<CallNode>();
    if (std::optional<Expr> integers = RequantizedIntegers(call)) return *integers;
    if (!IsOp(call, "nn.max_pool2d") && !MovesData(call)) return rebuilt;
    const CallNode* dequantize = ScalarDequantize(call->args[0]);
    if (dequantize == nullptr) return rebuilt;
    Expr moved = MakeCall(call->op, {dequantize->args[0]}, call->attrs, call->name_hint);
    return MakeCall(dequantize->op, {moved, dequantize->args[1], dequantize->args[2]},
                    dequantize->attrs, dequantize->name_hint);
  }
};

}  // namespace

Pass CommuteDequantize() { return MutatorPass<DequantizeCommuter>("CommuteDequantize"); }

}  // namespace loom::graph
