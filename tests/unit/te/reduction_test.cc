// Reductions: matmul under loop schedules, the built-in reducers, a reduction condition,
// and a tuple reducer (argmax); all run against naive references.
#include "te_test_util.h"

namespace loom::te::test {
namespace {

constexpr int kM = 12, kN = 10, kK = 8;

struct Matmul {
  Tensor A = placeholder({kM, kK}, kF32, "A");
  Tensor B = placeholder({kK, kN}, kF32, "B");
  IterVar k = reduce_axis(Range(0, kK), "k");
  Tensor C = compute({kM, kN}, [&](Var i, Var j) { return sum(A(i, k->var) * B(k->var, j), {k}); },
                     "C");
  tir::HostArray a = RandomArray(kF32, {kM, kK}, 11), b = RandomArray(kF32, {kK, kN}, 12);

  tir::HostArray Run(const Schedule& s) const {
    return RunFunc(ScheduleToPrimFunc(s, {A, B, C}, "matmul"), {a, b}, {{kF32, {kM, kN}}})[0];
  }
  tir::HostArray Reference() const {
    tir::HostArray out(kF32, {kM, kN});
    for (int i = 0; i < kM; ++i) {
      for (int j = 0; j < kN; ++j) {
        double acc = 0;
        for (int r = 0; r < kK; ++r) acc += a.GetFloat(i * kK + r) * b.GetFloat(r * kN + j);
        out.SetFloat(i * kN + j, acc);
      }
    }
    return out;
  }
};

TEST(TeReduction, MatmulUnderSchedulesMatchesReference) {
  Matmul t;
  tir::HostArray reference = t.Reference();
  ExpectSame(t.Run(create_schedule({t.C.op()})), reference, "unscheduled");
  {
    Schedule s = create_schedule({t.C.op()});
    Stage c = s[t.C];
    auto [io, ii] = c.split(c->leaf_iter_vars[0], 4);
    auto [jo, ji] = c.split(c->leaf_iter_vars[2], 5);
    auto [ko, ki] = c.split(t.k, 3);  // does not divide 8
    c.reorder({io, jo, ko, ii, ki, ji});
    c.vectorize(ji);
    c.parallel(io);
    c.unroll(ki);
    ExpectSame(t.Run(s), reference, "split + reorder + vectorize + parallel");
  }
  {
    Schedule s = create_schedule({t.C.op()});
    Stage c = s[t.C];
    auto tiles = c.tile(c->leaf_iter_vars[0], c->leaf_iter_vars[1], 5, 3);
    c.reorder({t.k, tiles[0]});  // the reduction outermost: init before every loop
    ExpectSame(t.Run(s), reference, "reduction loop outermost");
  }
  {
    Schedule s = create_schedule({t.C.op()});
    Stage c = s[t.C];
    c.fuse(c->leaf_iter_vars[0], c->leaf_iter_vars[1]);
    ExpectSame(t.Run(s), reference, "fused data-parallel loops");
  }
}

TEST(TeReduction, InitIsPlacedOutsideTheFirstReductionLoop) {
  Matmul t;
  Schedule s = create_schedule({t.C.op()});
  Stage c = s[t.C];
  auto [jo, ji] = c.split(c->leaf_iter_vars[1], 5);
  c.reorder({c->leaf_iter_vars[0], jo, t.k, ji});
  PrimFunc f = ScheduleToPrimFunc(s, {t.A, t.B, t.C}, "f");
  // The accumulators of one j.outer iteration are cleared by a loop over j.inner.init, then
  // the k loop runs with j.inner inside it.
  ASSERT_EQ(LoopsNamed(f, "j.inner.init").size(), 1u) << ToScript(f);
  EXPECT_EQ(LoopsNamed(f, "i.init").size(), 0u) << "i encloses the reduction: no init loop";
  ExpectSame(t.Run(s), t.Reference(), "init placement");
}

TEST(TeReduction, BuiltInReducersAndCondition) {
  Tensor A = placeholder({6, 7}, kF32, "A");
  IterVar r = reduce_axis(Range(0, 7), "r");
  auto make = [&](const char* name, auto reducer, PrimExpr where = PrimExpr()) {
    return compute({6}, [&](Var i) { return reducer(A(i, r->var), Array<IterVar>{r}, where); }, name);
  };
  auto sum_fn = [](PrimExpr e, Array<IterVar> ax, PrimExpr w) { return sum(e, ax, w); };
  Tensor S = make("S", sum_fn);
  Tensor Mx = make("Mx", [](PrimExpr e, Array<IterVar> ax, PrimExpr w) { return max(e, ax, w); });
  Tensor Mn = make("Mn", [](PrimExpr e, Array<IterVar> ax, PrimExpr w) { return min(e, ax, w); });
  Tensor P = make("P", [](PrimExpr e, Array<IterVar> ax, PrimExpr w) { return prod(e, ax, w); });
  Tensor Even = make("Even", sum_fn, floormod(r->var, 2) == 0);
  Schedule s = create_schedule({S.op(), Mx.op(), Mn.op(), P.op(), Even.op()});
  s[P].split(r, 2);
  auto a = RandomArray(kF32, {6, 7}, 5);
  auto out = RunFunc(ScheduleToPrimFunc(s, {A, S, Mx, Mn, P, Even}, "reducers"), {a},
                     {{kF32, {6}}, {kF32, {6}}, {kF32, {6}}, {kF32, {6}}, {kF32, {6}}});
  for (int i = 0; i < 6; ++i) {
    double sum_v = 0, max_v = -1e30, min_v = 1e30, prod_v = 1, even_v = 0;
    for (int j = 0; j < 7; ++j) {
      double x = a.GetFloat(i * 7 + j);
      sum_v += x;
      max_v = std::max(max_v, x);
      min_v = std::min(min_v, x);
      prod_v = static_cast<float>(prod_v * x);
      if (j % 2 == 0) even_v += x;
    }
    EXPECT_EQ(out[0].GetFloat(i), sum_v) << i;
    EXPECT_EQ(out[1].GetFloat(i), max_v) << i;
    EXPECT_EQ(out[2].GetFloat(i), min_v) << i;
    EXPECT_EQ(out[3].GetFloat(i), prod_v) << i;
    EXPECT_EQ(out[4].GetFloat(i), even_v) << i;
  }
}

TEST(TeReduction, ArgmaxTupleReducer) {
  CommReducerBuilder argmax = comm_reducer(
      [](const Array<Var>& x, const Array<Var>& y) {
        // Larger value wins; on ties the smaller index, so the result is order independent.
        PrimExpr take_y = y[1] > x[1] || (y[1] == x[1] && y[0] < x[0]);
        return Array<PrimExpr>{select(take_y, y[0], x[0]), select(take_y, y[1], x[1])};
      },
      [](const Array<DataType>& t) { return Array<PrimExpr>{make_const(t[0], int64_t{-1}), min_value(t[1])}; },
      "argmax");
  Tensor A = placeholder({5, 9}, kF32, "A");
  IterVar r = reduce_axis(Range(0, 9), "r");
  Array<Tensor> out = compute(
      {5}, [&](const Array<Var>& i) { return argmax({r->var, A(i[0], r->var)}, {r}); }, "T");
  ASSERT_EQ(out.size(), 2u);
  for (int factor : {0, 4}) {
    Schedule s = create_schedule({out[0].op()});
    if (factor) s[out[0]].split(r, factor);
    auto a = RandomArray(kF32, {5, 9}, 9);
    auto res = RunFunc(ScheduleToPrimFunc(s, {A, out[0], out[1]}, "argmax"), {a}, {{kI32, {5}}, {kF32, {5}}});
    for (int i = 0; i < 5; ++i) {
      int best = 0;
      for (int j = 1; j < 9; ++j) {
        if (a.GetFloat(i * 9 + j) > a.GetFloat(i * 9 + best)) best = j;
      }
      EXPECT_EQ(res[0].GetInt(i), best) << "row " << i << " split " << factor;
      EXPECT_EQ(res[1].GetFloat(i), a.GetFloat(i * 9 + best)) << "row " << i;
    }
  }
}

TEST(TeReduction, ReductionToAScalar) {
  Tensor A = placeholder({4, 5}, kF32, "A");
  IterVar x = reduce_axis(Range(0, 4), "x"), y = reduce_axis(Range(0, 5), "y");
  Tensor total = compute({}, [&](const Array<Var>&) { return sum(A(x->var, y->var), {x, y}); }, "total");
  auto a = RandomArray(kF32, {4, 5}, 4);
  auto res = RunFunc(ScheduleToPrimFunc(create_schedule({total.op()}), {A, total}, "total"), {a}, {{kF32, {}}});
  double expected = 0;
  for (int i = 0; i < 20; ++i) expected += a.GetFloat(i);
  EXPECT_EQ(res[0].GetFloat(0), expected);
}

TEST(TeReduction, TypeLimitsAreTheIdentitiesOfMaxAndMin) {
  EXPECT_EQ(ToScript(min_value(DataType::Int(8))), "T.int8(-128)");
  EXPECT_EQ(ToScript(max_value(DataType::Int(32))), "2147483647");
  EXPECT_EQ(ToScript(max_value(DataType::UInt(8))), "T.uint8(255)");
  EXPECT_EQ(ToScript(min_value(DataType::UInt(16))), "T.uint16(0)");
  EXPECT_EQ(ToScript(min_value(DataType::Float(32))), "T.float32(-3.4028235e+38)");
}

}  // namespace
}  // namespace loom::te::test
