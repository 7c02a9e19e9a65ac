#include "loom/ir/functor.h"

namespace loom {

namespace {
class PostOrderVisitor : public StmtExprVisitor {
 public:
  explicit PostOrderVisitor(const std::function<void(const ObjectRef&)>& fn) : fn_(fn) {}
  void VisitExpr(const PrimExpr& e) override {
    StmtExprVisitor::VisitExpr(e);
    fn_(e);
  }
  void VisitStmt(const Stmt& s) override {
    StmtExprVisitor::VisitStmt(s);
    fn_(s);
  }

 private:
  const std::function<void(const ObjectRef&)>& fn_;
};
}  // namespace

void PostOrderVisit(const ObjectRef& node, const std::function<void(const ObjectRef&)>& fn) {
  PostOrderVisitor visitor(fn);
  if (node.as<ExprNode>()) {
    visitor.VisitExpr(Downcast<PrimExpr>(node));
  } else if (node.as<StmtNode>()) {
    visitor.VisitStmt(Downcast<Stmt>(node));
  } else {
    LOOM_ICHECK(false) << "PostOrderVisit expects an expression or a statement, got "
                       << NodeKindName(node.kind());
  }
}

}  // namespace loom
