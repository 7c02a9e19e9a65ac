// compute_at, compute_inline and compute_root: results against references, and the
// regions bound inference gives attached stages, read off their allocations.
#include "te_test_util.h"

namespace loom::te::test {
namespace {

// The extents of the allocation of buffer `name` (its data variable is name + "_data").
std::vector<int64_t> AllocatedExtents(const PrimFunc& f, const std::string& name) {
  std::vector<int64_t> extents;
  PostOrderVisit(f->body, [&](const ObjectRef& node) {
    const auto* alloc = node.as<AllocateNode>();
    if (!alloc || alloc->buffer_var.name() != name + "_data") return;
    for (const PrimExpr& e : alloc->extents) {
      const auto* imm = e.as<IntImmNode>();
      extents.push_back(imm ? imm->value : -1);
    }
  });
  return extents;
}

// C[i, j] = B[i, j] + B[i + 1, j] with B = A * 2 over one more row than C.
struct Stencil {
  Tensor A = placeholder({11, 6}, kF32, "A");
  Tensor B = compute({11, 6}, [&](Var i, Var j) { return A(i, j) * 2.0f; }, "B");
  Tensor C = compute({10, 6}, [&](Var i, Var j) { return B(i, j) + B(i + 1, j); }, "C");
  tir::HostArray a = RandomArray(kF32, {11, 6}, 21);

  tir::HostArray Run(const Schedule& s) const {
    return RunFunc(ScheduleToPrimFunc(s, {A, C}, "stencil"), {a}, {{kF32, {10, 6}}})[0];
  }
  tir::HostArray Reference() const {
    tir::HostArray out(kF32, {10, 6});
    for (int i = 0; i < 10; ++i) {
      for (int j = 0; j < 6; ++j) {
        out.SetFloat(i * 6 + j, a.GetFloat(i * 6 + j) * 2 + a.GetFloat((i + 1) * 6 + j) * 2);
      }
    }
    return out;
  }
};

TEST(TeComputeAt, RootIntermediateIsAllocatedOverWhatItsReaderNeeds) {
  Stencil t;
  Schedule s = create_schedule({t.C.op()});
  PrimFunc f = ScheduleToPrimFunc(s, {t.A, t.C}, "f");
  EXPECT_EQ(AllocatedExtents(f, "B"), (std::vector<int64_t>{11, 6})) << ToScript(f);
  ExpectSame(t.Run(s), t.Reference(), "root");
}

TEST(TeComputeAt, ProducerInsideTheConsumersOuterLoopCoversOneTile) {
  Stencil t;
  for (int factor : {2, 4, 5}) {
    Schedule s = create_schedule({t.C.op()});
    auto [io, ii] = s[t.C].split(s[t.C]->leaf_iter_vars[0], factor);
    s[t.B].compute_at(s[t.C], io);
    PrimFunc f = ScheduleToPrimFunc(s, {t.A, t.C}, "f");
    // One tile of C reads factor + 1 rows of B.
    EXPECT_EQ(AllocatedExtents(f, "B"), (std::vector<int64_t>{factor + 1, 6})) << ToScript(f);
    ExpectSame(t.Run(s), t.Reference(), "compute_at factor " + std::to_string(factor));
  }
}

TEST(TeComputeAt, InferBoundKeepsLoopsOutsideTheAttachPointSymbolic) {
  Stencil t;
  Schedule s = create_schedule({t.C.op()});
  auto [io, ii] = s[t.C].split(s[t.C]->leaf_iter_vars[0], 4);
  s[t.B].compute_at(s[t.C], io);
  BoundMap bounds = InferBound(s);
  const auto* b = static_cast<const ComputeOpNode*>(t.B.op().get());
  EXPECT_EQ(ToScript(bounds.at(b->axis[0])), ToScript(Range(io->var * 4, 5)));
  EXPECT_EQ(ToScript(bounds.at(b->axis[1])), ToScript(Range(0, 6)));
  EXPECT_EQ(ToScript(bounds.at(io)), ToScript(Range(0, 3)));
  EXPECT_EQ(ToScript(bounds.at(ii)), ToScript(Range(0, 4)));
}

TEST(TeComputeAt, ProducerAtTheInnermostLoopComputesOneElementPerUse) {
  Stencil t;
  Schedule s = create_schedule({t.C.op()});
  s[t.B].compute_at(s[t.C], s[t.C]->leaf_iter_vars[1]);
  PrimFunc f = ScheduleToPrimFunc(s, {t.A, t.C}, "f");
  EXPECT_EQ(AllocatedExtents(f, "B"), (std::vector<int64_t>{2, 1})) << ToScript(f);
  ExpectSame(t.Run(s), t.Reference(), "innermost");
}

TEST(TeComputeAt, ChainOfAttachmentsAndSchedulesOnTheProducer) {
  Tensor A = placeholder({16}, kF32, "A");
  Tensor B = compute({16}, [&](Var i) { return A(i) + 1.0f; }, "B");
  Tensor C = compute({16}, [&](Var i) { return B(i) * 3.0f; }, "C");
  Tensor D = compute({16}, [&](Var i) { return C(i) - A(i); }, "D");
  Schedule s = create_schedule({D.op()});
  auto [o, in] = s[D].split(s[D]->leaf_iter_vars[0], 8);
  s[C].compute_at(s[D], o);
  auto [co, ci] = s[C].split(s[C]->leaf_iter_vars[0], 2);
  s[B].compute_at(s[C], co);
  s[C].vectorize(ci);
  PrimFunc f = ScheduleToPrimFunc(s, {A, D}, "chain");
  EXPECT_EQ(AllocatedExtents(f, "C"), std::vector<int64_t>{8}) << ToScript(f);
  EXPECT_EQ(AllocatedExtents(f, "B"), std::vector<int64_t>{2}) << ToScript(f);
  auto a = RandomArray(kF32, {16}, 3);
  auto out = RunFunc(f, {a}, {{kF32, {16}}})[0];
  for (int i = 0; i < 16; ++i) ASSERT_EQ(out.GetFloat(i), (a.GetFloat(i) + 1) * 3 - a.GetFloat(i)) << i;
}

TEST(TeComputeAt, ProducerOfAMatmulOperandInsideTheReduction) {
  Tensor A = placeholder({8, 6}, kF32, "A"), B = placeholder({6, 4}, kF32, "B");
  Tensor AA = compute({8, 6}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "AA");
  IterVar k = reduce_axis(Range(0, 6), "k");
  Tensor C = compute({8, 4}, [&](Var i, Var j) { return sum(AA(i, k->var) * B(k->var, j), {k}); }, "C");
  Schedule s = create_schedule({C.op()});
  auto [ko, ki] = s[C].split(k, 3);
  s[C].reorder({s[C]->leaf_iter_vars[0], ko, s[C]->leaf_iter_vars[1], ki});
  s[AA].compute_at(s[C], ko);
  PrimFunc f = ScheduleToPrimFunc(s, {A, B, C}, "mm");
  EXPECT_EQ(AllocatedExtents(f, "AA"), (std::vector<int64_t>{1, 3})) << ToScript(f);
  auto a = RandomArray(kF32, {8, 6}, 1), b = RandomArray(kF32, {6, 4}, 2);
  auto out = RunFunc(f, {a, b}, {{kF32, {8, 4}}})[0];
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 4; ++j) {
      double acc = 0;
      for (int r = 0; r < 6; ++r) acc += (a.GetFloat(i * 6 + r) + 1) * b.GetFloat(r * 4 + j);
      ASSERT_EQ(out.GetFloat(i * 4 + j), acc) << i << "," << j;
    }
  }
}

TEST(TeComputeAt, ThreadBoundLoopsAreRelaxedForAGlobalProducer) {
  Stencil t;
  Schedule s = create_schedule({t.C.op()});
  auto [bx, tx] = s[t.C].split(s[t.C]->leaf_iter_vars[0], 4);
  s[t.C].bind(bx, thread_axis("blockIdx.x"));
  s[t.C].bind(tx, thread_axis("threadIdx.x"));
  s[t.B].compute_at(s[t.C], tx);
  PrimFunc f = ScheduleToPrimFunc(s, {t.A, t.C}, "f");
  // B is in global memory, which every thread of every block shares (and all of them run
  // at once): it covers the rows all 3 blocks of 4 threads read, 3 * 4 + 1, not one thread's 2.
  EXPECT_EQ(AllocatedExtents(f, "B"), (std::vector<int64_t>{13, 6})) << ToScript(f);
  ExpectSame(t.Run(s), t.Reference(), "thread bound");
}

// Scope-aware bound inference: shared memory is shared by the threads of one block, so only
// threadIdx is relaxed (B covers the block's 4 threads, 4 + 1 rows); local memory is each
// thread's own, so nothing is (B covers one thread's 2 rows).
TEST(TeComputeAt, ThreadBoundLoopsAreRelaxedOnlyAsFarAsTheStorageIsShared) {
  for (const auto& [scope, rows] : {std::pair<std::string, int64_t>{"shared", 5}, {"local", 2}}) {
    Stencil t;
    Schedule s = create_schedule({t.C.op()});
    auto [bx, tx] = s[t.C].split(s[t.C]->leaf_iter_vars[0], 4);
    s[t.C].bind(bx, thread_axis("blockIdx.x"));
    s[t.C].bind(tx, thread_axis("threadIdx.x"));
    s[t.B].set_scope(scope);
    s[t.B].compute_at(s[t.C], tx);
    PrimFunc f = ScheduleToPrimFunc(s, {t.A, t.C}, "f");
    EXPECT_EQ(AllocatedExtents(f, "B"), (std::vector<int64_t>{rows, 6})) << scope << "\n"
                                                                         << ToScript(f);
    ExpectSame(t.Run(s), t.Reference(), scope);
  }
}

TEST(TeComputeAt, InlineSubstitutesTheBodyAndComputeRootUndoesAnAttachment) {
  Stencil t;
  Schedule s = create_schedule({t.C.op()});
  s[t.B].compute_inline();
  PrimFunc f = ScheduleToPrimFunc(s, {t.A, t.C}, "f");
  EXPECT_TRUE(AllocatedExtents(f, "B").empty()) << ToScript(f);
  EXPECT_EQ(ToScript(f).find("B["), std::string::npos) << ToScript(f);
  ExpectSame(t.Run(s), t.Reference(), "inline");

  Schedule r = create_schedule({t.C.op()});
  auto [io, ii] = r[t.C].split(r[t.C]->leaf_iter_vars[0], 4);
  r[t.B].compute_at(r[t.C], io);
  r[t.B].compute_root();
  // At the root, B covers what C's loops read, 3 tiles of 4 rows plus one: the last tile runs
  // past C's 10 rows (guarded), so B's region is not clipped to its 11 rows either (B's own
  // loop is guarded the same way).
  PrimFunc root = ScheduleToPrimFunc(r, {t.A, t.C}, "f");
  EXPECT_EQ(AllocatedExtents(root, "B"), (std::vector<int64_t>{13, 6})) << ToScript(root);
  EXPECT_NE(ToScript(root).find("if T.likely(i < 11):"), std::string::npos) << ToScript(root);
  ExpectSame(t.Run(r), t.Reference(), "compute_root");
}

TEST(TeComputeAt, InlineChainAndInlineIntoAnAttachedStage) {
  Tensor A = placeholder({12}, kF32, "A");
  Tensor B = compute({12}, [&](Var i) { return A(i) * 2.0f; }, "B");
  Tensor C = compute({12}, [&](Var i) { return B(i) + 3.0f; }, "C");
  Tensor D = compute({12}, [&](Var i) { return C(i) * C(i); }, "D");
  Tensor E = compute({12}, [&](Var i) { return D(i) - 1.0f; }, "E");
  Schedule s = create_schedule({E.op()});
  s[B].compute_inline();
  s[C].compute_inline();
  auto [o, in] = s[E].split(s[E]->leaf_iter_vars[0], 5);
  s[D].compute_at(s[E], o);
  PrimFunc f = ScheduleToPrimFunc(s, {A, E}, "chain");
  EXPECT_EQ(AllocatedExtents(f, "D"), std::vector<int64_t>{5}) << ToScript(f);
  auto a = RandomArray(kF32, {12}, 8);
  auto out = RunFunc(f, {a}, {{kF32, {12}}})[0];
  for (int i = 0; i < 12; ++i) {
    double c = a.GetFloat(i) * 2 + 3;
    ASSERT_EQ(out.GetFloat(i), c * c - 1) << i;
  }
}
TEST(TeComputeAt, SymbolicShapeWithAnAttachedProducerRunsAtTwoSizes) {
  Var n = SizeVar("n");
  Tensor A = placeholder({n}, kF32, "A");
  Tensor B = compute({n}, [&](Var i) { return A(i) * 3.0f; }, "B");
  Tensor C = compute({n - 1}, [&](Var i) { return B(i) - B(i + 1); }, "C");
  Schedule s = create_schedule({C.op()});
  auto [o, in] = s[C].split(s[C]->leaf_iter_vars[0], 4);
  s[B].compute_at(s[C], o);
  PrimFunc f = ScheduleToPrimFunc(s, {A, C}, "diff");
  EXPECT_EQ(AllocatedExtents(f, "B"), std::vector<int64_t>{5}) << ToScript(f);
  for (int64_t size : {6, 13}) {
    auto a = RandomArray(kF32, {size + 1}, 17);
    auto out = RunFunc(f, {a}, {{kF32, {size}}})[0];
    for (int64_t i = 0; i < size; ++i) {
      ASSERT_EQ(out.GetFloat(i), a.GetFloat(i) * 3 - a.GetFloat(i + 1) * 3) << size << " " << i;
    }
  }
}
}  // namespace
}  // namespace loom::te::test
