// Micro-op kernels as the VTA passes see them (src/vta/compiler/uop_kernel.h).
#include "vta/compiler/uop_kernel.h"

#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/tir/analysis.h"
#include "loom/tir/stmt_functor.h"
#include "loom/vta/compiler/environment.h"

namespace loom::vta::detail {

Stmt Kernel::WithBody(const Stmt& body) const {
  return AttrStmt(coproc->node, coproc->attr_key, coproc->value,
                  AttrStmt(uop_scope->node, uop_scope->attr_key, uop_scope->value, body));
}

Kernel AsKernel(const Stmt& stmt) {
  const auto* coproc = stmt.as<AttrStmtNode>();
  if (coproc == nullptr || coproc->attr_key != Environment::kCoprocScope) return {};
  const auto* uop_scope = coproc->body.as<AttrStmtNode>();
  if (uop_scope == nullptr || uop_scope->attr_key != Environment::kCoprocUopScope) return {};
  return {coproc, uop_scope};
}

const CallNode* KernelCall(const Stmt& stmt, const char* name) {
  const auto* evaluate = stmt.as<EvaluateNode>();
  if (evaluate == nullptr) return nullptr;
  const auto* call = evaluate->value.as<CallNode>();
  if (call == nullptr || call->op.name() != "call_extern") return nullptr;
  const auto* callee = call->args[0].as<StringImmNode>();
  return callee != nullptr && callee->value == name ? call : nullptr;
}

namespace {

// Whether `stmt`'s own expressions (not its child statements) read `var`.
bool UsesVarOutsideChildren(const Stmt& stmt, const Var& var) {
  auto uses = [&](const ObjectRef& node) { return node.defined() && tir::UsesVar(node, var); };
  if (const auto* loop = stmt.as<ForNode>()) return uses(loop->min) || uses(loop->extent);
  if (const auto* branch = stmt.as<IfThenElseNode>()) return uses(branch->condition);
  if (const auto* let = stmt.as<LetStmtNode>()) return uses(let->value);
  if (const auto* attr = stmt.as<AttrStmtNode>()) return uses(attr->value) || uses(attr->node);
  if (const auto* loop = stmt.as<WhileNode>()) return uses(loop->condition);
  if (const auto* check = stmt.as<AssertStmtNode>()) {
    return uses(check->condition) || uses(check->message);
  }
  if (const auto* allocate = stmt.as<AllocateNode>()) {
    for (const PrimExpr& extent : allocate->extents) {
      if (uses(extent)) return true;
    }
    return uses(allocate->condition);
  }
  if (stmt.as<SeqStmtNode>()) return false;
  return uses(stmt);  // a store, an evaluation
}

}  // namespace

std::optional<std::array<int64_t, 3>> LoopFactors(const Var& loop_var, const Stmt& body,
                                                  arith::Analyzer* analyzer) {
  std::optional<std::array<int64_t, 3>> factors;
  bool foldable = true;
  const tir::VarMap zero{{loop_var, make_const(loop_var.dtype(), int64_t{0})}};
  const tir::VarMap one{{loop_var, make_const(loop_var.dtype(), int64_t{1})}};
  PostOrderVisit(body, [&](const ObjectRef& node) {
    if (!foldable || node.as<StmtNode>() == nullptr) return;
    const Stmt s = Stmt::FromObject(node.get());
    const CallNode* push = KernelCall(s, "VTAUopPush");
    if (push == nullptr) {
      // Other statements must not depend on the variable (a loop's extent, a branch's
      // condition, a let's value, a hardware loop's factors): the hardware repeats the same
      // micro-ops. Their children are checked on their own.
      foldable = !UsesVarOutsideChildren(s, loop_var);
      return;
    }
    std::array<int64_t, 3> moved{};
    for (size_t a = 0; a < push->args.size() && foldable; ++a) {
      const PrimExpr& index = push->args[a];
      if (a < 3 || a > 5) {
        foldable = !tir::UsesVar(index, loop_var);
        continue;
      }
      PrimExpr base = analyzer->Simplify(tir::Substitute(index, zero));
      int64_t factor = 0;
      foldable =
          IsConstInt(analyzer->Simplify(tir::Substitute(index, one) - base), &factor) &&
          factor >= 0 &&
          analyzer->CanProveEqual(index, base + make_const(index.dtype(), factor) * loop_var);
      moved[a - 3] = factor;
    }
    if (!foldable) return;
    if (factors.has_value() && *factors != moved) foldable = false;
    factors = moved;
  });
  return foldable ? factors : std::nullopt;
}

std::optional<int64_t> SimpleLoopExtent(const ForNode* loop) {
  int64_t min = -1, extent = 0;
  if (loop->for_kind != ForKind::kSerial || !IsConstInt(loop->min, &min) || min != 0 ||
      !IsConstInt(loop->extent, &extent) || extent < 1 || extent > kMaxHardwareLoopExtent) {
    return std::nullopt;
  }
  return extent;
}

}  // namespace loom::vta::detail
