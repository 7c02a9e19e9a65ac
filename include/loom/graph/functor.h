// Traversals of graph expressions, dispatched on the kind (expr_table.def).
//
//   ExprFunctor<R(const Expr&)>  one VisitExpr_ per kind, no memo
//   ExprVisitor                  visits every node of the DAG once, operands first
//   ExprMutator                  rebuilds bottom-up, each node once; returns the very same
//                                node when nothing under it changed (rebuilt calls are
//                                retyped by MakeCall)
//   PostOrderVisit(e, fn)        fn on every node once, operands before users
//   PostOrderVisitDataflow(e, fn)  the same, not entering called (fused) functions
#pragma once

#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "loom/graph/expr.h"
#include "loom/support/stack.h"

namespace loom::graph {

template <typename F>
class ExprFunctor;

template <typename R, typename... Args>
class ExprFunctor<R(const Expr&, Args...)> {
 public:
  virtual ~ExprFunctor() = default;
  virtual R VisitExpr(const Expr& e, Args... args) {
    LOOM_ICHECK(e.defined()) << "visiting an undefined graph expression";
    CheckStackSpace("a walk of the graph");  // its recursion is as deep as the graph
    switch (e->expr_kind) {
#define LOOM_GRAPH_EXPR(Name) \
  case ExprKind::k##Name:     \
    return VisitExpr_(static_cast<const Name##Node*>(e.get()), args...);
#include "loom/graph/expr_table.def"
    }
    LOOM_ICHECK(false) << "unknown graph expression kind";
    throw;
  }
#define LOOM_GRAPH_EXPR(Name) virtual R VisitExpr_(const Name##Node* op, Args... args) = 0;
#include "loom/graph/expr_table.def"
};

class ExprVisitor : public ExprFunctor<void(const Expr&)> {
 public:
  void VisitExpr(const Expr& e) override;
#define LOOM_GRAPH_EXPR(Name) void VisitExpr_(const Name##Node* op) override;
#include "loom/graph/expr_table.def"

 protected:
  std::unordered_set<const Object*> visited_;
};

class ExprMutator : public ExprFunctor<Expr(const Expr&)> {
 public:
  Expr VisitExpr(const Expr& e) override;
#define LOOM_GRAPH_EXPR(Name) Expr VisitExpr_(const Name##Node* op) override;
#include "loom/graph/expr_table.def"

 protected:
  std::unordered_map<const Object*, Expr> memo_;
};

void PostOrderVisit(const Expr& e, const std::function<void(const Expr&)>& fn);
// The same over e's dataflow only: the bodies of the functions that calls apply (fused
// groups, each its own scope) are not entered; the called Function nodes are not visited.
void PostOrderVisitDataflow(const Expr& e, const std::function<void(const Expr&)>& fn);

// The values dataflow node `e` reads: a call's arguments, a tuple's fields, a tuple item's
// tuple; none for any other node.
std::vector<Expr> DataflowOperands(const Expr& e);

}  // namespace loom::graph
