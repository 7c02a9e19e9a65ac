// cache_read, cache_write, set_scope and rfactor: results against naive references through
// the interpreter, alone and combined with split, reorder and compute_at, and where the
// caches are allocated.
#include "te_test_util.h"

namespace loom::te::test {
namespace {

struct Allocation {
  std::vector<int64_t> extents;
  std::string scope;
};

// The allocation of buffer `name` (its data variable is name + "_data").
std::optional<Allocation> AllocationOf(const PrimFunc& f, const std::string& name) {
  std::optional<Allocation> found;
  PostOrderVisit(f->body, [&](const ObjectRef& node) {
    const auto* alloc = node.as<AllocateNode>();
    if (!alloc || alloc->buffer_var.name() != name + "_data") return;
    found = Allocation{{}, alloc->storage_scope};
    for (const PrimExpr& e : alloc->extents) {
      const auto* imm = e.as<IntImmNode>();
      found->extents.push_back(imm ? imm->value : -1);
    }
  });
  return found;
}

// C = A x B^T, as in VTA's blocked GEMM: C[i, j] = sum_k A[i, k] * B[j, k].
struct Gemm {
  static constexpr int kM = 8, kN = 12, kK = 16;
  Tensor A = placeholder({kM, kK}, kF32, "A");
  Tensor B = placeholder({kN, kK}, kF32, "B");
  IterVar k = reduce_axis(Range(0, kK), "k");
  Tensor C = compute({kM, kN}, [&](Var i, Var j) { return sum(A(i, k->var) * B(j, k->var), {k}); },
                     "C");
  tir::HostArray a = RandomArray(kF32, {kM, kK}, 5);
  tir::HostArray b = RandomArray(kF32, {kN, kK}, 6);

  tir::HostArray Run(const PrimFunc& f) const { return RunFunc(f, {a, b}, {{kF32, {kM, kN}}})[0]; }
  tir::HostArray Reference() const {
    tir::HostArray c(kF32, {kM, kN});
    for (int i = 0; i < kM; ++i) {
      for (int j = 0; j < kN; ++j) {
        double acc = 0;
        for (int r = 0; r < kK; ++r) acc += a.GetFloat(i * kK + r) * b.GetFloat(j * kK + r);
        c.SetFloat(i * kN + j, acc);
      }
    }
    return c;
  }
};

TEST(TeCacheRead, CopyAtTheRootReplacesTheReadersLoads) {
  Gemm g;
  Schedule s = create_schedule({g.C.op()});
  Tensor AS = s.cache_read(g.A, "shared", {g.C.op()});
  EXPECT_EQ(AS.name(), "A.shared");
  PrimFunc f = ScheduleToPrimFunc(s, {g.A, g.B, g.C}, "f");
  std::optional<Allocation> alloc = AllocationOf(f, "A.shared");
  ASSERT_TRUE(alloc.has_value()) << ToScript(f);
  EXPECT_EQ(alloc->extents, (std::vector<int64_t>{Gemm::kM, Gemm::kK}));
  EXPECT_EQ(alloc->scope, "shared");
  // C no longer reads A itself.
  EXPECT_EQ(ToScript(f).find("A[i, k] * "), std::string::npos) << ToScript(f);
  ExpectSame(g.Run(f), g.Reference(), "cache_read at root");
  // The operations themselves are unchanged: another schedule of them has no copy.
  Schedule fresh = create_schedule({g.C.op()});
  EXPECT_EQ(fresh.stages().size(), 3u);
  EXPECT_EQ(ToScript(ScheduleToPrimFunc(fresh, {g.A, g.B, g.C}, "f")).find("A.shared"), std::string::npos);
}

TEST(TeCacheRead, CopyAtTheReductionsOuterLoopCoversOneBlockOfK) {
  Gemm g;
  for (int factor : {2, 4, 5}) {
    Schedule s = create_schedule({g.C.op()});
    Tensor AL = s.cache_read(g.A, "local.inp_buffer", {g.C.op()});
    auto [ko, ki] = s[g.C].split(g.k, factor);
    Stage c = s[g.C];
    s[AL].compute_at(c, ko);
    PrimFunc f = ScheduleToPrimFunc(s, {g.A, g.B, g.C}, "f");
    std::optional<Allocation> alloc = AllocationOf(f, "A.local.inp_buffer");
    ASSERT_TRUE(alloc.has_value()) << ToScript(f);
    EXPECT_EQ(alloc->extents, (std::vector<int64_t>{1, factor})) << ToScript(f);
    EXPECT_EQ(alloc->scope, "local.inp_buffer");
    ExpectSame(g.Run(f), g.Reference(), "cache_read at k.outer, factor " + std::to_string(factor));
  }
}

TEST(TeCacheRead, OnlyTheListedReadersReadTheCopy) {
  Tensor A = placeholder({6, 5}, kF32, "A");
  Tensor B = compute({6, 5}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "B");
  Tensor C = compute({6, 5}, [&](Var i, Var j) { return B(i, j) * A(i, j); }, "C");
  Schedule s = create_schedule({C.op()});
  Tensor BS = s.cache_read(B, "shared", {C.op()});
  Tensor AL = s.cache_read(A, "local", {B.op()});
  auto [io, ii] = s[C].split(s[C]->leaf_iter_vars[0], 2);
  s[BS].compute_at(s[C], io);
  s[B].compute_at(s[BS], s[BS]->leaf_iter_vars[0]);
  s[AL].compute_at(s[B], s[B]->leaf_iter_vars[0]);
  PrimFunc f = ScheduleToPrimFunc(s, {A, C}, "f");
  std::string text = ToScript(f);
  EXPECT_NE(text.find("= B.shared[i.inner, j_3] * A[i.outer * 2 + i.inner, j_3]"),
            std::string::npos)
      << text;  // C reads the copy of B, and A itself
  EXPECT_EQ(AllocationOf(f, "B.shared")->extents, (std::vector<int64_t>{2, 5})) << text;
  EXPECT_EQ(AllocationOf(f, "B")->extents, (std::vector<int64_t>{1, 5})) << text;
  EXPECT_EQ(AllocationOf(f, "A.local")->extents, (std::vector<int64_t>{1, 5})) << text;
  tir::HostArray a = RandomArray(kF32, {6, 5}, 3);
  tir::HostArray expected(kF32, {6, 5});
  for (int64_t x = 0; x < 30; ++x) expected.SetFloat(x, (a.GetFloat(x) + 1) * a.GetFloat(x));
  ExpectSame(RunFunc(f, {a}, {{kF32, {6, 5}}})[0], expected, "two caches");
}

TEST(TeCacheWrite, ReductionMovesIntoTheCacheComputedAtTheOutputsTile) {
  Gemm g;
  Schedule s = create_schedule({g.C.op()});
  Tensor CL = s.cache_write(g.C, "local");
  EXPECT_EQ(CL.name(), "C.local");
  EXPECT_TRUE(s[g.C]->leaf_iter_vars.size() == 2) << "the output stage became a copy";
  auto [io, jo, ii, ji] = s[g.C].tile(s[g.C]->leaf_iter_vars[0], s[g.C]->leaf_iter_vars[1], 4, 4);
  s[CL].compute_at(s[g.C], jo);
  PrimFunc f = ScheduleToPrimFunc(s, {g.A, g.B, g.C}, "f");
  std::optional<Allocation> alloc = AllocationOf(f, "C.local");
  ASSERT_TRUE(alloc.has_value()) << ToScript(f);
  EXPECT_EQ(alloc->extents, (std::vector<int64_t>{4, 4})) << ToScript(f);
  EXPECT_EQ(alloc->scope, "local");
  ExpectSame(g.Run(f), g.Reference(), "cache_write at the tile");
}

TEST(TeCacheWrite, ElementwiseStageAndIntermediateInput) {
  Tensor A = placeholder({7}, kF32, "A");
  Tensor B = compute({7}, [&](Var i) { return A(i) * 3.0f; }, "B");
  Tensor C = compute({7}, [&](Var i) { return B(i) - 1.0f; }, "C");
  Schedule s = create_schedule({C.op()});
  Tensor BL = s.cache_write(B, "local");
  Tensor CL = s.cache_write(C, "local");
  s[BL].compute_inline();
  auto [o, i] = s[C].split(s[C]->leaf_iter_vars[0], 3);
  s[CL].compute_at(s[C], o);
  s[B].compute_at(s[CL], s[CL]->leaf_iter_vars[0]);
  PrimFunc f = ScheduleToPrimFunc(s, {A, C}, "f");
  tir::HostArray a = RandomArray(kF32, {7}, 8);
  tir::HostArray expected(kF32, {7});
  for (int64_t x = 0; x < 7; ++x) expected.SetFloat(x, a.GetFloat(x) * 3 - 1);
  ExpectSame(RunFunc(f, {a}, {{kF32, {7}}})[0], expected, "cache_write elementwise");
}

TEST(TeSetScope, AllocationCarriesTheScope) {
  Tensor A = placeholder({4, 3}, kF32, "A");
  Tensor B = compute({4, 3}, [&](Var i, Var j) { return A(i, j) + 2.0f; }, "B");
  Tensor C = compute({4, 3}, [&](Var i, Var j) { return B(i, j) * B(i, j); }, "C");
  Schedule s = create_schedule({C.op()});
  s[B].set_scope("local.acc_buffer");
  s[B].compute_at(s[C], s[C]->leaf_iter_vars[0]);
  PrimFunc f = ScheduleToPrimFunc(s, {A, C}, "f");
  EXPECT_NE(ToScript(f).find(R"(B_data = T.allocate([1, 3], "float32", "local.acc_buffer"))"),
            std::string::npos)
      << ToScript(f);
  tir::HostArray a = RandomArray(kF32, {4, 3}, 9);
  tir::HostArray expected(kF32, {4, 3});
  for (int64_t x = 0; x < 12; ++x) expected.SetFloat(x, (a.GetFloat(x) + 2) * (a.GetFloat(x) + 2));
  ExpectSame(RunFunc(f, {a}, {{kF32, {4, 3}}})[0], expected, "set_scope");
}

// The schedule of VTA's blocked GEMM: the accumulator computed per output tile, the inputs
// staged per block of the reduction. The accumulator's scope comes from cache_write, or from
// set_scope on a cache made in another scope.
Schedule BlockedGemm(const Gemm& g, int tile, int k_block, bool with_set_scope) {
  Schedule s = create_schedule({g.C.op()});
  Tensor CL = s.cache_write(g.C, with_set_scope ? "local" : "local.acc_buffer");
  if (with_set_scope) s[CL].set_scope("local.acc_buffer");
  Tensor AL = s.cache_read(g.A, "local.inp_buffer", {CL.op()});
  Tensor BL = s.cache_read(g.B, "local.wgt_buffer", {CL.op()});
  Stage c = s[g.C];
  auto [io, jo, ii, ji] = c.tile(c->leaf_iter_vars[0], c->leaf_iter_vars[1], tile, tile);
  s[CL].compute_at(c, jo);
  Stage cl = s[CL];
  auto [ko, ki] = cl.split(g.k, k_block);
  cl.reorder({ko, cl->leaf_iter_vars[0], cl->leaf_iter_vars[1], ki});
  s[AL].compute_at(cl, ko);
  s[BL].compute_at(cl, ko);
  return s;
}

TEST(TeCacheComposition, BlockedGemmMatchesTheReferenceForManyBlockings) {
  Gemm g;
  for (int tile : {2, 4, 5}) {
    for (int k_block : {4, 3}) {
      for (bool with_set_scope : {false, true}) {
        Schedule s = BlockedGemm(g, tile, k_block, with_set_scope);
        PrimFunc f = ScheduleToPrimFunc(s, {g.A, g.B, g.C}, "gemm");
        std::string what = "tile " + std::to_string(tile) + " k_block " + std::to_string(k_block);
        std::optional<Allocation> acc =
            AllocationOf(f, with_set_scope ? "C.local" : "C.local.acc_buffer");
        ASSERT_TRUE(acc.has_value()) << ToScript(f);
        EXPECT_EQ(acc->scope, "local.acc_buffer") << what;
        EXPECT_EQ(acc->extents, (std::vector<int64_t>{tile, tile})) << what;
        std::optional<Allocation> inp = AllocationOf(f, "A.local.inp_buffer");
        ASSERT_TRUE(inp.has_value()) << ToScript(f);
        EXPECT_EQ(inp->extents, (std::vector<int64_t>{tile, k_block})) << what;
        ExpectSame(g.Run(f), g.Reference(), what);
      }
    }
  }
}

// Per 4x4 tile of C: the accumulator is zeroed, then per block of 8 along k the 4x8 slices
// of A and B are staged and multiplied in, and the tile is copied out.
TEST(TeCacheComposition, BlockedGemmGolden) {
  Gemm g;
  EXPECT_EQ(ToScript(ScheduleToPrimFunc(BlockedGemm(g, 4, 8, false), {g.A, g.B, g.C}, "gemm")),
            R"(@T.prim_func
def gemm(A: T.Buffer((8, 16), "float32"), B: T.Buffer((12, 16), "float32"), C: T.Buffer((8, 12), "float32")):
    for i.outer in range(2):
        for j.outer in range(3):
            C.local.acc_buffer_data = T.allocate([4, 4], "float32", "local.acc_buffer")
            for i.init in range(4):
                for j.init in range(4):
                    C.local.acc_buffer[i.init, j.init] = T.float32(0.0)
            for k.outer in range(2):
                A.local.inp_buffer_data = T.allocate([4, 8], "float32", "local.inp_buffer")
                for i in range(4):
                    for j in range(8):
                        A.local.inp_buffer[i, j] = A[i.outer * 4 + i, k.outer * 8 + j]
                B.local.wgt_buffer_data = T.allocate([4, 8], "float32", "local.wgt_buffer")
                for i_1 in range(4):
                    for j_1 in range(8):
                        B.local.wgt_buffer[i_1, j_1] = B[j.outer * 4 + i_1, k.outer * 8 + j_1]
                for i_2 in range(4):
                    for j_2 in range(4):
                        for k.inner in range(8):
                            C.local.acc_buffer[i_2, j_2] = C.local.acc_buffer[i_2, j_2] + A.local.inp_buffer[i_2, k.inner] * B.local.wgt_buffer[j_2, k.inner]
            for i.inner in range(4):
                for j.inner in range(4):
                    C[i.outer * 4 + i.inner, j.outer * 4 + j.inner] = C.local.acc_buffer[i.inner, j.inner]
)");
}

// S[i] = sum_k A[i, k] over a long row.
struct RowSum {
  static constexpr int kRows = 3, kLen = 100;
  Tensor A = placeholder({kRows, kLen}, kF32, "A");
  IterVar k = reduce_axis(Range(0, kLen), "k");
  Tensor S = compute({kRows}, [&](Var i) { return sum(A(i, k->var), {k}); }, "S");
  tir::HostArray a = RandomArray(kF32, {kRows, kLen}, 11);

  tir::HostArray Run(const Schedule& s) const {
    return RunFunc(ScheduleToPrimFunc(s, {A, S}, "rowsum"), {a}, {{kF32, {kRows}}})[0];
  }
  tir::HostArray Reference() const {
    tir::HostArray out(kF32, {kRows});
    for (int i = 0; i < kRows; ++i) {
      double acc = 0;
      for (int r = 0; r < kLen; ++r) acc += a.GetFloat(i * kLen + r);
      out.SetFloat(i, acc);
    }
    return out;
  }
};

TEST(TeRfactor, InnerPartOfASplitBecomesADataAxisOfPartialSums) {
  RowSum t;
  for (int factor_axis : {0, 1}) {
    Schedule s = create_schedule({t.S.op()});
    auto [ko, ki] = s[t.S].split(t.k, 16);
    Tensor SF = s.rfactor(t.S, ki, factor_axis);
    EXPECT_EQ(SF.name(), "S.rf");
    std::vector<int64_t> shape;
    for (const PrimExpr& e : SF.shape()) shape.push_back(e.as<IntImmNode>()->value);
    EXPECT_EQ(shape, factor_axis == 0 ? (std::vector<int64_t>{16, 3})
                                      : (std::vector<int64_t>{3, 16}));
    // The stage reduces the partial sums over one loop named after the factored axis.
    ASSERT_EQ(s[t.S]->leaf_iter_vars.size(), 2u);
    EXPECT_EQ(s[t.S]->leaf_iter_vars[1]->var.name(), "k.inner.v");
    PrimFunc f = ScheduleToPrimFunc(s, {t.A, t.S}, "rowsum");
    // 100 is not a multiple of 16: the partial sums skip the overshooting elements.
    EXPECT_NE(ToScript(f).find("< 100"), std::string::npos) << ToScript(f);
    ExpectSame(t.Run(s), t.Reference(),
               "rfactor k.inner, factor_axis " + std::to_string(factor_axis));
  }
}

TEST(TeRfactor, ComposesWithComputeAtReorderAndTheOuterPart) {
  RowSum t;
  {
    Schedule s = create_schedule({t.S.op()});
    auto [ko, ki] = s[t.S].split(t.k, 16);
    Tensor SF = s.rfactor(t.S, ki, 1);
    s[SF].compute_at(s[t.S], s[t.S]->leaf_iter_vars[0]);
    Stage sf = s[SF];
    sf.reorder({sf->leaf_iter_vars[2], sf->leaf_iter_vars[0], sf->leaf_iter_vars[1]});
    ExpectSame(t.Run(s), t.Reference(), "rfactor computed at the row");
  }
  {
    Schedule s = create_schedule({t.S.op()});
    auto [ko, ki] = s[t.S].split(t.k, 8);
    Tensor SF = s.rfactor(t.S, ko);
    auto [o, i] = s[SF].split(s[SF]->leaf_iter_vars[1], 2);
    s[SF].vectorize(i);
    ExpectSame(t.Run(s), t.Reference(), "rfactor k.outer");
  }
  {
    Schedule s = create_schedule({t.S.op()});
    Tensor SF = s.rfactor(t.S, t.k);  // no reduction loop is left for the partial tensor
    ExpectSame(t.Run(s), t.Reference(), "rfactor of the whole axis");
  }
}

TEST(TeRfactor, TwoReductionAxesFusedThenFactored) {
  Tensor A = placeholder({2, 6, 5}, kF32, "A");
  IterVar r = reduce_axis(Range(0, 6), "r"), q = reduce_axis(Range(0, 5), "q");
  Tensor M = compute({2}, [&](Var i) { return max(A(i, r->var, q->var), {r, q}); }, "M");
  tir::HostArray a = RandomArray(kF32, {2, 6, 5}, 12);
  tir::HostArray expected(kF32, {2});
  for (int i = 0; i < 2; ++i) {
    double best = -1e30;
    for (int x = 0; x < 30; ++x) best = std::max(best, a.GetFloat(i * 30 + x));
    expected.SetFloat(i, best);
  }
  Schedule s = create_schedule({M.op()});
  IterVar fused = s[M].fuse(r, q);
  auto [fo, fi] = s[M].split(fused, 4);
  s.rfactor(M, fo);
  ExpectSame(RunFunc(ScheduleToPrimFunc(s, {A, M}, "f"), {a}, {{kF32, {2}}})[0], expected, "fused rfactor");
  Schedule s2 = create_schedule({M.op()});
  s2.rfactor(M, q);  // r stays a reduction of the partial tensor
  ExpectSame(RunFunc(ScheduleToPrimFunc(s2, {A, M}, "f"), {a}, {{kF32, {2}}})[0], expected, "rfactor q");
}

// A tuple reduction (argmax over a row): rfactor and cache_write carry every output along.
TEST(TeRfactor, TupleReductionThroughRfactorAndCacheWrite) {
  CommReducerBuilder argmax = comm_reducer(
      [](const Array<Var>& x, const Array<Var>& y) {
        PrimExpr take_y = y[1] > x[1] || (y[1] == x[1] && y[0] < x[0]);
        return Array<PrimExpr>{select(take_y, y[0], x[0]), select(take_y, y[1], x[1])};
      },
      [](const Array<DataType>& t) {
        return Array<PrimExpr>{make_const(t[0], int64_t{-1}), min_value(t[1])};
      },
      "argmax");
  Tensor A = placeholder({4, 23}, kF32, "A");
  IterVar r = reduce_axis(Range(0, 23), "r");
  Array<Tensor> out = compute(
      {4}, [&](const Array<Var>& i) { return argmax({r->var, A(i[0], r->var)}, {r}); }, "T");
  tir::HostArray a = RandomArray(kF32, {4, 23}, 13);
  for (bool cache_first : {false, true}) {
    Schedule s = create_schedule({out[0].op()});
    Tensor reduced = out[1];
    if (cache_first) reduced = s.cache_write(out[1], "local");
    auto [ro, ri] = s[reduced].split(r, 5);
    Tensor partial = s.rfactor(reduced, ri);
    EXPECT_EQ(partial.value_index(), 1);
    EXPECT_EQ(partial.op()->num_outputs(), 2);
    auto res = RunFunc(ScheduleToPrimFunc(s, {A, out[0], out[1]}, "argmax"), {a}, {{kI32, {4}}, {kF32, {4}}});
    for (int i = 0; i < 4; ++i) {
      int best = 0;
      for (int j = 1; j < 23; ++j) {
        if (a.GetFloat(i * 23 + j) > a.GetFloat(i * 23 + best)) best = j;
      }
      EXPECT_EQ(res[0].GetInt(i), best) << "row " << i << " cache_first " << cache_first;
      EXPECT_EQ(res[1].GetFloat(i), a.GetFloat(i * 23 + best)) << "row " << i;
    }
  }
}

}  // namespace
}  // namespace loom::te::test
