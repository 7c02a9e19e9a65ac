// Simplify: every expression through an arith::Analyzer that knows what holds at that point
// of the program -- loop variables' ranges, enclosing if conditions, pure let bindings.
//
// Facts and bindings that read memory are never used: a store between the fact and its use
// could change what they say.
#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/tir/analysis.h"
#include "loom/tir/stmt_functor.h"
#include "loom/tir/transform.h"

namespace loom::tir::transform {

namespace {

Stmt NoOp() { return Evaluate(0); }

class StmtSimplifier : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitStmt_;

  PrimExpr VisitExpr(const PrimExpr& e) override { return analyzer_.Simplify(e); }

  Stmt VisitStmt_(const ForNode* op) override {
    PrimExpr min = VisitExpr(op->min);
    PrimExpr extent = VisitExpr(op->extent);
    int64_t constant_extent = 0;
    bool is_constant = IsConstInt(extent, &constant_extent);
    if (is_constant && constant_extent <= 0) return NoOp();
    // A thread-bound loop of extent 1 still launches its thread axis: keep it.
    if (is_constant && constant_extent == 1 && op->for_kind != ForKind::kThreadBinding) {
      if (IsMemoryIndependent(min)) {
        return VisitStmt(Substitute(op->body, VarMap{{op->loop_var, min}}));
      }
      return VisitStmt(LetStmt(op->loop_var, min, op->body));
    }
    analyzer_.Bind(op->loop_var, Range(min, extent), /*allow_override=*/true);
    Stmt body;
    if (!is_constant && IsMemoryIndependent(min) && IsMemoryIndependent(extent)) {
      arith::ConstraintContext in_range(&analyzer_, op->loop_var < min + extent);
      body = VisitStmt(op->body);
    } else {
      body = VisitStmt(op->body);
    }
    if (min.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body)) {
      return Stmt(op);
    }
    return For(op->loop_var, min, extent, op->for_kind, body, op->thread_binding,
               op->annotations);
  }

  Stmt VisitStmt_(const IfThenElseNode* op) override {
    PrimExpr condition = VisitExpr(op->condition);
    if (is_const_true(condition)) return VisitStmt(op->then_case);
    if (is_const_false(condition)) {
      return op->else_case.defined() ? VisitStmt(op->else_case) : NoOp();
    }
    bool usable = IsMemoryIndependent(condition);
    Stmt then_case = VisitUnder(usable ? condition : PrimExpr(), op->then_case);
    Stmt else_case;
    if (op->else_case.defined()) {
      else_case = VisitUnder(usable ? !condition : PrimExpr(), op->else_case);
    }
    if (condition.same_as(op->condition) && then_case.same_as(op->then_case) &&
        else_case.same_as(op->else_case)) {
      return Stmt(op);
    }
    return IfThenElse(condition, then_case, else_case);
  }

  Stmt VisitStmt_(const LetStmtNode* op) override {
    PrimExpr value = VisitExpr(op->value);
    if (IsMemoryIndependent(value)) {
      // The simplifiers substitute the binding; the LetStmt goes when nothing else uses it.
      analyzer_.Bind(op->var, value, /*allow_override=*/true);
      Stmt body = VisitStmt(op->body);
      if (!UsesVar(body, op->var)) return body;
      if (value.same_as(op->value) && body.same_as(op->body)) return Stmt(op);
      return LetStmt(op->var, value, body);
    }
    Stmt body = VisitStmt(op->body);
    if (value.same_as(op->value) && body.same_as(op->body)) return Stmt(op);
    return LetStmt(op->var, value, body);
  }

  Stmt VisitStmt_(const AssertStmtNode* op) override {
    PrimExpr condition = VisitExpr(op->condition);
    if (is_const_true(condition)) return VisitStmt(op->body);
    Stmt body = VisitUnder(IsMemoryIndependent(condition) ? condition : PrimExpr(), op->body);
    if (condition.same_as(op->condition) && body.same_as(op->body)) return Stmt(op);
    return AssertStmt(condition, op->message, body);
  }

 private:
  // Visits `stmt` with `fact` (when defined) assumed.
  Stmt VisitUnder(const PrimExpr& fact, const Stmt& stmt) {
    if (!fact.defined()) return VisitStmt(stmt);
    arith::ConstraintContext scope(&analyzer_, fact);
    return VisitStmt(stmt);
  }

  arith::Analyzer analyzer_;
};

}  // namespace

Pass Simplify() {
  auto rewrite = [](const PrimFunc& func, const IRModule&, const PassContext&) {
    Stmt body = StmtSimplifier().VisitStmt(func->body);
    return WithBody(func, body);
  };
  return CreatePrimFuncPass(rewrite, 0, "Simplify");
}

}  // namespace loom::tir::transform
