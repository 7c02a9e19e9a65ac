// FoldUopLoop (loom/vta/compiler/passes.h): the outermost loops of a micro-op kernel's body (the
// loops LiftUopScope moved into it) become its hardware loops, two at most, so that one GEMM or
// ALU instruction does their work; the loops inside them stay in the generating function, which
// pushes one micro-op per iteration.
#include <vector>

#include "loom/ir/expr_ops.h"
#include "loom/tir/stmt_functor.h"
#include "loom/vta/compiler/passes.h"
#include "vta/compiler/uop_kernel.h"

namespace loom::vta {
namespace {

const DataType kI32 = DataType::Int(32);

// The hardware's loops per instruction.
constexpr int kHardwareLoops = 2;

class UopLoopFolder : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitStmt_;

  PrimExpr VisitExpr(const PrimExpr& e) override { return e; }

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    const detail::Kernel kernel = detail::AsKernel(Stmt(op));
    if (!kernel) return StmtExprMutator::VisitStmt_(op);
    return kernel.WithBody(Fold(kernel.uop_scope->body, kHardwareLoops));
  }

 private:
  // `body` with up to `loops` of its outermost loops as hardware loops.
  Stmt Fold(const Stmt& body, int loops) {
    const auto* loop = body.as<ForNode>();
    if (loops == 0 || loop == nullptr) return body;
    const std::optional<int64_t> extent = detail::SimpleLoopExtent(loop);
    if (!extent) return body;
    const auto factors = detail::LoopFactors(loop->loop_var, loop->body, &analyzer_);
    if (!factors) return body;
    // The micro-ops of iteration 0; the hardware adds the factors per iteration.
    Stmt first = SimplifyIndices(tir::Substitute(
        loop->body, tir::VarMap{{loop->loop_var, make_const(loop->loop_var.dtype(), int64_t{0})}}));
    auto i32 = [](int64_t v) { return make_const(kI32, v); };
    return SeqStmt({Evaluate(call_extern(kI32, "VTAUopLoopBegin",
                                         {i32(*extent), i32((*factors)[0]), i32((*factors)[1]),
                                          i32((*factors)[2])})),
                    Fold(first, loops - 1), Evaluate(call_extern(kI32, "VTAUopLoopEnd", {}))});
  }

  // The micro-ops' arguments simplified (the substituted zeros folded away).
  Stmt SimplifyIndices(const Stmt& stmt) {
    class Simplifier : public StmtExprMutator {
     public:
      explicit Simplifier(arith::Analyzer* analyzer) : analyzer_(analyzer) {}
      PrimExpr VisitExpr(const PrimExpr& e) override { return analyzer_->Simplify(e); }

     private:
      arith::Analyzer* analyzer_;
    };
    return Simplifier(&analyzer_).VisitStmt(stmt);
  }

  arith::Analyzer analyzer_;
};

}  // namespace

tir::transform::Pass FoldUopLoop() {
  auto fold = [](const PrimFunc& func, const IRModule&, const tir::transform::PassContext&) {
    return tir::transform::WithBody(func, UopLoopFolder().VisitStmt(func->body));
  };
  return tir::transform::CreatePrimFuncPass(fold, 0, "vta.FoldUopLoop");
}

}  // namespace loom::vta
