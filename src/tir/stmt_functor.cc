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

Array<PrimExpr> ApplyCombiner(const CommReducer& combiner, const Array<PrimExpr>& lhs,
                              const Array<PrimExpr>& rhs) {
  VarMap operands;
  for (size_t k = 0; k < lhs.size(); ++k) {
    operands[combiner->lhs[k]] = lhs[k];
    operands[combiner->rhs[k]] = rhs[k];
  }
  Array<PrimExpr> results;
  for (const PrimExpr& result : combiner->result) results.push_back(Substitute(result, operands));
  return results;
}

PrimExpr StorageRenamer::VisitExpr_(const BufferLoadNode* op) {
  PrimExpr visited = StmtExprMutator::VisitExpr_(op);
  const auto* load = visited.as<BufferLoadNode>();
  Buffer buffer = RewriteBuffer(load->buffer);
  if (buffer.same_as(load->buffer)) return visited;
  return BufferLoad(buffer, load->indices);
}

Stmt StorageRenamer::VisitStmt_(const BufferStoreNode* op) {
  Stmt visited = StmtExprMutator::VisitStmt_(op);
  const auto* store = visited.as<BufferStoreNode>();
  Buffer buffer = RewriteBuffer(store->buffer);
  if (buffer.same_as(store->buffer)) return visited;
  return BufferStore(buffer, store->value, store->indices);
}

Stmt StorageRenamer::VisitStmt_(const AttrStmtNode* op) {
  Stmt visited = StmtExprMutator::VisitStmt_(op);
  ObjectRef node = op->node;
  if (const auto* var = node.as<VarNode>()) {
    node = RewriteVar(var);
  } else if (const auto* buffer = node.as<BufferNode>()) {
    node = RewriteBuffer(Buffer(buffer));
  }
  if (node.same_as(op->node)) return visited;
  const auto* attr = visited.as<AttrStmtNode>();
  return AttrStmt(node, attr->attr_key, attr->value, attr->body);
}

}  // namespace loom::tir
