// FoldConstant: a call whose inputs are all constants (after folding its operands, so whole
// constant subgraphs fold) becomes a constant, computed by compiling and running the call
// with Loom itself (EvaluateCall) for the model's target: the code generator and float
// semantics that would have computed it at run time (a GPU target's host, whose arrays the
// folding holds).
//
// A call producing a tuple (split) is not a value the graph can hold as one constant; a
// projection of it with constant inputs folds to that field (the call is evaluated once for
// all its projections). Calls of fused functions are left alone (FoldConstant runs before
// FuseOps).
//
// The constant keeps the call's name_hint; an unnamed call's constant is named after its
// first named input and the operator ("fc.weight.transpose").
#include <unordered_map>

#include "graph/transforms/map_functions.h"
#include "loom/graph/evaluate.h"
#include "loom/graph/functor.h"
#include "loom/graph/transform.h"

namespace loom::graph {
namespace {

class ConstantFolder : public ExprMutator {
 public:
  explicit ConstantFolder(const Target& target) : target_(target) {}

  Expr VisitExpr_(const CallNode* op) override {
    Expr rebuilt = ExprMutator::VisitExpr_(op);
    const auto* call = rebuilt.as<CallNode>();
    if (!Foldable(call) || !call->checked_type.is_tensor()) return rebuilt;
    return MakeConstant(EvaluateCall(*call, InputArrays(*call), target_), ConstantName(*call));
  }

  Expr VisitExpr_(const TupleGetItemNode* op) override {
    Expr rebuilt = ExprMutator::VisitExpr_(op);
    const auto* item = rebuilt.as<TupleGetItemNode>();
    if (item == nullptr) return rebuilt;
    const auto* call = item->tuple.as<CallNode>();
    if (!Foldable(call)) return rebuilt;
    auto [it, inserted] = tuple_values_.try_emplace(call);
    if (inserted) it->second = EvaluateCallOutputs(*call, InputArrays(*call), target_);
    std::string name = ConstantName(*call);
    return MakeConstant(it->second.at(item->index),
                        name.empty() ? "" : name + "." + std::to_string(item->index));
  }

 private:
  // An operator call (not a fused function) whose every input is a constant, its result of
  // constant shape (not a size the model reads at run time: dims_of_value).
  static bool Foldable(const CallNode* call) {
    if (call == nullptr || call->op == nullptr || !call->op->compute) return false;
    const Type& type = call->checked_type;
    for (const Type& t : type.is_tuple() ? type.fields() : std::vector<Type>{type}) {
      if (!t.ConstShape().has_value()) return false;
    }
    for (const Expr& arg : call->args) {
      if (!arg.as<ConstantNode>()) return false;
    }
    return true;
  }

  static std::vector<runtime::NDArray> InputArrays(const CallNode& call) {
    std::vector<runtime::NDArray> arrays;
    for (const Expr& arg : call.args) arrays.push_back(arg.as<ConstantNode>()->data);
    return arrays;
  }

  static std::string ConstantName(const CallNode& call) {
    if (!call.name_hint.empty()) return call.name_hint;
    for (const Expr& arg : call.args) {
      const std::string& input = arg.as<ConstantNode>()->name_hint;
      if (!input.empty()) return input + "." + call.op->name;
    }
    return "";
  }

  const Target& target_;
  // The outputs of tuple-producing calls already evaluated for one of their projections (a
  // rebuilt call stays alive in memo_, an unchanged one in the function).
  std::unordered_map<const CallNode*, std::vector<runtime::NDArray>> tuple_values_;
};

}  // namespace

Pass FoldConstant(const Target& target) {
  return {"FoldConstant", [target](const IRModule& module) {
            return MapFunctions(module, [&](const Function& function) {
              return ConstantFolder(target).VisitExpr(function);
            });
          }};
}

}  // namespace loom::graph
