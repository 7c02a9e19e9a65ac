// ToHalfPrecisionProducts (--precision bf16 / fp16): the model's convolutions, dense layers and
// matrix products multiply bfloat16 (or float16) operands and sum in float32; everything else
// stays float32.
//
//   nn.conv2d(x, w)  ->  nn.conv2d(cast(x, bfloat16), cast(w, bfloat16), out_dtype=float32)
//
// Which products: nn.conv2d with groups 1 and nn.dense with a constant weight (FoldConstant
// rounds it once), and nn.matmul and nn.batch_matmul of two activations (attention's scores
// and context: both operands are rounded when the product runs), with float32 operands. A
// product whose result reaches a model output through elementwise and injective operators
// only (the logits) keeps float32, as the model's inputs and outputs do (the casts are
// inside). Softmax, normalization statistics,
// pooling, depthwise convolutions and every elementwise operator are not products here and
// stay float32 too.
//
// On a target without units for the type (HasHalfPrecisionProducts) the operands are rounded
// and widened back (cast(cast(x, bfloat16), float32)) and the product stays float32: the same
// values, computed by conversion on the float32 kernels. float16 keeps 11 significant bits
// (bfloat16 8) but only values below 65504: a larger operand becomes infinity.
#include <unordered_set>

#include "graph/transforms/map_functions.h"
#include "loom/graph/functor.h"
#include "loom/graph/op.h"
#include "loom/graph/transform.h"

namespace loom::graph {
namespace {

// A product of two activations (no weight to round once).
bool IsActivationProduct(const CallNode& call) {
  return call.op->name == "nn.matmul" || call.op->name == "nn.batch_matmul";
}

bool IsHalfPrecisionProduct(const CallNode& call) {
  if (call.op == nullptr) return false;
  const std::string& name = call.op->name;
  return (name == "nn.dense" || IsActivationProduct(call) ||
          (name == "nn.conv2d" && call.attrs.GetInt("groups") == 1)) &&
         call.attrs.GetString("out_dtype").empty();
}

// The products whose results reach the model's outputs through elementwise and injective
// operators only.
void CollectOutputProducts(const Expr& e, std::unordered_set<const CallNode*>* found) {
  if (const auto* tuple = e.as<TupleNode>()) {
    for (const Expr& field : tuple->fields) CollectOutputProducts(field, found);
    return;
  }
  const auto* call = e.as<CallNode>();
  if (call == nullptr || call->op == nullptr) return;
  if (IsHalfPrecisionProduct(*call)) {
    found->insert(call);
    return;
  }
  if (call->op->pattern > OpPattern::kInjective) return;
  for (const Expr& arg : call->args) CollectOutputProducts(arg, found);
}

class HalfPrecisionRewriter : public ExprMutator {
 public:
  HalfPrecisionRewriter(std::unordered_set<const CallNode*> logits, DataType half, bool units)
      : logits_(std::move(logits)), half_(half), units_(units) {}

  Expr VisitExpr_(const CallNode* op) override {
    Expr rebuilt = ExprMutator::VisitExpr_(op);
    const auto* call = rebuilt.as<CallNode>();
    if (call == nullptr || !IsHalfPrecisionProduct(*call) || logits_.count(op) != 0 ||
        (!IsActivationProduct(*call) && !IsConstantExpr(call->args[1])) ||
        call->args[0].type().dtype() != DataType::Float(32) ||
        call->args[1].type().dtype() != DataType::Float(32)) {
      return rebuilt;
    }
    std::vector<Expr> operands;
    for (const Expr& arg : call->args) {
      Expr rounded = MakeCast(arg, half_);
      operands.push_back(units_ ? rounded : MakeCast(rounded, DataType::Float(32)));
    }
    Attrs attrs = call->attrs;
    if (units_) attrs = attrs.With("out_dtype", std::string("float32"));
    return MakeCall(call->op, operands, attrs, call->name_hint);
  }

 private:
  std::unordered_set<const CallNode*> logits_;
  DataType half_;
  bool units_;
};

}  // namespace

Pass ToHalfPrecisionProducts(DataType half, bool units) {
  LOOM_CHECK_USER(half == DataType::BFloat16() || half == DataType::Float(16))
      << "ToHalfPrecisionProducts: the operands' type must be bfloat16 or float16, got " << half;
  return {"ToHalfPrecisionProducts", [half, units](const IRModule& module) {
            return MapFunctions(module, [half, units](const Function& function) -> Expr {
              std::unordered_set<const CallNode*> logits;
              CollectOutputProducts(function->body, &logits);
              return HalfPrecisionRewriter(std::move(logits), half, units).VisitExpr(function);
            });
          }};
}

}  // namespace loom::graph
