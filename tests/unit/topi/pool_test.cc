// Pooling compiled against a direct reference written here: max and average, padding
// (symmetric and not), strides, dilations, ceil_mode, count_include_pad, global pooling, in
// NCHW and in blocked NCHW<k>c layouts; and the user errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "loom/ir/functor.h"
#include "loom/te/lower.h"
#include "loom/topi/nn.h"
#include "loom/topi/schedule.h"
#include "topi_test_util.h"

namespace loom::topi {
namespace {

using target_test::RandomArray;

// One axis of a window: its taps' input positions and whether each is in the input or in
// the padding (ceil_mode may let a window overhang past the end padding: not counted).
struct Tap {
  int64_t position;
  bool inside, counted_with_pad;
};

std::vector<Tap> Taps(int64_t out, int64_t in, int64_t pad_begin, int64_t pad_end, int64_t kernel,
                      int64_t stride, int64_t dilation) {
  std::vector<Tap> taps;
  for (int64_t k = 0; k < kernel; ++k) {
    int64_t position = out * stride + k * dilation - pad_begin;
    taps.push_back({position, position >= 0 && position < in, position < in + pad_end});
  }
  return taps;
}

std::vector<double> Reference(const tir::HostArray& x, const std::vector<int64_t>& shape,
                              const Pool2DAttrs& a, bool average, int64_t P, int64_t Q) {
  std::vector<double> out;
  const int64_t H = shape[2], W = shape[3];
  for (int64_t nc = 0; nc < shape[0] * shape[1]; ++nc)
    for (int64_t p = 0; p < P; ++p)
      for (int64_t q = 0; q < Q; ++q) {
        double best = -std::numeric_limits<double>::infinity(), total = 0;
        int64_t inside = 0, with_pad = 0;
        for (const Tap& r : Taps(p, H, a.pads[0], a.pads[2], a.kernel[0], a.strides[0], a.dilations[0]))
          for (const Tap& s : Taps(q, W, a.pads[1], a.pads[3], a.kernel[1], a.strides[1], a.dilations[1])) {
            with_pad += r.counted_with_pad && s.counted_with_pad;
            if (!r.inside || !s.inside) continue;
            double v = x.GetFloat((nc * H + r.position) * W + s.position);
            best = std::max(best, v);
            total += v;
            ++inside;
          }
        out.push_back(average ? total / (a.count_include_pad ? with_pad : inside) : best);
      }
  return out;
}

Pool2DAttrs Attrs(std::array<int64_t, 2> kernel, std::array<int64_t, 2> strides,
                  std::array<int64_t, 4> pads, bool ceil_mode = false, bool include_pad = false,
                  std::array<int64_t, 2> dilations = {1, 1}) {
  Pool2DAttrs a;
  a.kernel = kernel;
  a.strides = strides;
  a.pads = pads;
  a.ceil_mode = ceil_mode;
  a.count_include_pad = include_pad;
  a.dilations = dilations;
  return a;
}

TEST(TopiPool, MaxAndAverageMatchTheDirectReference) {
  std::vector<int64_t> shape = {2, 3, 13, 21};
  std::vector<Pool2DAttrs> cases = {
      Attrs({2, 2}, {2, 2}, {0, 0, 0, 0}),
      Attrs({3, 3}, {1, 1}, {1, 1, 1, 1}),
      Attrs({3, 3}, {2, 2}, {1, 1, 1, 1}, /*ceil_mode=*/true),
      Attrs({3, 2}, {2, 1}, {0, 1, 2, 0}, false, /*include_pad=*/true),
      Attrs({3, 3}, {2, 2}, {1, 1, 1, 1}, true, true),
      Attrs({2, 3}, {1, 2}, {1, 0, 1, 2}, false, false, /*dilations=*/{2, 2}),
  };
  for (const Pool2DAttrs& a : cases) {
    for (bool average : {false, true}) {
      te::Tensor x = te::placeholder({2, 3, 13, 21}, DataType::Float(32), "x");
      te::Tensor y = average ? avg_pool2d(x, a) : max_pool2d(x, a);
      int64_t P = 0, Q = 0;
      ASSERT_TRUE(IsConstInt(y.shape()[2], &P) && IsConstInt(y.shape()[3], &Q));
      tir::HostArray input = RandomArray(DataType::Float(32), shape, 51);
      std::vector<double> want = Reference(input, shape, a, average, P, Q);
      tir::HostArray got = test::RunScheduled(schedule_pool2d(y), {x}, {y}, {input})[0];
      ASSERT_EQ(got.NumElements(), static_cast<int64_t>(want.size()));
      std::string label = std::string(average ? "avg" : "max") + " kernel " +
                          std::to_string(a.kernel[0]) + "x" + std::to_string(a.kernel[1]) +
                          " ceil=" + std::to_string(a.ceil_mode) +
                          " include_pad=" + std::to_string(a.count_include_pad);
      test::ExpectClose(got, [&](int64_t i) { return want[i]; }, 1e-5, label);
    }
  }
}

TEST(TopiPool, GlobalPooling) {
  te::Tensor x = te::placeholder({2, 3, 5, 7}, DataType::Float(32), "x");
  tir::HostArray input = RandomArray(DataType::Float(32), {2, 3, 5, 7}, 52);
  te::Tensor mx = global_max_pool2d(x), av = global_avg_pool2d(x);
  tir::HostArray got_max = test::RunScheduled(schedule_reduce({mx}), {x}, {mx}, {input})[0];
  tir::HostArray got_avg = test::RunScheduled(schedule_reduce({av}), {x}, {av}, {input})[0];
  auto fold = [&](int64_t nc, bool average) {
    double best = -1e30, total = 0;
    for (int64_t i = 0; i < 35; ++i) {
      best = std::max(best, input.GetFloat(nc * 35 + i));
      total += input.GetFloat(nc * 35 + i);
    }
    return average ? total / 35 : best;
  };
  test::ExpectClose(got_max, [&](int64_t i) { return fold(i, false); }, 0, "global max");
  test::ExpectClose(got_avg, [&](int64_t i) { return fold(i, true); }, 1e-5, "global avg");
}

// `nchw` (shape [N, C, H, W]) in NCHW<k>c: element (n, c, h, w) at [n, c / k, h, w, c % k].
tir::HostArray Blocked(const tir::HostArray& nchw, const std::vector<int64_t>& shape, int64_t k) {
  const int64_t C = shape[1], HW = shape[2] * shape[3];
  tir::HostArray blocked(nchw.dtype(), {shape[0], C / k, shape[2], shape[3], k});
  for (int64_t i = 0; i < nchw.NumElements(); ++i) {
    int64_t n = i / (C * HW), c = i / HW % C, hw = i % HW;
    blocked.SetFloat(((n * (C / k) + c / k) * HW + hw) * k + c % k, nchw.GetFloat(i));
  }
  return blocked;
}

// The flat NCHW position of blocked flat position `i` of a [N, C / k, P, Q, k] tensor.
int64_t UnblockedPosition(int64_t i, int64_t C, int64_t PQ, int64_t k) {
  int64_t ci = i % k, pq = i / k % PQ, cb = i / (k * PQ) % (C / k), n = i / (k * PQ * (C / k));
  return (n * C + cb * k + ci) * PQ + pq;
}

TEST(TopiPool, BlockedLayoutsMatchTheNchwReference) {
  struct Case {
    std::vector<int64_t> shape;  // NCHW
    int64_t block;
  };
  std::vector<Case> cases = {{{2, 32, 9, 11}, 16}, {{1, 8, 7, 5}, 8}, {{1, 64, 3, 4}, 32},
                             {{1, 3, 6, 6}, 1}};
  std::vector<Pool2DAttrs> attrs = {Attrs({3, 3}, {2, 2}, {1, 1, 1, 1}, /*ceil_mode=*/true),
                                    Attrs({3, 2}, {2, 1}, {0, 1, 2, 0}, false, /*include_pad=*/true),
                                    Attrs({2, 2}, {1, 1}, {0, 0, 0, 0})};
  for (const Case& c : cases) {
    const int64_t N = c.shape[0], C = c.shape[1], H = c.shape[2], W = c.shape[3], k = c.block;
    const std::string layout = "NCHW" + std::to_string(k) + "c";
    tir::HostArray nchw = RandomArray(DataType::Float(32), c.shape, 53);
    tir::HostArray input = Blocked(nchw, c.shape, k);
    te::Tensor x = te::placeholder({int(N), int(C / k), int(H), int(W), int(k)},
                                   DataType::Float(32), "x");
    for (const Pool2DAttrs& a : attrs) {
      for (bool average : {false, true}) {
        te::Tensor y = average ? avg_pool2d(x, a, layout) : max_pool2d(x, a, layout);
        ASSERT_EQ(y.ndim(), 5);
        int64_t P = 0, Q = 0;
        ASSERT_TRUE(IsConstInt(y.shape()[2], &P) && IsConstInt(y.shape()[3], &Q));
        std::vector<double> want = Reference(nchw, c.shape, a, average, P, Q);
        tir::HostArray got = test::RunScheduled(schedule_pool2d(y), {x}, {y}, {input})[0];
        ASSERT_EQ(got.NumElements(), static_cast<int64_t>(want.size()));
        test::ExpectClose(got, [&](int64_t i) { return want[UnblockedPosition(i, C, P * Q, k)]; },
                          1e-5, std::string(average ? "avg " : "max ") + layout);
      }
    }
    te::Tensor mx = global_max_pool2d(x, layout), av = global_avg_pool2d(x, layout);
    tir::HostArray got_max = test::RunScheduled(schedule_reduce({mx}), {x}, {mx}, {input})[0];
    tir::HostArray got_avg = test::RunScheduled(schedule_reduce({av}), {x}, {av}, {input})[0];
    auto fold = [&](int64_t i, bool average) {
      int64_t nc = UnblockedPosition(i, C, 1, k);
      double best = -1e30, total = 0;
      for (int64_t j = 0; j < H * W; ++j) {
        best = std::max(best, nchw.GetFloat(nc * H * W + j));
        total += nchw.GetFloat(nc * H * W + j);
      }
      return average ? total / double(H * W) : best;
    };
    test::ExpectClose(got_max, [&](int64_t i) { return fold(i, false); }, 0, "global max " + layout);
    test::ExpectClose(got_avg, [&](int64_t i) { return fold(i, true); }, 1e-5, "global avg " + layout);
  }
}

// How the lowered pool reads its input 'x': loads under a window's bounds guard
// (if_then_else) and loads outside any guard, and whether any load reads a vector.
struct PoolReads {
  int guarded = 0, unguarded = 0;
  bool vector_reads = false;
};

PoolReads ReadsOf(const te::Tensor& x, const te::Tensor& y) {
  PrimFunc f = te::lower(schedule_pool2d(y), {x, y}, "pool");
  std::set<const Object*> guarded;
  PoolReads reads;
  PostOrderVisit(f->body, [&](const ObjectRef& node) {
    if (const auto* call = node.as<CallNode>(); call && call->op.name() == "if_then_else") {
      PostOrderVisit(call->args[1], [&](const ObjectRef& inner) {
        if (inner.as<BufferLoadNode>()) guarded.insert(inner.get());
      });
    }
  });
  PostOrderVisit(f->body, [&](const ObjectRef& node) {
    const auto* load = node.as<BufferLoadNode>();
    if (load == nullptr || load->buffer->name != x.name()) return;
    ++(guarded.count(node.get()) ? reads.guarded : reads.unguarded);
    reads.vector_reads |= Downcast<PrimExpr>(node).dtype().lanes() > 1;
  });
  return reads;
}

// The window's bounds are likely(): LoopPartition peels the border rows and columns, so the
// interior reads the input with no guard (and no clamped index). NCHW pools run one output
// at a time (vector lanes over output columns made every tap a gather); blocked ones keep
// the channel block as the vector.
TEST(TopiPool, InteriorReadsAreUnguardedAndNchwRunsScalar) {
  const Pool2DAttrs padded = Attrs({3, 3}, {1, 1}, {1, 1, 1, 1});
  te::Tensor nchw = te::placeholder({1, 2, 32, 32}, DataType::Float(32), "x");
  for (bool average : {false, true}) {
    te::Tensor y = average ? avg_pool2d(nchw, padded) : max_pool2d(nchw, padded);
    PoolReads reads = ReadsOf(nchw, y);
    EXPECT_GT(reads.guarded, 0) << average;  // the border
    EXPECT_GT(reads.unguarded, 0) << average;
    EXPECT_FALSE(reads.vector_reads) << average;
  }
  te::Tensor blocked = te::placeholder({1, 2, 32, 32, 16}, DataType::Float(32), "x");
  PoolReads reads = ReadsOf(blocked, max_pool2d(blocked, padded, "NCHW16c"));
  EXPECT_GT(reads.unguarded, 0);
  EXPECT_TRUE(reads.vector_reads);
}

// A global pooling in a channel block narrower than a vector (NCHW8c) sums each block as one
// vector of its lanes, not one scalar chain per channel.
TEST(TopiPool, GlobalPoolingOfANarrowBlockSumsVectors) {
  te::Tensor x = te::placeholder({1, 6, 20, 20, 8}, DataType::Float(32), "x");
  te::Tensor y = global_avg_pool2d(x, "NCHW8c");
  PrimFunc f = te::lower(schedule_reduce({y}, 16), {x, y}, "pool");
  bool vector_reads = false, scalar_reads = false;
  PostOrderVisit(f->body, [&](const ObjectRef& node) {
    const auto* load = node.as<BufferLoadNode>();
    if (load == nullptr || load->buffer->name != x.name()) return;
    (Downcast<PrimExpr>(node).dtype().lanes() == 8 ? vector_reads : scalar_reads) = true;
  });
  EXPECT_TRUE(vector_reads);
  EXPECT_FALSE(scalar_reads);
}

TEST(TopiPool, BadAttributesAreUserErrors) {
  te::Tensor x = te::placeholder({1, 2, 8, 8}, DataType::Float(32), "x");
  te::Tensor i = te::placeholder({1, 2, 8, 8}, DataType::Int(32), "i");
  EXPECT_NE(test::ErrorOf([&] { max_pool2d(x, Attrs({2, 2}, {0, 1}, {0, 0, 0, 0})); }).find("must be positive"),
            std::string::npos);
  EXPECT_NE(test::ErrorOf([&] { max_pool2d(x, Attrs({2, 2}, {1, 1}, {2, 0, 0, 0})); }).find("smaller than the kernel's extent"),
            std::string::npos);
  EXPECT_NE(test::ErrorOf([&] { avg_pool2d(i, Attrs({2, 2}, {1, 1}, {0, 0, 0, 0})); }).find("avg_pool2d: 'i' is int32; the operator takes float tensors"),
            std::string::npos);
  EXPECT_NE(test::ErrorOf([&] { max_pool2d(x, Attrs({9, 9}, {1, 1}, {0, 0, 0, 0})); }).find("does not fit"),
            std::string::npos);
  te::Tensor blocked = te::placeholder({1, 2, 8, 8, 16}, DataType::Float(32), "blocked");
  EXPECT_NE(test::ErrorOf([&] { max_pool2d(blocked, Attrs({2, 2}, {1, 1}, {0, 0, 0, 0}), "NCHW8c"); })
                .find("max_pool2d: 'blocked' of shape (1, 2, 8, 8, 16) is not in layout NCHW8c "
                      "(expected [N, C / k, H, W, k] with k = 8)"),
            std::string::npos);
  EXPECT_NE(test::ErrorOf([&] { global_avg_pool2d(x, "NCHW16c"); }).find("is not in layout NCHW16c"),
            std::string::npos);
  EXPECT_NE(test::ErrorOf([&] { global_max_pool2d(x, "NHWC"); })
                .find("global_max_pool2d: layout 'NHWC' is not supported; expected NCHW or NCHW<k>c"),
            std::string::npos);
}

}  // namespace
}  // namespace loom::topi
