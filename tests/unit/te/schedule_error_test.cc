// Invalid schedules and tensor expressions are user errors naming the stage, the primitive
// and the reason.
#include "te_test_util.h"

namespace loom::te::test {
namespace {

struct Graph {
  Tensor A = placeholder({8, 8}, kF32, "A");
  Tensor B = compute({8, 8}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
  IterVar k = reduce_axis(Range(0, 8), "k");
  Tensor C = compute({8}, [&](Var i) { return sum(B(i, k->var), {k}); }, "C");
  Tensor D = compute({8}, [&](Var i) { return C(i) * 2.0f; }, "D");
  Schedule s = create_schedule({D.op()});
};

TEST(TeScheduleErrors, LoopPrimitives) {
  Graph g;
  Stage c = g.s[g.C];
  IterVar i = c->leaf_iter_vars[0];
  c.split(i, 4);
  EXPECT_ERROR(c.split(i, 2),
               "split of stage 'C': axis 'i' is not a leaf axis (it was already split into "
               "i.outer, i.inner)");
  EXPECT_ERROR(c.split(c->leaf_iter_vars[0], 0), "split of stage 'C': the factor must be positive");
  EXPECT_ERROR(c.split(g.s[g.D]->leaf_iter_vars[0], 2),
               "split of stage 'C': axis 'i' is not a leaf axis (it does not belong to this stage");
  EXPECT_ERROR(c.fuse(c->leaf_iter_vars[0], g.k),
               "fuse of stage 'C': axes 'i.outer' and 'k' are not adjacent loops");
  EXPECT_ERROR(c.fuse(c->leaf_iter_vars[1], g.k),
               "fuse of stage 'C': cannot fuse a data-parallel axis with a reduction axis");
  EXPECT_ERROR(c.reorder({g.k, g.k}), "reorder of stage 'C': axis 'k' is listed twice");
  EXPECT_ERROR(c.parallel(g.k), "parallel of stage 'C': axis 'k' is a reduction axis");
  c.vectorize(c->leaf_iter_vars[1]);
  EXPECT_ERROR(c.unroll(c->leaf_iter_vars[1]),
               "unroll of stage 'C': axis 'i.inner' is already vectorized");
  IterVar tx = thread_axis("threadIdx.x");
  auto [bo, bi] = g.s[g.B].split(g.s[g.B]->leaf_iter_vars[0], 2);
  g.s[g.B].bind(bi, tx);
  EXPECT_ERROR(g.s[g.B].bind(bo, tx),
               "bind of stage 'B': thread axis 'threadIdx.x' is already bound to loop 'i.inner'");
  // Another axis of the same tag indexes the same threads.
  EXPECT_ERROR(g.s[g.B].bind(bo, thread_axis("threadIdx.x")),
               "bind of stage 'B': thread axis 'threadIdx.x' is already bound to loop 'i.inner'");
  g.s[g.D].bind(g.s[g.D]->leaf_iter_vars[0], tx);  // another stage may use the same axis
  // A reduction runs across the threads of a block, not across blocks.
  EXPECT_ERROR(c.bind(g.k, thread_axis("blockIdx.x")),
               "bind of stage 'C': axis 'k' is a reduction axis, which only threadIdx axes can "
               "run (a cross-thread reduction), not blockIdx.x");
  c.bind(g.k, thread_axis("threadIdx.x"));
}

TEST(TeScheduleErrors, AttachmentPrimitives) {
  Graph g;
  EXPECT_ERROR(g.s[g.C].compute_at(g.s[g.B], g.s[g.B]->leaf_iter_vars[0]),
               "compute_at of stage 'C' into 'B': 'B' does not consume 'C'");
  EXPECT_ERROR(g.s[g.C].compute_at(g.s[g.D], g.s[g.B]->leaf_iter_vars[0]),
               "compute_at of stage 'C' into 'D': 'i' is not a loop of 'D'");
  EXPECT_ERROR(g.s[g.D].compute_at(g.s[g.C], g.s[g.C]->leaf_iter_vars[0]),
               "compute_at of stage 'D' into 'C': 'D' is an output of the schedule");
  EXPECT_ERROR(g.s[g.A].compute_at(g.s[g.B], g.s[g.B]->leaf_iter_vars[0]),
               "compute_at of stage 'A' into 'B': only a compute has loops to attach");
  EXPECT_ERROR(g.s[g.C].compute_inline(), "compute_inline of stage 'C': a reduction cannot be inlined");
  EXPECT_ERROR(g.s[g.D].compute_inline(),
               "compute_inline of stage 'D': an output of the schedule cannot be inlined");
  EXPECT_ERROR(g.s[g.A].compute_inline(), "compute_inline of stage 'A': only a compute can be inlined");
}

TEST(TeScheduleErrors, AttachmentsCheckedWhenLowering) {
  {
    Graph g;
    IterVar i = g.s[g.D]->leaf_iter_vars[0];
    g.s[g.C].compute_at(g.s[g.D], i);
    g.s[g.D].split(i, 2);
    EXPECT_ERROR(lower(g.s, {g.A, g.D}),
                 "compute_at of stage 'C' into 'D': 'i' is no longer a loop of 'D' (its loops are "
                 "i.outer, i.inner)");
  }
  {
    Tensor A = placeholder({8}, kF32, "A");
    Tensor B = compute({8}, [&](Var i) { return A(i) + 1.0f; }, "B");
    Tensor C = compute({8}, [&](Var i) { return B(i) * 2.0f; }, "C");
    Tensor D = compute({8}, [&](Var i) { return B(i) + C(i); }, "D");
    Schedule s = create_schedule({D.op()});
    s[B].compute_at(s[C], s[C]->leaf_iter_vars[0]);
    EXPECT_ERROR(lower(s, {A, D}),
                 "compute_at of stage 'B' into 'C': 'D' also reads 'B' but does not run inside "
                 "loop 'i'");
    s[C].compute_inline();
    EXPECT_ERROR(lower(s, {A, D}), "compute_at of stage 'B' into 'C': 'C' is inlined");
  }
}

TEST(TeScheduleErrors, ExpressionsAndLowerArguments) {
  Graph g;
  EXPECT_ERROR(g.A(1), "tensor 'A' has 2 dimensions but is indexed with 1 indices");
  EXPECT_ERROR(g.A(1, 2.0f), "tensor 'A' is indexed with T.float32(2.0)");
  EXPECT_ERROR(compute({4, 4}, [&](Var i) { return g.A(i, i); }, "E"),
               "compute 'E': the function takes 1 axis variables but the shape has 2 dimensions");
  EXPECT_ERROR(compute({4}, [&](Var i) { return g.A(i, i) + sum(g.A(i, g.k->var), {g.k}); }, "F"),
               "compute 'F': a reduction must be the whole body of an output");
  EXPECT_ERROR(lower(g.s, {g.D}), "tensor 'A' is read but is not among the arguments");
  EXPECT_ERROR(lower(g.s, {g.A}), "output 'D' is not among the arguments");
  Schedule other = create_schedule({g.B.op()});
  EXPECT_ERROR(other[g.D], "operation 'D' is not part of this schedule");
}

}  // namespace
}  // namespace loom::te::test
