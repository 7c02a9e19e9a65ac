#include "loom/tir/stmt_functor.h"

namespace loom::tir {

namespace {

class VarSubstituter : public StmtExprMutator {
 public:
  explicit VarSubstituter(const std::function<std::optional<PrimExpr>(const Var&)>& replace)
      : replace_(replace) {}

  using StmtExprMutator::VisitExpr_;
  PrimExpr VisitExpr_(const VarNode* op) override {
    Var var(op);
    if (std::optional<PrimExpr> replacement = replace_(var)) return *replacement;
    return var;
  }

 private:
  const std::function<std::optional<PrimExpr>(const Var&)>& replace_;
};

std::function<std::optional<PrimExpr>(const Var&)> Lookup(const VarMap& vmap) {
  return [&vmap](const Var& var) -> std::optional<PrimExpr> {
    auto it = vmap.find(var);
    if (it == vmap.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace

PrimExpr Substitute(const PrimExpr& expr,
                    const std::function<std::optional<PrimExpr>(const Var&)>& replace) {
  return VarSubstituter(replace).VisitExpr(expr);
}

Stmt Substitute(const Stmt& stmt,
                const std::function<std::optional<PrimExpr>(const Var&)>& replace) {
  return VarSubstituter(replace).VisitStmt(stmt);
}

PrimExpr Substitute(const PrimExpr& expr, const VarMap& vmap) {
  if (vmap.empty()) return expr;
  return Substitute(expr, Lookup(vmap));
}

Stmt Substitute(const Stmt& stmt, const VarMap& vmap) {
  if (vmap.empty()) return stmt;
  return Substitute(stmt, Lookup(vmap));
}

}  // namespace loom::tir
