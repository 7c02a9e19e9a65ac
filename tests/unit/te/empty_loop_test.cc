// Computes with an extent 0: fusing an empty inner axis gives an empty fused loop, whose
// axis values are never used (recovering them used to divide by the extent 0 and throw).
#include "te_test_util.h"

namespace loom::te::test {
namespace {

TEST(TeEmptyLoops, FusingAnEmptyInnerAxisLowersAndRuns) {
  Tensor A = placeholder({3, 0}, kF32, "A");
  Tensor B = placeholder({3, 5}, kF32, "B");
  Tensor empty = compute({3, 0}, [&](Var i, Var j) { return A(i, j) + 1.0f; }, "empty");
  Tensor twice = compute({3, 5}, [&](Var i, Var j) { return B(i, j) * 2.0f; }, "twice");
  Schedule s = create_schedule({empty.op(), twice.op()});
  IterVar fused = s[empty].fuse(s[empty]->leaf_iter_vars[0], s[empty]->leaf_iter_vars[1]);
  auto [outer, lanes] = s[empty].split(fused, 4);
  s[empty].vectorize(lanes);
  tir::HostArray b = RandomArray(kF32, {3, 5}, 7);
  std::vector<tir::HostArray> got =
      RunFunc(ScheduleToPrimFunc(s, {A, B, empty, twice}, "f"), {tir::HostArray(kF32, {3, 0}), b},
              {{kF32, {3, 0}}, {kF32, {3, 5}}});
  EXPECT_EQ(got[0].NumElements(), 0);
  for (int64_t k = 0; k < 15; ++k) EXPECT_EQ(got[1].GetFloat(k), float(b.GetFloat(k)) * 2.0f);
}

}  // namespace
}  // namespace loom::te::test
