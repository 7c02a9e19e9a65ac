// Typed functors over the IR with one virtual method per node kind, and the default
// visitors/mutators that walk a node's children. Dispatch tables and the default per-node
// methods are generated from node_table.def; children are found through field reflection.
//
//   class CountAdds : public ExprVisitor {
//     void VisitExpr_(const AddNode* op) override { ++n; ExprVisitor::VisitExpr_(op); }
//    public: int n = 0;
//   };
//
// Which children the defaults walk: expression and statement fields, element-wise through
// arrays, and the bounds of Range and IterVar fields. Variables in defining positions (a
// Let's or a loop's own variable), buffers, reducers and attribute payloads are not walked;
// a pass that cares overrides the node's method. Mutators return the same node, not a copy,
// when no child changed, and re-validate a rebuilt node (so a Ramp child makes an Add a
// vector Add).
#pragma once

#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

#include "loom/ir/node.h"

namespace loom {

template <typename FType>
class ExprFunctor;
template <typename FType>
class StmtFunctor;

template <typename R, typename... Args>
class ExprFunctor<R(const PrimExpr&, Args...)> {
 public:
  virtual ~ExprFunctor() = default;
  R operator()(const PrimExpr& e, Args... args) { return VisitExpr(e, args...); }

  virtual R VisitExpr(const PrimExpr& e, Args... args) {
    LOOM_ICHECK(e.defined()) << "visiting an undefined expression";
    switch (e->kind()) {
#define LOOM_EXPR(Name, ...) \
  case NodeKind::Name:       \
    return VisitExpr_(static_cast<const Name##Node*>(e.get()), args...);
#include "loom/ir/node_table.def"
#undef LOOM_EXPR
      default:
        break;
    }
    LOOM_ICHECK(false) << "not an expression: " << NodeKindName(e.kind());
    throw;
  }

#define LOOM_EXPR(Name, ...)                                     \
  virtual R VisitExpr_(const Name##Node* op, Args... args) {     \
    return VisitExprDefault_(op, args...);                       \
  }
#include "loom/ir/node_table.def"
#undef LOOM_EXPR

  virtual R VisitExprDefault_(const Object* op, Args...) {
    LOOM_ICHECK(false) << "this functor does not handle " << NodeKindName(op->kind());
    throw;
  }
};

template <typename R, typename... Args>
class StmtFunctor<R(const Stmt&, Args...)> {
 public:
  virtual ~StmtFunctor() = default;
  R operator()(const Stmt& s, Args... args) { return VisitStmt(s, args...); }

  virtual R VisitStmt(const Stmt& s, Args... args) {
    LOOM_ICHECK(s.defined()) << "visiting an undefined statement";
    switch (s->kind()) {
#define LOOM_STMT(Name, ...) \
  case NodeKind::Name:       \
    return VisitStmt_(static_cast<const Name##Node*>(s.get()), args...);
#include "loom/ir/node_table.def"
#undef LOOM_STMT
      default:
        break;
    }
    LOOM_ICHECK(false) << "not a statement: " << NodeKindName(s.kind());
    throw;
  }

#define LOOM_STMT(Name, ...)                                     \
  virtual R VisitStmt_(const Name##Node* op, Args... args) {     \
    return VisitStmtDefault_(op, args...);                       \
  }
#include "loom/ir/node_table.def"
#undef LOOM_STMT

  virtual R VisitStmtDefault_(const Object* op, Args...) {
    LOOM_ICHECK(false) << "this functor does not handle " << NodeKindName(op->kind());
    throw;
  }
};

namespace detail {

// Walks the children of one node for the default visitors (see the header comment).
template <typename Visitor>
struct ChildWalker {
  Visitor* visitor;

  template <typename T>
  void operator()(const char*, const T& field, FieldRole role) const {
    if constexpr (std::is_same_v<T, Var> || std::is_same_v<T, Array<Var>>) {
      return;  // variables appear only in defining positions in the table
    } else if constexpr (std::is_same_v<T, PrimExpr>) {
      if (field.defined()) visitor->VisitExpr(field);
    } else if constexpr (std::is_same_v<T, Stmt>) {
      if (field.defined()) visitor->VisitStmtChild(field);
    } else if constexpr (std::is_same_v<T, Range>) {
      if (field.defined()) {
        visitor->VisitExpr(field->min);
        visitor->VisitExpr(field->extent);
      }
    } else if constexpr (std::is_same_v<T, IterVar>) {
      if (field.defined()) (*this)("dom", field->dom, role);
    } else if constexpr (std::is_same_v<T, Array<PrimExpr>> || std::is_same_v<T, Array<Stmt>> ||
                         std::is_same_v<T, Array<IterVar>>) {
      for (const auto& element : field) (*this)("", element, role);
    }
  }
};

// Rebuilds the children of a copy of one node for the default mutators; records change.
template <typename Mutator>
struct ChildRewriter {
  Mutator* mutator;
  bool changed = false;

  template <typename T>
  void Update(T& field, T replacement) {
    if (!replacement.same_as(field)) {
      field = std::move(replacement);
      changed = true;
    }
  }

  template <typename T>
  void operator()(const char*, T& field, FieldRole role) {
    if constexpr (std::is_same_v<T, Var> || std::is_same_v<T, Array<Var>>) {
      return;
    } else if constexpr (std::is_same_v<T, PrimExpr>) {
      if (field.defined()) Update(field, mutator->VisitExpr(field));
    } else if constexpr (std::is_same_v<T, Stmt>) {
      if (field.defined()) Update(field, mutator->VisitStmtChild(field));
    } else if constexpr (std::is_same_v<T, Range>) {
      if (!field.defined()) return;
      PrimExpr min = mutator->VisitExpr(field->min);
      PrimExpr extent = mutator->VisitExpr(field->extent);
      if (!min.same_as(field->min) || !extent.same_as(field->extent)) {
        Update(field, Range(min, extent));
      }
    } else if constexpr (std::is_same_v<T, IterVar>) {
      if (!field.defined() || !field->dom.defined()) return;
      Range dom = field->dom;
      (*this)("dom", dom, role);
      if (!dom.same_as(field->dom)) {
        Update(field, IterVar(dom, field->var, field->iter_type, field->thread_tag));
      }
    } else if constexpr (std::is_same_v<T, Array<PrimExpr>> || std::is_same_v<T, Array<Stmt>> ||
                         std::is_same_v<T, Array<IterVar>>) {
      for (auto& element : field) (*this)("", element, role);
    }
  }
};

template <typename Handle, typename NodeT, typename Mutator>
Handle RewriteChildren(const NodeT* op, Mutator* mutator) {
  auto copy = std::make_unique<NodeT>(*op);
  ChildRewriter<Mutator> rewriter{mutator};
  ForEachField(*copy, rewriter);
  if (!rewriter.changed) return Handle(op);
  copy->Validate();
  return Handle(copy.release());
}

}  // namespace detail

class ExprVisitor : public ExprFunctor<void(const PrimExpr&)> {
 public:
#define LOOM_EXPR(Name, ...)                                   \
  void VisitExpr_(const Name##Node* op) override {             \
    ForEachField(*op, detail::ChildWalker<ExprVisitor>{this});  \
  }
#include "loom/ir/node_table.def"
#undef LOOM_EXPR
  // Expressions hold no statements; present so one walker serves both visitors.
  virtual void VisitStmtChild(const Stmt&) {}
};

class ExprMutator : public ExprFunctor<PrimExpr(const PrimExpr&)> {
 public:
#define LOOM_EXPR(Name, ...)                                        \
  PrimExpr VisitExpr_(const Name##Node* op) override {              \
    return detail::RewriteChildren<PrimExpr>(op, this);             \
  }
#include "loom/ir/node_table.def"
#undef LOOM_EXPR
  virtual Stmt VisitStmtChild(const Stmt& s) { return s; }
};

class StmtExprVisitor : public ExprVisitor, public StmtFunctor<void(const Stmt&)> {
 public:
  using ExprVisitor::VisitExpr;
  using ExprVisitor::VisitExpr_;
  using StmtFunctor::VisitStmt;
#define LOOM_STMT(Name, ...)                                        \
  void VisitStmt_(const Name##Node* op) override {                  \
    ForEachField(*op, detail::ChildWalker<StmtExprVisitor>{this});  \
  }
#include "loom/ir/node_table.def"
#undef LOOM_STMT
  void VisitStmtChild(const Stmt& s) override { VisitStmt(s); }
};

class StmtExprMutator : public ExprMutator, public StmtFunctor<Stmt(const Stmt&)> {
 public:
  using ExprMutator::VisitExpr;
  using ExprMutator::VisitExpr_;
  using StmtFunctor::VisitStmt;
#define LOOM_STMT(Name, ...)                                \
  Stmt VisitStmt_(const Name##Node* op) override {          \
    return detail::RewriteChildren<Stmt>(op, this);         \
  }
#include "loom/ir/node_table.def"
#undef LOOM_STMT
  Stmt VisitStmtChild(const Stmt& s) override { return VisitStmt(s); }
};

// Calls fn(node) on every expression and statement node, children first.
void PostOrderVisit(const ObjectRef& node, const std::function<void(const ObjectRef&)>& fn);

}  // namespace loom
