// Random schedules of one computation must all compute the same result: splits by random
// (often non-dividing) factors, random loop orders, fuses, loop kinds, and a producer
// attached at a random loop of its consumer or inlined. Each schedule runs twice (RunFunc): as
// the scheduled loop nest, and fully lowered (flattened, partitioned, vectorized, storage
// planned), so every pass of the pipeline meets every shape of loop nest a schedule makes.
#include <algorithm>

#include "te_test_util.h"

namespace loom::te::test {
namespace {

constexpr int kM = 7, kN = 9, kK = 6;

TEST(TeRandomSchedule, MatmulWithAProducerAgreesWithTheReference) {
  Tensor A = placeholder({kM, kK}, kF32, "A"), B = placeholder({kK, kN}, kF32, "B");
  Tensor AA = compute({kM, kK}, [&](Var i, Var j) { return A(i, j) * 2.0f + 1.0f; }, "AA");
  IterVar k = reduce_axis(Range(0, kK), "k");
  Tensor C = compute({kM, kN}, [&](Var i, Var j) { return sum(AA(i, k->var) * B(k->var, j), {k}); },
                     "C");
  tir::HostArray a = RandomArray(kF32, {kM, kK}, 31), b = RandomArray(kF32, {kK, kN}, 32);
  tir::HostArray reference(kF32, {kM, kN});
  for (int i = 0; i < kM; ++i) {
    for (int j = 0; j < kN; ++j) {
      double acc = 0;
      for (int r = 0; r < kK; ++r) acc += (a.GetFloat(i * kK + r) * 2 + 1) * b.GetFloat(r * kN + j);
      reference.SetFloat(i * kN + j, acc);
    }
  }
  std::mt19937 rng(2024);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  for (int trial = 0; trial < 100; ++trial) {
    Schedule s = create_schedule({C.op()});
    Stage c = s[C];
    std::string log;
    for (int step = 0, steps = pick(4); step < steps; ++step) {
      IterVar leaf = c->leaf_iter_vars[pick(static_cast<int>(c->leaf_iter_vars.size()))];
      int factor = 1 + pick(5);
      if (pick(2)) {
        c.split(leaf, factor);
        log += " split(" + leaf->var.name() + "," + std::to_string(factor) + ")";
      } else {
        c.split_by_nparts(leaf, factor);
        log += " nparts(" + leaf->var.name() + "," + std::to_string(factor) + ")";
      }
    }
    Array<IterVar> order = c->leaf_iter_vars;
    std::shuffle(order.begin(), order.end(), rng);
    c.reorder(order);
    log += " reorder";
    for (size_t p = 0; p + 1 < c->leaf_iter_vars.size(); ++p) {
      const IterVar& x = c->leaf_iter_vars[p];
      const IterVar& y = c->leaf_iter_vars[p + 1];
      if (x->iter_type == y->iter_type && pick(3) == 0) {
        log += " fuse(" + x->var.name() + "," + y->var.name() + ")";
        c.fuse(x, y);
        break;
      }
    }
    const IterVar& last = c->leaf_iter_vars.back();
    if (last->iter_type == IterVarType::kDataPar && pick(2)) c.vectorize(last);
    if (c->leaf_iter_vars[0]->iter_type == IterVarType::kDataPar && pick(2)) {
      c.parallel(c->leaf_iter_vars[0]);
    }
    int where = pick(static_cast<int>(c->leaf_iter_vars.size()) + 2);
    if (where < static_cast<int>(c->leaf_iter_vars.size())) {
      s[AA].compute_at(c, c->leaf_iter_vars[where]);
      log += " AA at " + c->leaf_iter_vars[where]->var.name();
    } else if (where == static_cast<int>(c->leaf_iter_vars.size())) {
      s[AA].compute_inline();
      log += " AA inline";
    }
    PrimFunc f = ScheduleToPrimFunc(s, {A, B, C}, "mm");
    auto out = RunFunc(f, {a, b}, {{kF32, {kM, kN}}})[0];
    ExpectSame(out, reference, "trial " + std::to_string(trial) + ":" + log + "\n" + ToScript(f));
  }
}

// A three-stage 2-D stencil chain: each stage reads its producer at shifted positions, and
// each producer is attached at a random loop of its reader (or inlined, or left at the root).
TEST(TeRandomSchedule, StencilChainAgreesWithTheReference) {
  constexpr int kH = 9, kW = 7;
  Tensor A = placeholder({kH + 2, kW + 1}, kF32, "A");
  Tensor B = compute({kH + 1, kW + 1}, [&](Var i, Var j) { return A(i, j) + A(i + 1, j); }, "B");
  Tensor C = compute({kH, kW}, [&](Var i, Var j) { return B(i, j) * B(i + 1, j + 1); }, "C");
  tir::HostArray a = RandomArray(kF32, {kH + 2, kW + 1}, 41);
  auto at = [&](int i, int j) { return a.GetFloat(i * (kW + 1) + j); };
  tir::HostArray reference(kF32, {kH, kW});
  for (int i = 0; i < kH; ++i) {
    for (int j = 0; j < kW; ++j) {
      reference.SetFloat(i * kW + j, (at(i, j) + at(i + 1, j)) * (at(i + 1, j + 1) + at(i + 2, j + 1)));
    }
  }
  std::mt19937 rng(99);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  for (int trial = 0; trial < 60; ++trial) {
    Schedule s = create_schedule({C.op()});
    std::string log;
    for (const Tensor& t : {C, B}) {
      Stage stage = s[t];
      for (int d = 0; d < 2; ++d) {
        if (!pick(2)) continue;
        IterVar axis = stage->leaf_iter_vars[stage->LeafIndex(stage->root_iter_vars[d])];
        int factor = 2 + pick(4);
        stage.split(axis, factor);
        log += " " + t.name() + ".split(" + axis->var.name() + "," + std::to_string(factor) + ")";
      }
      Array<IterVar> order = stage->leaf_iter_vars;
      std::shuffle(order.begin(), order.end(), rng);
      stage.reorder(order);
    }
    Stage c = s[C];
    if (pick(3) == 0 && c->leaf_iter_vars.size() >= 2) {
      c.bind(c->leaf_iter_vars[0], thread_axis("blockIdx.x"));
      c.bind(c->leaf_iter_vars[1], thread_axis("threadIdx.x"));
      log += " bind";
    }
    int where = pick(static_cast<int>(c->leaf_iter_vars.size()) + 2);
    if (where < static_cast<int>(c->leaf_iter_vars.size())) {
      s[B].compute_at(c, c->leaf_iter_vars[where]);
      log += " B at " + c->leaf_iter_vars[where]->var.name();
    } else if (where == static_cast<int>(c->leaf_iter_vars.size())) {
      s[B].compute_inline();
      log += " B inline";
    }
    PrimFunc f = ScheduleToPrimFunc(s, {A, C}, "stencil");
    auto out = RunFunc(f, {a}, {{kF32, {kH, kW}}})[0];
    ExpectSame(out, reference, "trial " + std::to_string(trial) + ":" + log + "\n" + ToScript(f));
  }
}

}  // namespace
}  // namespace loom::te::test
