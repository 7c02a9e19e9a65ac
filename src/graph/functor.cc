#include "loom/graph/functor.h"

namespace loom::graph {

void ExprVisitor::VisitExpr(const Expr& e) {
  if (!visited_.insert(e.get()).second) return;
  ExprFunctor::VisitExpr(e);
}

void ExprVisitor::VisitExpr_(const VarNode*) {}
void ExprVisitor::VisitExpr_(const ConstantNode*) {}
void ExprVisitor::VisitExpr_(const CallNode* op) {
  if (op->callee.defined()) VisitExpr(op->callee);
  for (const Expr& arg : op->args) VisitExpr(arg);
}
void ExprVisitor::VisitExpr_(const TupleNode* op) {
  for (const Expr& field : op->fields) VisitExpr(field);
}
void ExprVisitor::VisitExpr_(const TupleGetItemNode* op) { VisitExpr(op->tuple); }
void ExprVisitor::VisitExpr_(const FunctionNode* op) {
  for (const Var& param : op->params) VisitExpr(param);
  VisitExpr(op->body);
}

Expr ExprMutator::VisitExpr(const Expr& e) {
  auto it = memo_.find(e.get());
  if (it != memo_.end()) return it->second;
  Expr result = ExprFunctor::VisitExpr(e);
  memo_[e.get()] = result;
  return result;
}

Expr ExprMutator::VisitExpr_(const VarNode* op) { return Expr(op); }
Expr ExprMutator::VisitExpr_(const ConstantNode* op) { return Expr(op); }

namespace {

// The mutated list, and whether any element changed.
bool MutateAll(ExprMutator* self, const std::vector<Expr>& in, std::vector<Expr>* out) {
  bool changed = false;
  for (const Expr& e : in) {
    out->push_back(self->VisitExpr(e));
    changed |= !out->back().same_as(e);
  }
  return changed;
}

}  // namespace

Expr ExprMutator::VisitExpr_(const CallNode* op) {
  std::vector<Expr> args;
  bool changed = MutateAll(this, op->args, &args);
  if (op->callee.defined()) {
    Expr callee = VisitExpr(op->callee);
    if (!changed && callee.same_as(op->callee)) return Expr(op);
    return MakeCall(Downcast<Function>(callee), std::move(args), op->name_hint);
  }
  if (!changed) return Expr(op);
  return MakeCall(op->op, std::move(args), op->attrs, op->name_hint);
}

Expr ExprMutator::VisitExpr_(const TupleNode* op) {
  std::vector<Expr> fields;
  if (!MutateAll(this, op->fields, &fields)) return Expr(op);
  return MakeTuple(std::move(fields));
}

Expr ExprMutator::VisitExpr_(const TupleGetItemNode* op) {
  Expr tuple = VisitExpr(op->tuple);
  if (tuple.same_as(op->tuple)) return Expr(op);
  // A tuple that became a Tuple node again: take the field directly.
  if (const auto* fields = tuple.as<TupleNode>()) return fields->fields[op->index];
  return MakeTupleGetItem(std::move(tuple), op->index);
}

Expr ExprMutator::VisitExpr_(const FunctionNode* op) {
  std::vector<Var> params;
  bool changed = false;
  for (const Var& param : op->params) {
    Expr mutated = VisitExpr(param);
    const auto* var = mutated.as<VarNode>();
    LOOM_ICHECK(var) << "a mutator replaced parameter '" << param->name_hint
                     << "' by a non-variable";
    params.push_back(Var(var));
    changed |= !mutated.same_as(param);
  }
  Expr body = VisitExpr(op->body);
  if (!changed && body.same_as(op->body)) return Expr(op);
  return MakeFunction(std::move(params), std::move(body), op->attrs);
}

namespace {

class PostOrderVisitor : public ExprVisitor {
 public:
  PostOrderVisitor(const std::function<void(const Expr&)>& fn, bool enter_callees)
      : fn_(fn), enter_callees_(enter_callees) {}
  void VisitExpr(const Expr& e) override {
    if (visited_.count(e.get())) return;
    ExprVisitor::VisitExpr(e);
    fn_(e);
  }
  void VisitExpr_(const CallNode* op) override {
    if (enter_callees_) return ExprVisitor::VisitExpr_(op);
    for (const Expr& arg : op->args) VisitExpr(arg);
  }

 private:
  const std::function<void(const Expr&)>& fn_;
  const bool enter_callees_;
};

}  // namespace

void PostOrderVisit(const Expr& e, const std::function<void(const Expr&)>& fn) {
  PostOrderVisitor(fn, /*enter_callees=*/true).VisitExpr(e);
}

void PostOrderVisitDataflow(const Expr& e, const std::function<void(const Expr&)>& fn) {
  PostOrderVisitor(fn, /*enter_callees=*/false).VisitExpr(e);
}

std::vector<Expr> DataflowOperands(const Expr& e) {
  if (const auto* call = e.as<CallNode>()) return call->args;
  if (const auto* tuple = e.as<TupleNode>()) return tuple->fields;
  if (const auto* item = e.as<TupleGetItemNode>()) return {item->tuple};
  return {};
}

}  // namespace loom::graph
