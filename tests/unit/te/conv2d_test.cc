// A conv2d (NCHW, 3x3 kernel, padding 1) with its padded input as a compute stage, scheduled
// the way CPU schedules do it -- cache_write of the output, the accumulator and the padding
// computed at loops of the output, vectorized inner loops, non-dividing splits -- and run
// through the whole TIR pipeline against a naive reference.
#include <random>

#include "te_test_util.h"

namespace loom::te::test {
namespace {

constexpr int kBatch = 1, kInC = 3, kOutC = 4, kH = 7, kW = 6, kPad = 1, kKernel = 3;

struct Conv2d {
  Tensor data = placeholder({kBatch, kInC, kH, kW}, kF32, "data");
  Tensor kernel = placeholder({kOutC, kInC, kKernel, kKernel}, kF32, "kernel");
  Tensor pad = compute(
      {kBatch, kInC, kH + 2 * kPad, kW + 2 * kPad},
      [&](Var n, Var c, Var y, Var x) {
        PrimExpr inside = y >= kPad && y < kH + kPad && x >= kPad && x < kW + kPad;
        return if_then_else(inside, data(n, c, y - kPad, x - kPad), 0.0f);
      },
      "data_pad");
  IterVar rc = reduce_axis(Range(0, kInC), "rc");
  IterVar ry = reduce_axis(Range(0, kKernel), "ry");
  IterVar rx = reduce_axis(Range(0, kKernel), "rx");
  Tensor conv = compute(
      {kBatch, kOutC, kH, kW},
      [&](Var n, Var f, Var y, Var x) {
        return sum(pad(n, rc->var, y + ry->var, x + rx->var) * kernel(f, rc->var, ry->var, rx->var),
                   {rc, ry, rx});
      },
      "conv");
  tir::HostArray d = RandomArray(kF32, {kBatch, kInC, kH, kW}, 11);
  tir::HostArray k = RandomArray(kF32, {kOutC, kInC, kKernel, kKernel}, 12);

  tir::HostArray Reference() const {
    tir::HostArray out(kF32, {kBatch, kOutC, kH, kW});
    for (int f = 0; f < kOutC; ++f) {
      for (int y = 0; y < kH; ++y) {
        for (int x = 0; x < kW; ++x) {
          double acc = 0;
          for (int c = 0; c < kInC; ++c) {
            for (int dy = 0; dy < kKernel; ++dy) {
              for (int dx = 0; dx < kKernel; ++dx) {
                int iy = y + dy - kPad, ix = x + dx - kPad;
                if (iy < 0 || iy >= kH || ix < 0 || ix >= kW) continue;
                acc += d.GetFloat((c * kH + iy) * kW + ix) *
                       k.GetFloat(((f * kInC + c) * kKernel + dy) * kKernel + dx);
              }
            }
          }
          out.SetFloat((f * kH + y) * kW + x, acc);
        }
      }
    }
    return out;
  }

  // Both forms (see RunFunc); returns the lowered one.
  PrimFunc Check(const Schedule& s, const std::string& what) const {
    tir::HostArray expected = Reference();
    std::vector<std::pair<DataType, std::vector<int64_t>>> out{{kF32, {kBatch, kOutC, kH, kW}}};
    ExpectSame(RunFunc(ScheduleToPrimFunc(s, {data, kernel, conv}, "conv2d"), {d, k}, out)[0],
               expected, what);
    return lower(s, {data, kernel, conv}, "conv2d");
  }
};

bool HasVectorStore(const PrimFunc& f) {
  bool found = false;
  PostOrderVisit(f->body, [&](const ObjectRef& node) {
    if (const auto* store = node.as<BufferStoreNode>()) found |= store->value.dtype().lanes() > 1;
  });
  return found;
}

// The CPU schedule: per output row, the accumulator row (local) is computed over the whole
// reduction with its x loop vectorized, and copied out with a vectorized, non-dividing split.
TEST(TeConv2d, CacheWriteComputeAtVectorizeMatchesTheReference) {
  Conv2d c;
  Schedule s = create_schedule({c.conv.op()});
  Tensor CL = s.cache_write(c.conv, "local");
  Stage out = s[c.conv];
  const Array<IterVar> axes = out->leaf_iter_vars;
  auto [xo, xi] = out.split(axes[3], 4);
  out.vectorize(xi);
  s[CL].compute_at(out, axes[2]);
  Stage cl = s[CL];
  const Array<IterVar> cl_axes = cl->leaf_iter_vars;
  cl.reorder({cl_axes[4], cl_axes[5], cl_axes[6], cl_axes[3]});
  cl.vectorize(cl_axes[3]);
  s[c.pad].compute_at(cl, cl_axes[4]);
  PrimFunc f = c.Check(s, "cpu schedule");
  EXPECT_TRUE(HasVectorStore(f)) << ToScript(f);
}

// Random placements of the padding and the accumulator, random split factors (often not
// dividing 6 or 7), reorders of the accumulator's loops and vectorized innermost loops.
TEST(TeConv2d, RandomSchedulesMatchTheReference) {
  Conv2d c;
  std::mt19937 rng(17);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  for (int trial = 0; trial < 24; ++trial) {
    Schedule s = create_schedule({c.conv.op()});
    std::string log;
    bool cached = pick(3) != 0;
    Tensor CL = cached ? s.cache_write(c.conv, "local") : c.conv;
    Stage out = s[c.conv];
    int factor = 2 + pick(4);
    auto [yo, yi] = out.split(out->leaf_iter_vars[2], factor);
    log += " split y " + std::to_string(factor);
    if (cached && pick(2)) {
      out.vectorize(out->leaf_iter_vars.back());
      log += " vectorize";
    }
    Stage work = s[CL];
    if (cached) {
      int at = pick(static_cast<int>(out->leaf_iter_vars.size()));
      work.compute_at(out, out->leaf_iter_vars[at]);
      log += " CL at " + out->leaf_iter_vars[at]->var.name();
      const Array<IterVar>& leaves = work->leaf_iter_vars;
      work.reorder({leaves[4], leaves[5], leaves[6], leaves[3]});
      auto [x_o, x_i] = work.split(leaves[6], 2 + pick(3));
      if (pick(2)) work.vectorize(x_i);
    }
    int where = pick(static_cast<int>(work->leaf_iter_vars.size()) + 1);
    if (where < static_cast<int>(work->leaf_iter_vars.size())) {
      s[c.pad].compute_at(work, work->leaf_iter_vars[where]);
      log += " pad at " + work->leaf_iter_vars[where]->var.name();
    } else {
      s[c.pad].compute_inline();
      log += " pad inline";
    }
    c.Check(s, "trial " + std::to_string(trial) + ":" + log);
  }
}

}  // namespace
}  // namespace loom::te::test
