// DeadCodeElimination: what the outputs do not depend on goes.
//
// The graph IR is a DAG without let bindings: a function is its body and whatever the body
// reaches, so a node no output uses is already unreachable and gone with the last reference
// to it. What can remain is indirection through tuples: a projection of a Tuple node,
// TupleGetItem(Tuple(a, b), 1), which other passes leave behind, is the field itself (b).
// Rewriting projections that way also drops Tuples that only projections used, with any
// fields no output needs. A tuple an operator produces (split) stays: the call computes
// all its fields at once.
#include "graph/transforms/map_functions.h"
#include "loom/graph/functor.h"
#include "loom/graph/transform.h"

namespace loom::graph {
namespace {

class ProjectionForwarder : public ExprMutator {
 public:
  Expr VisitExpr_(const TupleGetItemNode* op) override {
    Expr tuple = VisitExpr(op->tuple);
    if (const auto* fields = tuple.as<TupleNode>()) return fields->fields[op->index];
    if (tuple.same_as(op->tuple)) return Expr(op);
    return MakeTupleGetItem(tuple, op->index);
  }
};

}  // namespace

Pass DeadCodeElimination() { return MutatorPass<ProjectionForwarder>("DeadCodeElimination"); }

}  // namespace loom::graph
