// Rewriting utilities over TIR statements and expressions.
#pragma once

#include <functional>
#include <optional>
#include <unordered_map>

#include "loom/ir/functor.h"

namespace loom::tir {

using VarMap = std::unordered_map<Var, PrimExpr, ObjectHash, ObjectEqual>;

// Replaces every use of a variable in `vmap` by its expression (rebuilding only what
// changes; results are not simplified). Variables in defining positions (a loop's or a
// Let's own variable) and inside buffers (data, shape) are left alone: substitution is for
// uses, so callers substitute variables whose definitions they are removing.
PrimExpr Substitute(const PrimExpr& expr, const VarMap& vmap);
Stmt Substitute(const Stmt& stmt, const VarMap& vmap);
// The same with a function: the replacement of a variable, or nullopt to keep it.
PrimExpr Substitute(const PrimExpr& expr,
                    const std::function<std::optional<PrimExpr>(const Var&)>& replace);
Stmt Substitute(const Stmt& stmt,
                const std::function<std::optional<PrimExpr>(const Var&)>& replace);

// A reducer's results for left operands `lhs` and right operands `rhs` (one each per value
// of its tuple): its `result` expressions with its lhs and rhs variables substituted.
Array<PrimExpr> ApplyCombiner(const CommReducer& combiner, const Array<PrimExpr>& lhs,
                              const Array<PrimExpr>& rhs);

// A mutator for passes that rename storage: every variable use goes through RewriteVar, and
// the buffer of every load, store and buffer-attribute statement through RewriteBuffer (an
// attribute statement on a variable through RewriteVar). Nodes are rebuilt only where
// something changed.
class StorageRenamer : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  PrimExpr VisitExpr_(const VarNode* op) override { return RewriteVar(op); }
  PrimExpr VisitExpr_(const BufferLoadNode* op) override;
  Stmt VisitStmt_(const BufferStoreNode* op) override;
  Stmt VisitStmt_(const AttrStmtNode* op) override;

 protected:
  virtual PrimExpr RewriteVar(const VarNode* op) = 0;
  virtual Buffer RewriteBuffer(const Buffer& buffer) = 0;
};

}  // namespace loom::tir
