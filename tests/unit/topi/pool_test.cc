// Pooling compiled against a direct reference written here: max and average, padding
// (symmetric and not), strides, dilations, ceil_mode, count_include_pad, global pooling; and
// the user errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "loom/topi/nn.h"
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

TEST(TopiPool, BadAttributesAreUserErrors) {
  te::Tensor x = te::placeholder({1, 2, 8, 8}, DataType::Float(32), "x");
  te::Tensor i = te::placeholder({1, 2, 8, 8}, DataType::Int(32), "i");
  EXPECT_NE(test::ErrorOf([&] { max_pool2d(x, Attrs({2, 2}, {0, 1}, {0, 0, 0, 0})); }).find("must be positive"),
            std::string::npos);
  EXPECT_NE(test::ErrorOf([&] { max_pool2d(x, Attrs({2, 2}, {1, 1}, {2, 0, 0, 0})); }).find("smaller than the kernel's extent"),
            std::string::npos);
  EXPECT_NE(test::ErrorOf([&] { avg_pool2d(i, Attrs({2, 2}, {1, 1}, {0, 0, 0, 0})); }).find("must be a 4-d (NCHW) float tensor"),
            std::string::npos);
  EXPECT_NE(test::ErrorOf([&] { max_pool2d(x, Attrs({9, 9}, {1, 1}, {0, 0, 0, 0})); }).find("does not fit"),
            std::string::npos);
}

}  // namespace
}  // namespace loom::topi
