// LiftUopScope (loom/vta/compiler/passes.h): a loop whose body is one micro-op kernel moves
// into the kernel, so that one instruction does the work of all its iterations: FoldUopLoop
// makes the kernel's two outermost loops hardware loops, and the generating function pushes a
// micro-op per iteration of the loops inside them. Only loops that can be hardware loops are
// lifted (each iteration moves every micro-op's indices by the same factors), inner loops
// first, while the kernel's micro-ops fit their share of the micro-op buffer.
#include <vector>

#include "loom/tir/analysis.h"
#include "loom/tir/stmt_functor.h"
#include "loom/vta/compiler/passes.h"
#include "vta/compiler/uop_kernel.h"

namespace loom::vta {
namespace {

// The micro-ops `body` pushes, each loop counted by its extent.
int64_t MicroOps(const Stmt& body) {
  if (const auto* seq = body.as<SeqStmtNode>()) {
    int64_t total = 0;
    for (const Stmt& s : seq->seq) total += MicroOps(s);
    return total;
  }
  if (const auto* loop = body.as<ForNode>()) {
    const std::optional<int64_t> extent = detail::SimpleLoopExtent(loop);
    return extent ? *extent * MicroOps(loop->body) : 0;
  }
  return detail::KernelCall(body, "VTAUopPush") != nullptr ? 1 : 0;
}

// The micro-ops a kernel body holds once its two outermost loops are hardware loops.
int64_t MicroOpsAfterFolding(const Stmt& body) {
  Stmt inner = body;
  for (int level = 0; level < 2; ++level) {
    const auto* loop = inner.as<ForNode>();
    if (loop == nullptr) break;
    inner = loop->body;
  }
  return MicroOps(inner);
}

class UopScopeLifter : public StmtExprMutator {
 public:
  explicit UopScopeLifter(int64_t max_micro_ops) : max_micro_ops_(max_micro_ops) {}

  using StmtExprMutator::VisitStmt_;

  PrimExpr VisitExpr(const PrimExpr& e) override { return e; }

  Stmt VisitStmt_(const ForNode* op) override {
    // Inner loops first: they end up innermost in the kernel.
    Stmt visited = StmtExprMutator::VisitStmt_(op);
    const auto* loop = visited.as<ForNode>();
    if (loop == nullptr) return visited;
    const detail::Kernel kernel = detail::AsKernel(loop->body);
    if (!kernel || !detail::SimpleLoopExtent(loop) ||
        tir::UsesVar(kernel.coproc->value, loop->loop_var) ||
        tir::UsesVar(kernel.uop_scope->value, loop->loop_var) ||
        !detail::LoopFactors(loop->loop_var, kernel.uop_scope->body, &analyzer_)) {
      return visited;
    }
    Stmt lifted = For(loop->loop_var, loop->min, loop->extent, loop->for_kind,
                      kernel.uop_scope->body, loop->thread_binding, loop->annotations);
    if (MicroOpsAfterFolding(lifted) > max_micro_ops_) return visited;
    return kernel.WithBody(lifted);
  }

 private:
  int64_t max_micro_ops_;
  arith::Analyzer analyzer_;
};

}  // namespace

tir::transform::Pass LiftUopScope(const Environment& env) {
  // A kernel may take an eighth of the micro-op buffer, so that the kernels of a loop body
  // (reset, GEMM, ALU stages, per virtual thread) stay resident together.
  const int64_t max_micro_ops = env.Memory(Environment::kUopScope).depth / 8;
  auto lift = [max_micro_ops](const PrimFunc& func, const IRModule&,
                              const tir::transform::PassContext&) {
    return tir::transform::WithBody(func, UopScopeLifter(max_micro_ops).VisitStmt(func->body));
  };
  return tir::transform::CreatePrimFuncPass(lift, 0, "vta.LiftUopScope");
}

}  // namespace loom::vta
