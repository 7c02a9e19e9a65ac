// PlanMemory: slot sharing by liveness, in-place elementwise kernels, own slots for the
// model's inputs and outputs, and the plan against its lower bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "loom/graph/memory_plan.h"

namespace loom::graph {
namespace {

using Kind = MemoryPlanProblem::EntryKind;

// Builds problems kernel by kernel.
struct ProblemBuilder {
  MemoryPlanProblem problem;
  int Entry(int64_t bytes, Kind kind = Kind::kIntermediate) {
    problem.entries.push_back({bytes, kind});
    return static_cast<int>(problem.entries.size()) - 1;
  }
  // A kernel reading `inputs` and writing a new entry of `bytes`; with `in_place`, output 0
  // may take the slot of inputs[0].
  int Kernel(std::vector<int> inputs, int64_t bytes, bool in_place = false) {
    int out = Entry(bytes);
    std::vector<int> candidates;
    if (in_place) candidates.push_back(inputs[0]);
    problem.kernels.push_back({std::move(inputs), {out}, std::move(candidates)});
    return out;
  }
};

// Entries that share a slot are never live at once, except an input and the output that
// an elementwise kernel writes over it where the input dies; every slot holds its entries.
void ExpectNoOverlap(const MemoryPlanProblem& problem, const MemoryPlan& plan) {
  const int n = static_cast<int>(problem.entries.size());
  std::vector<int> first(n, -1), last(n, -1);  // inputs: live from the start
  for (int k = 0; k < static_cast<int>(problem.kernels.size()); ++k) {
    for (int e : problem.kernels[k].outputs) first[e] = last[e] = k;
    for (int e : problem.kernels[k].inputs) last[e] = k;
  }
  auto written_over = [&](int in, int out) {
    if (first[out] < 0 || last[in] != first[out]) return false;
    const MemoryPlanProblem::Kernel& kernel = problem.kernels[first[out]];
    return kernel.outputs[0] == out &&
           std::count(kernel.in_place_candidates.begin(), kernel.in_place_candidates.end(), in);
  };
  for (int a = 0; a < n; ++a) {
    if (plan.storage_of[a] < 0) continue;
    EXPECT_GE(plan.storage_bytes[plan.storage_of[a]], problem.entries[a].bytes) << a;
    for (int b = a + 1; b < n; ++b) {
      if (plan.storage_of[a] != plan.storage_of[b]) continue;
      bool disjoint = last[a] < first[b] || last[b] < first[a];
      EXPECT_TRUE(disjoint || written_over(a, b) || written_over(b, a))
          << "entries " << a << " and " << b << " share slot " << plan.storage_of[a]
          << " while both live";
    }
  }
}

TEST(PlanMemory, ChainReusesTwoSlots) {
  ProblemBuilder g;
  int value = g.Entry(1000, Kind::kInput);
  for (int i = 0; i < 6; ++i) value = g.Kernel({value}, 1000);
  g.problem.entries[value].kind = Kind::kOutput;
  MemoryPlan plan = PlanMemory(g.problem);
  ExpectNoOverlap(g.problem, plan);
  // input, output, and the intermediates alternating between two slots.
  EXPECT_EQ(plan.stats.num_storages, 4);
  EXPECT_EQ(plan.stats.planned_bytes, 4000);
  EXPECT_EQ(plan.stats.lower_bound_bytes, 4000);
  std::set<int> intermediate_slots;
  for (int e = 1; e < 6; ++e) intermediate_slots.insert(plan.storage_of[e]);
  EXPECT_EQ(intermediate_slots.size(), 2u);
}

TEST(PlanMemory, ElementwiseChainRunsInPlace) {
  ProblemBuilder g;
  int value = g.Entry(1000, Kind::kInput);
  value = g.Kernel({value}, 1000);  // the input keeps its own slot: no in-place here
  int first = value;
  for (int i = 0; i < 4; ++i) value = g.Kernel({value}, 1000, /*in_place=*/true);
  g.Kernel({value}, 10);
  g.problem.entries.back().kind = Kind::kOutput;
  MemoryPlan plan = PlanMemory(g.problem);
  ExpectNoOverlap(g.problem, plan);
  for (int e = first; e <= value; ++e) EXPECT_EQ(plan.storage_of[e], plan.storage_of[first]);
  EXPECT_EQ(plan.stats.num_storages, 3);
}

TEST(PlanMemory, NoInPlaceWhileTheInputIsStillNeeded) {
  ProblemBuilder g;
  int x = g.Entry(100, Kind::kInput);
  int a = g.Kernel({x}, 100);
  int b = g.Kernel({a}, 100, /*in_place=*/true);  // a is read again below
  int c = g.Kernel({a, b}, 100);
  g.problem.entries[c].kind = Kind::kOutput;
  MemoryPlan plan = PlanMemory(g.problem);
  ExpectNoOverlap(g.problem, plan);
  EXPECT_NE(plan.storage_of[a], plan.storage_of[b]);
}

TEST(PlanMemory, InputsOutputsAndParamsNeverShare) {
  ProblemBuilder g;
  int x = g.Entry(64, Kind::kInput);
  int w = g.Entry(64, Kind::kParam);
  int y = g.Kernel({x, w}, 64, /*in_place=*/true);
  g.problem.entries[y].kind = Kind::kOutput;
  int z = g.Kernel({y}, 64, /*in_place=*/true);
  g.problem.entries[z].kind = Kind::kOutput;
  int t = g.Kernel({z}, 64);
  g.Kernel({t}, 64);
  MemoryPlan plan = PlanMemory(g.problem);
  EXPECT_EQ(plan.storage_of[w], -1);
  std::set<int> pinned = {plan.storage_of[x], plan.storage_of[y], plan.storage_of[z]};
  EXPECT_EQ(pinned.size(), 3u);
  for (int e : {t, t + 1}) EXPECT_EQ(pinned.count(plan.storage_of[e]), 0u) << e;
}

TEST(PlanMemory, SmallerSlotGrowsInsteadOfANewOne) {
  ProblemBuilder g;
  int x = g.Entry(10, Kind::kInput);
  int a = g.Kernel({x}, 100);
  int b = g.Kernel({a}, 200);   // a dies: its 100-byte slot is free
  int c = g.Kernel({b}, 300);   // takes a's slot, grown to 300
  g.problem.entries[g.Kernel({c}, 10)].kind = Kind::kOutput;
  MemoryPlan plan = PlanMemory(g.problem);
  ExpectNoOverlap(g.problem, plan);
  EXPECT_EQ(plan.storage_of[a], plan.storage_of[c]);
  EXPECT_EQ(plan.storage_bytes[plan.storage_of[c]], 300);
  EXPECT_EQ(plan.stats.planned_bytes, 10 + 10 + 300 + 200);
}

// ResNet-18's shape: a stem, then four stages of two residual blocks, the first block of
// stages 2-4 downsampling (stride 2, channels x2) with a 1x1 shortcut. Kernels as FuseOps
// makes them: conv+bias+relu, and conv+bias+add+relu taking the shortcut.
TEST(PlanMemory, ResNetPlansWithinAQuarterOfItsLowerBound) {
  ProblemBuilder g;
  const int64_t f32 = 4;
  int value = g.Entry(3 * 224 * 224 * f32, Kind::kInput);
  value = g.Kernel({value}, 64 * 112 * 112 * f32);  // stem conv
  value = g.Kernel({value}, 64 * 56 * 56 * f32);    // max pool
  int64_t channels = 64, size = 56;
  for (int stage = 0; stage < 4; ++stage) {
    for (int block = 0; block < 2; ++block) {
      bool down = stage > 0 && block == 0;
      if (down) {
        channels *= 2;
        size /= 2;
      }
      int64_t bytes = channels * size * size * f32;
      int shortcut = down ? g.Kernel({value}, bytes) : value;
      int mid = g.Kernel({value}, bytes);
      value = g.Kernel({mid, shortcut}, bytes);
    }
  }
  value = g.Kernel({value}, 512 * f32);  // global average pool
  int out = g.Kernel({value}, 1000 * f32);
  g.problem.entries[out].kind = Kind::kOutput;
  MemoryPlan plan = PlanMemory(g.problem);
  ExpectNoOverlap(g.problem, plan);
  EXPECT_LE(plan.stats.planned_bytes, plan.stats.lower_bound_bytes * 5 / 4)
      << plan.stats.planned_bytes << " planned, bound " << plan.stats.lower_bound_bytes;
  EXPECT_LT(plan.stats.num_storages, 8);
}

}  // namespace
}  // namespace loom::graph
