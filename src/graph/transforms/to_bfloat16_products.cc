// ToBFloat16Products (--precision bf16): the model's convolutions, dense layers and matrix
// products multiply bfloat16 operands and sum in float32; everything else stays float32.
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
// On a target without bfloat16 units the operands are rounded to bfloat16 and back
// (cast(cast(x, bfloat16), float32)) and the product stays float32: the same values, computed
// by conversion on the float32 kernels.
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

bool IsBf16Product(const CallNode& call) {
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
  if (IsBf16Product(*call)) {
    found->insert(call);
    return;
  }
  if (call->op->pattern > OpPattern::kInjective) return;
  for (const Expr& arg : call->args) CollectOutputProducts(arg, found);
}

class Bf16ProductRewriter : public ExprMutator {
 public:
  Bf16ProductRewriter(std::unordered_set<const CallNode*> logits, bool bf16_units)
      : logits_(std::move(logits)), bf16_units_(bf16_units) {}

  Expr VisitExpr_(const CallNode* op) override {
    Expr rebuilt = ExprMutator::VisitExpr_(op);
    const auto* call = rebuilt.as<CallNode>();
    if (call == nullptr || !IsBf16Product(*call) || logits_.count(op) != 0 ||
        (!IsActivationProduct(*call) && !IsConstantExpr(call->args[1])) ||
        call->args[0].type().dtype() != DataType::Float(32) ||
        call->args[1].type().dtype() != DataType::Float(32)) {
      return rebuilt;
    }
    std::vector<Expr> operands;
    for (const Expr& arg : call->args) {
      Expr rounded = MakeCast(arg, DataType::BFloat16());
      operands.push_back(bf16_units_ ? rounded : MakeCast(rounded, DataType::Float(32)));
    }
    Attrs attrs = call->attrs;
    if (bf16_units_) attrs = attrs.With("out_dtype", std::string("float32"));
    return MakeCall(call->op, operands, attrs, call->name_hint);
  }

 private:
  std::unordered_set<const CallNode*> logits_;
  bool bf16_units_;
};

}  // namespace

Pass ToBFloat16Products(bool bf16_units) {
  return {"ToBFloat16Products", [bf16_units](const IRModule& module) {
            return MapFunctions(module, [bf16_units](const Function& function) -> Expr {
              std::unordered_set<const CallNode*> logits;
              CollectOutputProducts(function->body, &logits);
              return Bf16ProductRewriter(std::move(logits), bf16_units).VisitExpr(function);
            });
          }};
}

}  // namespace loom::graph
