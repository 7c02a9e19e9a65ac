// RemoveNoOp: statements that do nothing go, bottom-up, so that a loop or a branch whose
// body became empty goes with it. What remains of a statement that did nothing at all is the
// canonical no-op, T.evaluate(0).
#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/ir/structural.h"
#include "loom/tir/analysis.h"
#include "loom/tir/transform.h"

namespace loom::tir::transform {

namespace {

Stmt NoOp() { return Evaluate(0); }

// `expr` evaluated only for its side effect, or nothing when it has none.
Stmt KeepEffect(const PrimExpr& expr) { return HasSideEffect(expr) ? Evaluate(expr) : NoOp(); }

class NoOpRemover : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitStmt_;

  // Expressions are left as they are; only statements are removed.
  PrimExpr VisitExpr(const PrimExpr& e) override { return e; }

  Stmt VisitStmt_(const EvaluateNode* op) override {
    if (IsNoOp(Stmt(op)) && !IsConstInt(op->value)) return NoOp();
    return Stmt(op);
  }

  Stmt VisitStmt_(const SeqStmtNode* op) override {
    Array<Stmt> kept;
    bool changed = false;
    for (const Stmt& s : op->seq) {
      Stmt visited = VisitStmt(s);
      changed |= !visited.same_as(s);
      if (IsNoOp(visited)) {
        changed = true;
      } else if (const auto* nested = visited.as<SeqStmtNode>()) {
        kept.insert(kept.end(), nested->seq.begin(), nested->seq.end());
        changed = true;
      } else {
        kept.push_back(visited);
      }
    }
    if (!changed) return Stmt(op);
    if (kept.empty()) return NoOp();
    if (kept.size() == 1) return kept[0];
    return SeqStmt(kept);
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    const auto* load = op->value.as<BufferLoadNode>();
    if (load && SameBuffer(load->buffer, op->buffer) &&
        load->indices.size() == op->indices.size()) {
      bool same_element = true;
      for (size_t i = 0; i < op->indices.size(); ++i) {
        same_element &= StructuralEqual(load->indices[i], op->indices[i]);
      }
      if (same_element) return NoOp();
    }
    return Stmt(op);
  }

  Stmt VisitStmt_(const ForNode* op) override {
    Stmt visited = StmtExprMutator::VisitStmt_(op);
    const auto* loop = visited.as<ForNode>();
    int64_t extent = 0;
    bool empty = IsConstInt(loop->extent, &extent) && extent <= 0;
    if ((empty || IsNoOp(loop->body)) && !HasSideEffect(loop->min) &&
        !HasSideEffect(loop->extent)) {
      return NoOp();
    }
    return visited;
  }

  Stmt VisitStmt_(const IfThenElseNode* op) override {
    Stmt then_case = VisitStmt(op->then_case);
    Stmt else_case = op->else_case.defined() ? VisitStmt(op->else_case) : Stmt();
    if (else_case.defined() && IsNoOp(else_case)) else_case = Stmt();
    if (IsNoOp(then_case)) {
      if (!else_case.defined()) return KeepEffect(op->condition);
      return IfThenElse(!op->condition, else_case, Stmt());
    }
    if (then_case.same_as(op->then_case) && else_case.same_as(op->else_case)) return Stmt(op);
    return IfThenElse(op->condition, then_case, else_case);
  }

  Stmt VisitStmt_(const LetStmtNode* op) override {
    Stmt visited = StmtExprMutator::VisitStmt_(op);
    const auto* let = visited.as<LetStmtNode>();
    return IsNoOp(let->body) ? KeepEffect(let->value) : visited;
  }

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    Stmt visited = StmtExprMutator::VisitStmt_(op);
    return IsNoOp(visited.as<AttrStmtNode>()->body) ? NoOp() : visited;
  }

  Stmt VisitStmt_(const AllocateNode* op) override {
    Stmt visited = StmtExprMutator::VisitStmt_(op);
    return IsNoOp(visited.as<AllocateNode>()->body) ? NoOp() : visited;
  }

 private:
  static bool SameBuffer(const Buffer& a, const Buffer& b) {
    return a.same_as(b) || (a->data.same_as(b->data) && StructuralEqual(a, b));
  }
};

}  // namespace

Pass RemoveNoOp() {
  auto rewrite = [](const PrimFunc& func, const IRModule&, const PassContext&) {
    Stmt body = NoOpRemover().VisitStmt(func->body);
    return WithBody(func, body);
  };
  return CreatePrimFuncPass(rewrite, 1, "RemoveNoOp");
}

}  // namespace loom::tir::transform
