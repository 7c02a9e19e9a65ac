// CommuteDequantize: max pooling of a dequantized tensor becomes the dequantization of the
// max pooling of its integers.
//
//   nn.max_pool2d(qnn.dequantize(q, scale, zero_point))
//     -> qnn.dequantize(nn.max_pool2d(q), scale, zero_point)
//
// Exact: with one positive scale and one zero point, dequantization is increasing, so the
// largest dequantized value of a window is the dequantization of its largest integer (and the
// padding, which never wins a max, is the integer type's minimum instead of -inf). The pool
// then reads 8-bit values, a quarter of the float bytes, and the QuantizeLinear a QDQ model
// puts after it (with the same scale and zero point) meets the dequantization in one
// elementwise epilogue instead of the whole tensor being dequantized first.
#include "graph/transforms/map_functions.h"
#include "loom/graph/functor.h"
#include "loom/graph/transform.h"

namespace loom::graph {
namespace {

bool IsOp(const CallNode* call, const char* name) {
  return call != nullptr && call->op != nullptr && call->op->name == name;
}

// A constant scalar scale whose value is positive.
bool PositiveScalarScale(const Expr& scale) {
  const auto* constant = scale.as<ConstantNode>();
  if (constant == nullptr || constant->data.NumElements() != 1 ||
      constant->data.dtype() != DataType::Float(32) || scale.type().ndim() != 0) {
    return false;
  }
  return *static_cast<const float*>(constant->data.data()) > 0.0f;
}

class DequantizeCommuter : public ExprMutator {
 public:
  Expr VisitExpr_(const CallNode* op) override {
    Expr rebuilt = ExprMutator::VisitExpr_(op);
    const auto* pool = rebuilt.as<CallNode>();
    if (!IsOp(pool, "nn.max_pool2d")) return rebuilt;
    const auto* dequantize = pool->args[0].as<CallNode>();
    if (!IsOp(dequantize, "qnn.dequantize") || !PositiveScalarScale(dequantize->args[1]) ||
        dequantize->args[2].type().ndim() != 0) {
      return rebuilt;
    }
    Expr pooled = MakeCall(pool->op, {dequantize->args[0]}, pool->attrs, pool->name_hint);
    return MakeCall(dequantize->op, {pooled, dequantize->args[1], dequantize->args[2]},
                    dequantize->attrs, dequantize->name_hint);
  }
};

}  // namespace

Pass CommuteDequantize() { return MutatorPass<DequantizeCommuter>("CommuteDequantize"); }

}  // namespace loom::graph
