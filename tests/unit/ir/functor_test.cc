// The generated functors: typed dispatch, the default visitors' walk over children, and the
// default mutators' copy-on-change with re-validation.
#include "loom/ir/functor.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir_test_util.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"

namespace loom {
namespace {

// Replaces one variable by an expression everywhere.
class Substitute : public StmtExprMutator {
 public:
  Substitute(Var from, PrimExpr to) : from_(std::move(from)), to_(std::move(to)) {}
  using StmtExprMutator::VisitExpr_;
  PrimExpr VisitExpr_(const VarNode* op) override {
    return op == from_.get() ? to_ : PrimExpr(Var(op));
  }

 private:
  Var from_;
  PrimExpr to_;
};

// Names of the nodes in post order.
std::vector<std::string> PostOrderKinds(const ObjectRef& node) {
  std::vector<std::string> kinds;
  PostOrderVisit(node, [&](const ObjectRef& n) { kinds.push_back(NodeKindName(n.kind())); });
  return kinds;
}

using Kinds = std::vector<std::string>;

TEST(Functor, TypedDispatchWithExtraArguments) {
  // Depth of the deepest leaf, counting from `depth`.
  class Depth : public ExprFunctor<int(const PrimExpr&, int)> {
    int VisitExpr_(const VarNode*, int depth) override { return depth; }
    int VisitExpr_(const IntImmNode*, int depth) override { return depth; }
    int VisitExpr_(const AddNode* op, int depth) override {
      return std::max(VisitExpr(op->a, depth + 1), VisitExpr(op->b, depth + 1));
    }
    int VisitExpr_(const MulNode* op, int depth) override {
      return std::max(VisitExpr(op->a, depth + 1), VisitExpr(op->b, depth + 1));
    }
  } depth;
  Var x("x"), y("y");
  EXPECT_EQ(depth(Add(x, Mul(y, Add(x, 1))), 0), 3);
  EXPECT_EQ(depth(x, 5), 5);
  EXPECT_THROW(depth(Sub(x, y), 0), InternalError) << "an unhandled kind is a bug, not a crash";
}

TEST(Functor, VisitorWalksChildrenInFieldOrder) {
  Var x("x"), y("y"), p("p", DataType::Bool());
  EXPECT_EQ(PostOrderKinds(Select(p, Add(x, 1), FloorMod(y, 3))),
            (Kinds{"Var", "Var", "IntImm", "Add", "Var", "IntImm", "FloorMod", "Select"}));
  // A Let's own variable is a definition, not a child; its uses in the body are.
  EXPECT_EQ(PostOrderKinds(Let(x, 1, x)), (Kinds{"IntImm", "Var", "Let"}));
  EXPECT_EQ(PostOrderKinds(Shuffle({Ramp(x, 1, 4)}, {3, 2})),
            (Kinds{"Var", "IntImm", "Ramp", "IntImm", "IntImm", "Shuffle"}));
}

TEST(Functor, VisitorReachesDomainsOfIterVarsAndRanges) {
  Var k("k"), n("n");
  Buffer a = DeclBuffer({n}, DataType::Int(32), "A");
  Var lhs("l"), rhs("r");
  CommReducer sum({lhs}, {rhs}, {Add(lhs, rhs)}, {0});
  IterVar axis(Range(1, n), k, IterVarType::kCommReduce, "");
  Reduce reduce(sum, {BufferLoad(a, {k})}, {axis}, LT(k, 5), 0, {});
  // Sources, the axis domain (min, extent), the condition and init; not the combiner.
  EXPECT_EQ(PostOrderKinds(reduce),
            (Kinds{"Var", "BufferLoad", "IntImm", "Var", "Var", "IntImm", "LT", "Reduce"}));
}

TEST(Functor, VisitorWalksStatements) {
  Var i("i"), n("n");
  Buffer a = DeclBuffer({n}, DataType::Int(32), "A");
  Stmt store = BufferStore(a, i, {i});
  Stmt loop = For(i, 0, n, ForKind::kSerial, store, IterVar(), {});
  Stmt body = SeqStmt({IfThenElse(LT(n, 4), loop, Evaluate(n)), Evaluate(1)});
  EXPECT_EQ(PostOrderKinds(body),
            (Kinds{"Var", "IntImm", "LT", "IntImm", "Var", "Var", "Var", "BufferStore", "For",
                   "Var", "Evaluate", "IfThenElse", "IntImm", "Evaluate", "SeqStmt"}));
  EXPECT_THROW(PostOrderVisit(Range(0, 1), [](const ObjectRef&) {}), InternalError);
}

TEST(Functor, MutatorKeepsUnchangedNodes) {
  Var x("x"), y("y"), z("z");
  PrimExpr e = Select(LT(x, y), Add(x, Mul(y, 3)), Min(z, Let(z, 1, z)));
  EXPECT_TRUE(Substitute(Var("other"), 1).VisitExpr(e).same_as(e));
  Buffer a = DeclBuffer({16}, DataType::Int(32), "A");
  Var i("i");
  Stmt s =
      For(i, 0, 16, ForKind::kSerial,
          SeqStmt({BufferStore(a, Add(BufferLoad(a, {i}), x), {i}), Evaluate(y)}), IterVar(), {});
  EXPECT_TRUE(Substitute(Var("other"), 1).VisitStmt(s).same_as(s));
}

TEST(Functor, MutatorRebuildsOnlyTheChangedPath) {
  Var x("x"), y("y");
  PrimExpr left = Mul(y, 3), right = Add(x, 1);
  PrimExpr e = Sub(left, right);
  PrimExpr out = Substitute(x, 7).VisitExpr(e);
  EXPECT_EQ(ToScript(out), "y * 3 - (7 + 1)") << "raw nodes are rebuilt, not folded";
  const auto* sub = out.as<SubNode>();
  ASSERT_NE(sub, nullptr);
  EXPECT_FALSE(out.same_as(e));
  EXPECT_TRUE(sub->a.same_as(left)) << "the untouched operand is shared, not copied";
  EXPECT_FALSE(sub->b.same_as(right));
  EXPECT_EQ(ToScript(e), "y * 3 - (x + 1)") << "the original is immutable";
}

TEST(Functor, RebuiltNodesAreRevalidated) {
  Var x("x"), y("y");
  PrimExpr vector_sum = Substitute(x, Ramp(0, 1, 4)).VisitExpr(Add(x, x));
  EXPECT_EQ(vector_sum.dtype(), DataType::Int(32, 4));
  PrimExpr compare = Substitute(x, Ramp(0, 1, 4)).VisitExpr(LT(x, x));
  EXPECT_EQ(compare.dtype(), DataType::Bool(4)) << "derived dtypes follow the new children";
  EXPECT_USER_ERROR(Substitute(x, Var("w", DataType::Int(64))).VisitExpr(Add(x, y)),
                    "cannot build Add(w, y): operand types differ (int64 vs int32)");
  Var i("i");
  Stmt loop = For(i, 0, x, ForKind::kSerial, Evaluate(i), IterVar(), {});
  EXPECT_USER_ERROR(Substitute(x, Var("m", DataType::Int(64))).VisitStmt(loop),
                    "min (int32) and extent (int64) must have the loop variable's type");
}

TEST(Functor, MutatorRewritesStatementsAndDomains) {
  Var i("i"), n("n"), k("k");
  Buffer a = DeclBuffer({16}, DataType::Int(32), "A");
  Stmt body = SeqStmt({BufferStore(a, n, {i}), Evaluate(Add(n, 1))});
  Stmt loop = For(i, 0, n, ForKind::kSerial, body, IterVar(), {});
  Stmt out = Substitute(n, 8).VisitStmt(loop);
  const auto* new_loop = out.as<ForNode>();
  ASSERT_NE(new_loop, nullptr);
  EXPECT_TRUE(new_loop->loop_var.same_as(i)) << "definitions are kept";
  EXPECT_EQ(ToScript(out), "for i in range(8):\n    A[i] = 8\n    T.evaluate(8 + 1)\n");

  Var l("l"), r("r");
  CommReducer sum({l}, {r}, {Add(l, r)}, {0});
  IterVar axis(Range(0, n), k, IterVarType::kCommReduce, "");
  PrimExpr reduce = Reduce(sum, {BufferLoad(a, {k})}, {axis}, PrimExpr(), 0, {});
  PrimExpr out_reduce = Substitute(n, 4).VisitExpr(reduce);
  const auto* new_reduce = out_reduce.as<ReduceNode>();
  ASSERT_NE(new_reduce, nullptr);
  EXPECT_EQ(ToScript(new_reduce->axis[0]->dom), "T.Range(0, 4)");
  EXPECT_TRUE(new_reduce->axis[0]->var.same_as(k));
  EXPECT_TRUE(new_reduce->combiner.same_as(sum));
}

}  // namespace
}  // namespace loom
