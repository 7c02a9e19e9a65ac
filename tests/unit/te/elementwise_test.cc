// Elementwise computes lowered with each loop primitive, run on random data and compared
// with a naive reference and with the unscheduled lowering.
#include "te_test_util.h"

namespace loom::te::test {
namespace {

constexpr int64_t kRows = 10, kCols = 6;

struct MulAdd {
  Tensor A = placeholder({int(kRows), int(kCols)}, kF32, "A");
  Tensor B = placeholder({int(kRows), int(kCols)}, kF32, "B");
  Tensor C = compute({int(kRows), int(kCols)},
                     [&](Var i, Var j) { return A(i, j) * B(i, j) + 1.0f; }, "C");
  tir::HostArray a = RandomArray(kF32, {kRows, kCols}, 1);
  tir::HostArray b = RandomArray(kF32, {kRows, kCols}, 2);

  tir::HostArray Run(const Schedule& s) const {
    return RunFunc(ScheduleToPrimFunc(s, {A, B, C}, "mul_add"), {a, b}, {{kF32, {kRows, kCols}}})[0];
  }
  tir::HostArray Reference() const {
    tir::HostArray out(kF32, {kRows, kCols});
    for (int64_t i = 0; i < kRows * kCols; ++i) out.SetFloat(i, a.GetFloat(i) * b.GetFloat(i) + 1.0);
    return out;
  }
};

TEST(TeElementwise, UnscheduledMatchesReference) {
  MulAdd t;
  ExpectSame(t.Run(create_schedule({t.C.op()})), t.Reference(), "unscheduled");
}

// An intermediate compute nobody holds (built inside an expression) stays alive through its
// consumer: before, its operation died with the temporary and the consumer's input could no
// longer be found ("reads buffer 'doubled', which is not a tensor").
TEST(TeElementwise, IntermediatesHeldOnlyByTheirConsumerStayAlive) {
  Tensor A = placeholder({int(kRows)}, kF32, "A");
  auto doubled = [&] { return compute({int(kRows)}, [&](Var i) { return A(i) * 2.0f; }, "doubled"); };
  Tensor C = [&] {
    Tensor d = doubled();
    return compute({int(kRows)}, [&](Var i) { return d(i) + 1.0f; }, "C");
  }();
  Schedule s = create_schedule({C.op()});
  EXPECT_EQ(s.stages().size(), 3u);
  tir::HostArray a = RandomArray(kF32, {kRows}, 3);
  tir::HostArray got = RunFunc(ScheduleToPrimFunc(s, {A, C}, "f"), {a}, {{kF32, {kRows}}})[0];
  tir::HostArray want(kF32, {kRows});
  for (int64_t i = 0; i < kRows; ++i) want.SetFloat(i, float(a.GetFloat(i) * 2) + 1.0f);
  ExpectSame(got, want, "chain");
}

TEST(TeElementwise, EachLoopPrimitiveKeepsTheResult) {
  using Primitive = std::function<void(Stage, Schedule)>;
  std::vector<std::pair<std::string, Primitive>> cases = {
      {"split divisible", [](Stage c, Schedule) { c.split(c->leaf_iter_vars[1], 3); }},
      {"split non-divisible", [](Stage c, Schedule) { c.split(c->leaf_iter_vars[0], 4); }},
      {"split_by_nparts", [](Stage c, Schedule) { c.split_by_nparts(c->leaf_iter_vars[0], 3); }},
      {"split factor larger than extent",
       [](Stage c, Schedule) { c.split(c->leaf_iter_vars[1], 16); }},
      {"tile", [](Stage c, Schedule) { c.tile(c->leaf_iter_vars[0], c->leaf_iter_vars[1], 4, 4); }},
      {"fuse", [](Stage c, Schedule) { c.fuse(c->leaf_iter_vars[0], c->leaf_iter_vars[1]); }},
      {"fuse then split",
       [](Stage c, Schedule) {
         IterVar f = c.fuse(c->leaf_iter_vars[0], c->leaf_iter_vars[1]);
         auto [o, i] = c.split(f, 7);
         c.vectorize(i);
         c.parallel(o);
       }},
      {"split then fuse across",
       [](Stage c, Schedule) {
         auto [o, i] = c.split(c->leaf_iter_vars[0], 4);
         c.reorder({o, c->leaf_iter_vars[2], i});
         c.fuse(c->leaf_iter_vars[1], c->leaf_iter_vars[2]);
       }},
      {"reorder", [](Stage c, Schedule) { c.reorder({c->leaf_iter_vars[1], c->leaf_iter_vars[0]}); }},
      {"unroll + pragma",
       [](Stage c, Schedule) {
         c.unroll(c->leaf_iter_vars[1]);
         c.pragma(c->leaf_iter_vars[0], "auto_unroll_max_step", 16);
       }},
      {"bind",
       [](Stage c, Schedule) {
         auto [o, i] = c.split(c.fuse(c->leaf_iter_vars[0], c->leaf_iter_vars[1]), 32);
         c.bind(o, thread_axis("blockIdx.x"));
         c.bind(i, thread_axis("threadIdx.x"));
       }},
  };
  MulAdd t;
  tir::HostArray reference = t.Reference();
  for (const auto& [name, apply] : cases) {
    Schedule s = create_schedule({t.C.op()});
    apply(s[t.C], s);
    ExpectSame(t.Run(s), reference, name);
  }
}

TEST(TeElementwise, NonDivisibleSplitGuardsTheBodyAndDivisibleDoesNot) {
  MulAdd t;
  Schedule s = create_schedule({t.C.op()});
  s[t.C].split(s[t.C]->leaf_iter_vars[0], 4);
  std::string text = ToScript(ScheduleToPrimFunc(s, {t.A, t.B, t.C}, "f"));
  EXPECT_NE(text.find("if T.likely(i.outer * 4 + i.inner < 10):"), std::string::npos) << text;
  EXPECT_EQ(LoopsNamed(ScheduleToPrimFunc(s, {t.A, t.B, t.C}, "f"), "i.outer").at(0)->extent.as<IntImmNode>()->value, 3);

  Schedule even = create_schedule({t.C.op()});
  even[t.C].split(even[t.C]->leaf_iter_vars[0], 5);
  std::string even_text = ToScript(ScheduleToPrimFunc(even, {t.A, t.B, t.C}, "f"));
  EXPECT_EQ(even_text.find("likely"), std::string::npos) << even_text;
}

TEST(TeElementwise, LoopKindsAndPragmasAppearInTheLoweredLoops) {
  MulAdd t;
  Schedule s = create_schedule({t.C.op()});
  Stage c = s[t.C];
  auto [o, i] = c.split(c->leaf_iter_vars[1], 2);
  c.parallel(c->leaf_iter_vars[0]);
  c.unroll(o);
  c.vectorize(i);
  c.pragma(c->leaf_iter_vars[0], "auto_unroll_max_step", 8);
  PrimFunc f = ScheduleToPrimFunc(s, {t.A, t.B, t.C}, "f");
  EXPECT_EQ(LoopsNamed(f, "i").at(0)->for_kind, ForKind::kParallel);
  EXPECT_EQ(LoopsNamed(f, "j.outer").at(0)->for_kind, ForKind::kUnrolled);
  EXPECT_EQ(LoopsNamed(f, "j.inner").at(0)->for_kind, ForKind::kVectorized);
  const auto* attr = f->body.as<AttrStmtNode>();
  ASSERT_NE(attr, nullptr) << ToScript(f);
  EXPECT_EQ(attr->attr_key, "pragma_auto_unroll_max_step");
}

TEST(TeElementwise, SymbolicShapeRunsAtTwoSizes) {
  Var n = SizeVar("n");
  Tensor A = placeholder({n, 3}, kF32, "A");
  Tensor B = compute({n, 3}, [&](Var i, Var j) { return A(i, j) * A(i, j) - cast(kF32, j); }, "B");
  Schedule s = create_schedule({B.op()});
  auto [o, i] = s[B].split(s[B]->leaf_iter_vars[0], 4);
  s[B].parallel(o);
  PrimFunc f = ScheduleToPrimFunc(s, {A, B}, "square");
  EXPECT_NE(ToScript(f).find("likely"), std::string::npos) << "n is not known to divide by 4";
  for (int64_t size : {5, 12}) {
    auto a = RandomArray(kF32, {size, 3}, 7);
    auto out = RunFunc(f, {a}, {{kF32, {size, 3}}})[0];
    for (int64_t k = 0; k < size * 3; ++k) {
      ASSERT_EQ(out.GetFloat(k), a.GetFloat(k) * a.GetFloat(k) - double(k % 3)) << size << " " << k;
    }
  }
}

TEST(TeElementwise, MultipleOutputsIntrinsicsAndConditionals) {
  Tensor A = placeholder({12}, kF32, "A");
  Array<Tensor> outs = compute(
      {12},
      [&](const Array<Var>& v) {
        PrimExpr x = A(v[0]);
        return Array<PrimExpr>{if_then_else(x > 0.0f, x, 0.0f),
                               select(v[0] < 6, call_intrin(kF32, "fabs", {x}), x * 3.0f),
                               cast(kI32, x) * 2};
      },
      "M");
  ASSERT_EQ(outs.size(), 3u);
  EXPECT_EQ(outs[2].dtype(), kI32);
  Schedule s = create_schedule({outs[0].op()});
  s[outs[0]].split(s[outs[0]]->leaf_iter_vars[0], 5);
  auto a = RandomArray(kF32, {12}, 3);
  auto r = RunFunc(ScheduleToPrimFunc(s, {A, outs[0], outs[1], outs[2]}, "multi"), {a},
                   {{kF32, {12}}, {kF32, {12}}, {kI32, {12}}});
  for (int64_t i = 0; i < 12; ++i) {
    double x = a.GetFloat(i);
    EXPECT_EQ(r[0].GetFloat(i), x > 0 ? x : 0.0);
    EXPECT_EQ(r[1].GetFloat(i), i < 6 ? std::abs(x) : x * 3);
    EXPECT_EQ(r[2].GetInt(i), static_cast<int64_t>(x) * 2);
  }
}

}  // namespace
}  // namespace loom::te::test
