// LiftAllocToScopeBegin (loom/vta/compiler/passes.h): allocations nested in a sequence move to
// the beginning of the loop body (or function) that holds it, so that the statements of one
// iteration form one flat sequence. Schedules nest each stage's allocation around its
// consumers (the weight copy inside the scope of the input copy's buffer); flat, consecutive
// statements on one queue can share a co-processor scope and its tokens.
#include <vector>

#include "loom/tir/analysis.h"
#include "loom/tir/stmt_functor.h"
#include "loom/vta/compiler/passes.h"

namespace loom::vta {
namespace {

class AllocLifter : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitStmt_;

  PrimExpr VisitExpr(const PrimExpr& e) override { return e; }

  // The beginning of a scope: its body without the allocations nested in its sequences,
  // wrapped in them.
  Stmt LiftInto(const Stmt& body) {
    std::vector<const AllocateNode*> lifted;  // nodes of `visited`
    const Stmt visited = VisitStmt(body);
    Stmt flat = Strip(visited, &lifted);
    for (auto it = lifted.rbegin(); it != lifted.rend(); ++it) {
      const AllocateNode* a = *it;
      flat = Allocate(a->buffer_var, a->dtype, a->extents, a->condition, flat, a->storage_scope);
    }
    return flat;
  }

  Stmt VisitStmt_(const ForNode* op) override {
    return For(op->loop_var, op->min, op->extent, op->for_kind, LiftInto(op->body),
               op->thread_binding, op->annotations);
  }

 private:
  // `stmt` without the allocations met through sequences and allocations, which go to
  // `lifted` (outermost first). An allocation whose size or condition is not a constant stays
  // where it is.
  static Stmt Strip(const Stmt& stmt, std::vector<const AllocateNode*>* lifted) {
    if (const auto* allocate = stmt.as<AllocateNode>()) {
      if (allocate->extents.size() > 0 && HasConstantSize(allocate)) {
        lifted->push_back(allocate);
        return Strip(allocate->body, lifted);
      }
      return stmt;
    }
    if (const auto* seq = stmt.as<SeqStmtNode>()) {
      Array<Stmt> children;
      for (const Stmt& child : seq->seq) {
        Stmt stripped = Strip(child, lifted);
        if (const auto* nested = stripped.as<SeqStmtNode>()) {
          children.insert(children.end(), nested->seq.begin(), nested->seq.end());
        } else {
          children.push_back(stripped);
        }
      }
      return SeqStmt(children);
    }
    return stmt;
  }

  // Whether the allocation's size (and condition) is a constant, known wherever the scope
  // begins (VTA's buffers are planned at compile time, so only these matter).
  static bool HasConstantSize(const AllocateNode* allocate) {
    for (const PrimExpr& extent : allocate->extents) {
      if (!extent.as<IntImmNode>()) return false;
    }
    const auto* condition = allocate->condition.as<IntImmNode>();
    return condition != nullptr && condition->value != 0;
  }
};

}  // namespace

tir::transform::Pass LiftAllocToScopeBegin() {
  auto rewrite = [](const PrimFunc& func, const IRModule&, const tir::transform::PassContext&) {
    return tir::transform::WithBody(func, AllocLifter().LiftInto(func->body));
  };
  return tir::transform::CreatePrimFuncPass(rewrite, 0, "vta.LiftAllocToScopeBegin");
}

}  // namespace loom::vta
