// WidenFloat16: a model stored in float16 (or bfloat16) computes in float32. Every operator
// with a 16-bit float operand reads it widened, and a 16-bit float result is rounded back:
//
//   nn.conv2d(x: float16, w: float16)  ->  cast(nn.conv2d(cast(x, float32), cast(w, float32)),
//                                               float16)
//
// Why float32: a float16 sum keeps 11 significant bits, so a convolution over thousands of
// products, a softmax or a normalization's statistics would lose most of their digits (ONNX
// Runtime and OpenVINO compute float16 models in float32 on CPUs too), and the target's fast
// kernels are float32 ones. Each operator's result is still rounded to float16 where the
// model has one, as the model's arithmetic says; for +, -, *, / and sqrt that is exactly the
// float16 operation's result: rounding to float32 first and then to float16 equals rounding
// once, since float32's 24 bits are at least twice float16's 11 plus 2 (Figueroa's
// double-rounding condition). After fusion the casts are part of the kernels' epilogues: a
// kernel rounds its result to float16 and widens it again before it stores it, so the
// float32 kernels read float32 operands (the model's float16 inputs widen in the first
// kernel, its outputs narrow in the last).
//
// Left as they are: cast itself, and operators with a tuple result (split, topk), which move
// or compare elements without arithmetic. Constant weights widen once, in FoldConstant.
#include "graph/transforms/map_functions.h"
#include "loom/graph/functor.h"
#include "loom/graph/op.h"
#include "loom/graph/transform.h"

namespace loom::graph {
namespace {

// float16 or bfloat16 (the ToHalfPrecisionProducts of --precision bf16 come after this pass).
bool IsFloat16Tensor(const Type& type) {
  return type.is_tensor() && type.dtype().is_float() && type.dtype().bits() == 16;
}

class Float16Widener : public ExprMutator {
 public:
  Expr VisitExpr_(const CallNode* op) override {
    Expr rebuilt = ExprMutator::VisitExpr_(op);
    const auto* call = rebuilt.as<CallNode>();
    if (call == nullptr || call->op == nullptr || call->op->name == "cast" ||
        !call->checked_type.is_tensor()) {
      return rebuilt;
    }
    bool widened_any = false;
    std::vector<Expr> operands;
    for (const Expr& arg : call->args) {
      bool widen = IsFloat16Tensor(arg.type());
      operands.push_back(widen ? MakeCast(arg, DataType::Float(32)) : arg);
      widened_any |= widen;
    }
    if (!widened_any) return rebuilt;
    Expr widened = MakeCall(call->op, std::move(operands), call->attrs, call->name_hint);
    if (widened.type().dtype() == call->checked_type.dtype()) return widened;
    return MakeCast(widened, call->checked_type.dtype());
  }
};

}  // namespace

Pass WidenFloat16() { return MutatorPass<Float16Widener>("WidenFloat16"); }

}  // namespace loom::graph
