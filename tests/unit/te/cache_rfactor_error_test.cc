// Invalid cache_read, cache_write, set_scope and rfactor requests: loom::Errors naming the
// primitive, the stage and the reason.
#include "te_test_util.h"

namespace loom::te::test {
namespace {

struct Graph {
  Tensor A = placeholder({8, 8}, kF32, "A");
  Tensor B = compute({8, 8}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
  IterVar k = reduce_axis(Range(0, 8), "k");
  Tensor C = compute({8}, [&](Var i) { return sum(B(i, k->var), {k}); }, "C");
  Schedule s = create_schedule({C.op()});
};

TEST(TeCacheErrors, CacheRead) {
  Graph g;
  EXPECT_ERROR(g.s.cache_read(g.A, "shared", {g.C.op()}),
               "cache_read of stage 'A': reader 'C' does not read 'A'");
  EXPECT_ERROR(g.s.cache_read(g.A, "shared", {}), "cache_read of stage 'A': no readers are given");
  EXPECT_ERROR(g.s.cache_read(g.A, "", {g.B.op()}), "cache_read of stage 'A': the scope is empty");
  EXPECT_ERROR(g.s.cache_read(g.B, "shared", {g.C.op(), g.C.op()}),
               "cache_read of stage 'B': reader 'C' is listed twice");
  Tensor other = placeholder({8, 8}, kF32, "X");
  EXPECT_ERROR(g.s.cache_read(other, "shared", {g.B.op()}),
               "operation 'X' is not part of this schedule");
  // Once the reader reads the copy, it no longer reads the original.
  g.s.cache_read(g.A, "shared", {g.B.op()});
  EXPECT_ERROR(g.s.cache_read(g.A, "local", {g.B.op()}),
               "cache_read of stage 'A': reader 'B' does not read 'A'");
}

TEST(TeCacheErrors, CacheWriteAndSetScope) {
  Graph g;
  EXPECT_ERROR(g.s.cache_write(g.A, "local"),
               "cache_write of stage 'A': only a compute can be cached ('A' is a placeholder)");
  g.s[g.C].split(g.k, 2);
  EXPECT_ERROR(g.s.cache_write(g.C, "local"),
               "cache_write of stage 'C': its loops were already scheduled; call cache_write "
               "first");
  g.s[g.B].compute_inline();
  EXPECT_ERROR(g.s.cache_write(g.B, "local"), "cache_write of stage 'B': the stage is inlined");
  EXPECT_ERROR(g.s[g.C].set_scope("local"),
               "set_scope of stage 'C': an output of the schedule lives in the function's "
               "argument buffer");
  EXPECT_ERROR(g.s[g.A].set_scope("local"), "set_scope of stage 'A': a placeholder");
  EXPECT_ERROR(g.s[g.B].set_scope(""), "set_scope of stage 'B': the scope is empty");
  // An intermediate passed as an argument lives in its parameter buffer.
  Graph h;
  h.s[h.B].set_scope("shared");
  EXPECT_ERROR(lower(h.s, {h.A, h.B, h.C}, "f"),
               "lower 'f': tensor 'B' is an argument, so it lives in its argument buffer and "
               "cannot be allocated in scope 'shared'");
}

TEST(TeCacheErrors, Rfactor) {
  Graph g;
  Stage c = g.s[g.C];
  EXPECT_ERROR(g.s.rfactor(g.B, g.s[g.B]->leaf_iter_vars[0]),
               "rfactor of stage 'B': the stage is not a reduction");
  EXPECT_ERROR(g.s.rfactor(g.C, c->leaf_iter_vars[0]),
               "rfactor of stage 'C': 'i' is not a reduction axis of the stage");
  EXPECT_ERROR(g.s.rfactor(g.C, g.k, 2),
               "rfactor of stage 'C': factor_axis 2 is not a position among the 1 axes of the "
               "result (0 to 1)");
  auto [ko, ki] = c.split(g.k, 4);
  EXPECT_ERROR(g.s.rfactor(g.C, g.k),
               "rfactor of stage 'C': 'k' is not a loop of the stage (its loops are i, k.outer, "
               "k.inner)");
  c.split(c->leaf_iter_vars[0], 2);
  EXPECT_ERROR(g.s.rfactor(g.C, ki),
               "rfactor of stage 'C': data-parallel axis 'i' was already split or fused, and "
               "rfactor starts the stage's loops over");
  // A reduction with explicit initial values: each partial reduction would start from them.
  IterVar r = reduce_axis(Range(0, 8), "r");
  Tensor A = placeholder({8}, kF32, "A");
  PrimExpr plain_sum = sum(A(r->var), {r});
  const auto* plain = plain_sum.as<ReduceNode>();
  PrimExpr with_init = Reduce(plain->combiner, plain->source, plain->axis, plain->condition, 0,
                              {PrimExpr(FloatImm(kF32, 1.0))});
  Tensor D = compute({1}, [&](Var) { return with_init; }, "D");
  Schedule s = create_schedule({D.op()});
  EXPECT_ERROR(s.rfactor(D, r),
               "rfactor of stage 'D': the reduction starts from explicit initial values");
}

}  // namespace
}  // namespace loom::te::test
