// FoldUopLoop (loom/vta/compiler/passes.h): a loop around a micro-op kernel moves into the
// kernel as one of its (at most two) hardware loops, so that one GEMM or ALU instruction does
// the loop's work.
#include <vector>

#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/tir/analysis.h"
#include "loom/tir/stmt_functor.h"
#include "loom/vta/compiler/passes.h"

namespace loom::vta {
namespace {

const DataType kI32 = DataType::Int(32);

// The micro-op calls of a kernel body: VTAUopPush, VTAUopLoopBegin, VTAUopLoopEnd.
const CallNode* KernelCall(const Stmt& stmt, const char* name) {
  const auto* evaluate = stmt.as<EvaluateNode>();
  if (evaluate == nullptr) return nullptr;
  const auto* call = evaluate->value.as<CallNode>();
  if (call == nullptr || call->op.name() != "call_extern") return nullptr;
  const auto* callee = call->args[0].as<StringImmNode>();
  return callee != nullptr && callee->value == name ? call : nullptr;
}

std::vector<Stmt> Flatten(const Stmt& stmt) {
  if (const auto* seq = stmt.as<SeqStmtNode>()) return {seq->seq.begin(), seq->seq.end()};
  return {stmt};
}

class UopLoopFolder : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitStmt_;

  PrimExpr VisitExpr(const PrimExpr& e) override { return e; }

  Stmt VisitStmt_(const ForNode* op) override {
    // Inner loops first: folded, they become the kernel's inner hardware loop.
    Stmt visited = StmtExprMutator::VisitStmt_(op);
    const auto* loop = visited.as<ForNode>();
    Stmt folded = loop != nullptr ? Fold(loop, loop->body) : Stmt();
    return folded.defined() ? folded : visited;
  }

 private:
  // The kernel `body` (the loop's body) with the loop folded in, or nothing when it cannot be.
  Stmt Fold(const ForNode* loop, const Stmt& body) {
    int64_t min = -1, extent = 0;
    if (loop->for_kind != ForKind::kSerial || !IsConstInt(loop->min, &min) || min != 0 ||
        !IsConstInt(loop->extent, &extent)) {
      return Stmt();
    }
    const auto* coproc = body.as<AttrStmtNode>();
    if (coproc == nullptr || coproc->attr_key != Environment::kCoprocScope) return Stmt();
    const auto* uop_scope = coproc->body.as<AttrStmtNode>();
    if (uop_scope == nullptr || uop_scope->attr_key != Environment::kCoprocUopScope) return Stmt();
    const Var& var = loop->loop_var;
    if (tir::UsesVar(coproc->value, var) || tir::UsesVar(uop_scope->value, var)) return Stmt();
    std::vector<Stmt> kernel = Flatten(uop_scope->body);
    int open_loops = 0;
    for (const Stmt& stmt : kernel) open_loops += KernelCall(stmt, "VTAUopLoopBegin") != nullptr;
    if (open_loops >= 2) return Stmt();  // the hardware has two loops
    // Every micro-op's dst, src and wgt index (call arguments 3, 4, 5) must move by the same
    // factor per iteration: the loop's factors are the kernel's, not the micro-op's.
    std::vector<int64_t> factors;
    tir::VarMap zero{{var, make_const(var.dtype(), int64_t{0})}};
    tir::VarMap one{{var, make_const(var.dtype(), int64_t{1})}};
    std::vector<Stmt> rebased;
    for (const Stmt& stmt : kernel) {
      const CallNode* push = KernelCall(stmt, "VTAUopPush");
      if (push == nullptr) {
        if (tir::UsesVar(stmt, var)) return Stmt();
        rebased.push_back(stmt);
        continue;
      }
      Array<PrimExpr> args = push->args;
      for (size_t a = 0; a < args.size(); ++a) {
        if (a >= 3 && a <= 5) continue;
        if (tir::UsesVar(args[a], var)) return Stmt();
      }
      for (size_t a = 3; a <= 5; ++a) {
        PrimExpr base = analyzer_.Simplify(tir::Substitute(args[a], zero));
        int64_t factor = 0;
        if (!IsConstInt(analyzer_.Simplify(tir::Substitute(args[a], one) - base), &factor) ||
            factor < 0 ||
            !analyzer_.CanProveEqual(args[a], base + make_const(args[a].dtype(), factor) * var)) {
          return Stmt();
        }
        if (factors.size() < 3) {
          factors.push_back(factor);
        } else if (factors[a - 3] != factor) {
          return Stmt();
        }
        args[a] = base;
      }
      rebased.push_back(Evaluate(Call(push->dtype, push->op, args)));
    }
    if (factors.empty()) return Stmt();  // no micro-op: nothing to fold
    auto i32 = [](int64_t v) { return make_const(kI32, v); };
    std::vector<Stmt> folded = {
        Evaluate(call_extern(kI32, "VTAUopLoopBegin",
                             {i32(extent), i32(factors[0]), i32(factors[1]), i32(factors[2])}))};
    folded.insert(folded.end(), rebased.begin(), rebased.end());
    folded.push_back(Evaluate(call_extern(kI32, "VTAUopLoopEnd", {})));
    return AttrStmt(
        coproc->node, coproc->attr_key, coproc->value,
        AttrStmt(uop_scope->node, uop_scope->attr_key, uop_scope->value, SeqStmt(folded)));
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
