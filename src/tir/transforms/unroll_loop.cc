// UnrollLoop: replaces a loop by copies of its body, one per iteration, with the loop
// variable replaced by the iteration's value. Inner loops are unrolled first.
#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/tir/analysis.h"
#include "loom/tir/stmt_functor.h"
#include "loom/tir/transform.h"

namespace loom::tir::transform {

namespace {

class LoopUnroller : public StmtExprMutator {
 public:
  explicit LoopUnroller(int64_t auto_max_step) : auto_max_step_(auto_max_step) {}

  using StmtExprMutator::VisitStmt_;

  PrimExpr VisitExpr(const PrimExpr& e) override { return e; }

  Stmt VisitStmt_(const ForNode* op) override {
    Stmt visited = StmtExprMutator::VisitStmt_(op);
    const auto* loop = visited.as<ForNode>();
    int64_t extent = 0;
    bool constant = IsConstInt(loop->extent, &extent);
    if (loop->for_kind == ForKind::kUnrolled) {
      LOOM_CHECK_USER(constant)
          << "cannot unroll the loop over '" << loop->loop_var.name() << "': its extent "
          << ToScript(loop->extent) << " is not a constant; split the loop by a constant "
          << "factor and unroll the inner loop, or make it serial";
    } else if (!(loop->for_kind == ForKind::kSerial && constant && extent <= auto_max_step_)) {
      return visited;
    }
    return Unroll(loop, extent);
  }

 private:
  static Stmt Unroll(const ForNode* loop, int64_t extent) {
    if (extent <= 0) return Evaluate(0);
    // A start that reads memory is evaluated once, before the copies, as the loop did.
    PrimExpr start = loop->min;
    Var start_var;
    if (!IsMemoryIndependent(start)) {
      start_var = Var(loop->loop_var.name() + "_start", start.dtype());
      start = start_var;
    }
    Array<Stmt> copies;
    for (int64_t i = 0; i < extent; ++i) {
      PrimExpr value = i == 0 ? start : start + make_const(start.dtype(), i);
      copies.push_back(Substitute(loop->body, VarMap{{loop->loop_var, value}}));
    }
    Stmt unrolled = copies.size() == 1 ? copies[0] : SeqStmt(copies);
    if (start_var.defined()) unrolled = LetStmt(start_var, loop->min, unrolled);
    return unrolled;
  }

  int64_t auto_max_step_;
};

}  // namespace

Pass UnrollLoop() {
  auto rewrite = [](const PrimFunc& func, const IRModule&, const PassContext& context) {
    int64_t auto_max_step = context.GetConfig<int64_t>("tir.UnrollLoop.auto_max_step", 0);
    Stmt body = LoopUnroller(auto_max_step).VisitStmt(func->body);
    return WithBody(func, body);
  };
  return CreatePrimFuncPass(rewrite, 1, "UnrollLoop");
}

}  // namespace loom::tir::transform
