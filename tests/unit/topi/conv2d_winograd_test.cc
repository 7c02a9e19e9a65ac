// Winograd F(4x4, 3x3) conv2d in the blocked NCHWc layouts, compiled with its schedule and
// compared with a direct double-precision convolution written here: partial last tiles,
// asymmetric pads, channel blocks that are no multiple of 16, batch 2, 1x1 outputs, an
// epilogue, non-default configs; and the user errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "loom/topi/elementwise.h"
#include "loom/topi/x86/conv2d_winograd.h"
#include "topi_test_util.h"

namespace loom::topi::x86 {
namespace {

using target_test::RandomArray;

struct WinogradCase {
  int64_t n, c, h, w, k;
  std::array<int64_t, 4> pads;
  int64_t ic_bn, oc_bn;
};

Conv2DAttrs Pads(std::array<int64_t, 4> pads) {
  Conv2DAttrs attrs;
  attrs.pads = pads;
  return attrs;
}

struct Reference {
  std::vector<double> value;      // output in NCHW[oc_bn]c order
  std::vector<double> magnitude;  // sum of |products| of each output
};

// The direct convolution of blocked data x [N, C/ic_bn, H, W, ic_bn] with w [K, C, 3, 3].
Reference DirectReference(const tir::HostArray& x, const tir::HostArray& w, const WinogradCase& c) {
  const int64_t P = c.h + c.pads[0] + c.pads[2] - 2, Q = c.w + c.pads[1] + c.pads[3] - 2;
  Reference ref;
  for (int64_t n = 0; n < c.n; ++n)
    for (int64_t kb = 0; kb < c.k / c.oc_bn; ++kb)
      for (int64_t p = 0; p < P; ++p)
        for (int64_t q = 0; q < Q; ++q)
          for (int64_t lane = 0; lane < c.oc_bn; ++lane) {
            int64_t k = kb * c.oc_bn + lane;
            double total = 0, magnitude = 0;
            for (int64_t ch = 0; ch < c.c; ++ch)
              for (int64_t r = 0; r < 3; ++r)
                for (int64_t s = 0; s < 3; ++s) {
                  int64_t h = p + r - c.pads[0], wc = q + s - c.pads[1];
                  if (h < 0 || h >= c.h || wc < 0 || wc >= c.w) continue;
                  double product =
                      x.GetFloat((((n * (c.c / c.ic_bn) + ch / c.ic_bn) * c.h + h) * c.w + wc) *
                                     c.ic_bn + ch % c.ic_bn) *
                      w.GetFloat(((k * c.c + ch) * 3 + r) * 3 + s);
                  total += product;
                  magnitude += std::abs(product);
                }
            ref.value.push_back(total);
            ref.magnitude.push_back(magnitude);
          }
  return ref;
}

// Winograd's float32 error, relative to the sum of |products| of the output (the scale of
// a direct float32 sum's error): measured below 2e-6 on these cases (the transforms
// multiply by at most 8 and divide by 24), so 1e-5 leaves a margin while a wrong
// coefficient or a misplaced tile is off by O(1).
constexpr double kTolerance = 1e-5;

void ExpectWithinTolerance(const tir::HostArray& got, const Reference& want,
                           const std::string& label) {
  ASSERT_EQ(got.NumElements(), static_cast<int64_t>(want.value.size())) << label;
  int failures = 0;
  for (int64_t i = 0; i < got.NumElements() && failures < 5; ++i) {
    double error = std::abs(got.GetFloat(i) - want.value[i]);
    if (!(error <= kTolerance * std::max(want.magnitude[i], 1e-30))) {
      ++failures;
      ADD_FAILURE() << label << " element " << i << ": got " << got.GetFloat(i) << ", want "
                    << want.value[i] << " (sum of |products| " << want.magnitude[i] << ")";
    }
  }
}

// The transformed weight, computed by Loom (the pack_weight step of a model).
tir::HostArray TransformWeight(const te::Tensor& w, const tir::HostArray& weight) {
  return test::RunCompiled({w}, winograd_weight_transform(w), {weight});
}

std::string Label(const WinogradCase& c) {
  return "winograd n=" + std::to_string(c.n) + " c=" + std::to_string(c.c) + " h=" +
         std::to_string(c.h) + " w=" + std::to_string(c.w) + " k=" + std::to_string(c.k) +
         " pads=(" + std::to_string(c.pads[0]) + "," + std::to_string(c.pads[1]) + "," +
         std::to_string(c.pads[2]) + "," + std::to_string(c.pads[3]) + ")";
}

void RunCase(const WinogradCase& c, const WinogradConfig* config) {
  const DataType f32 = DataType::Float(32);
  std::vector<int64_t> data_shape = {c.n, c.c / c.ic_bn, c.h, c.w, c.ic_bn};
  te::Tensor x = te::placeholder(test::Exprs(data_shape), f32, "x");
  te::Tensor w = te::placeholder(test::Exprs({c.k, c.c, 3, 3}), f32, "w");
  te::Tensor u = te::placeholder(test::Exprs({6, 6, c.k / 16, c.c, 16}), f32, "u");
  tir::HostArray in_x = RandomArray(f32, data_shape, 51);
  tir::HostArray in_w = RandomArray(f32, {c.k, c.c, 3, 3}, 52);
  te::Tensor y = conv2d_nchwc_winograd(x, u, Pads(c.pads), c.oc_bn);
  Conv2DWorkload workload{c.n, c.c, c.h, c.w, c.k, 3, 3, Pads(c.pads)};
  WinogradConfig chosen = config ? *config : DefaultWinogradConfig(workload);
  tir::HostArray got = test::RunScheduled(schedule_conv2d_nchwc_winograd(y, chosen), {x, u}, {y},
                                          {in_x, TransformWeight(w, in_w)})[0];
  ExpectWithinTolerance(got, DirectReference(in_x, in_w, c), Label(c) + " " + chosen.str());
}

TEST(TopiConv2DWinograd, MatchesTheDirectReference) {
  std::vector<WinogradCase> cases = {
      {1, 32, 10, 13, 64, {1, 1, 1, 1}, 16, 32},  // partial last tiles, two vectors per block
      {1, 8, 9, 11, 32, {0, 1, 2, 0}, 4, 32},     // asymmetric pads, 4-channel blocks
      {2, 3, 5, 6, 16, {0, 0, 0, 0}, 3, 16},      // batch 2, 3 channels, no padding
      {1, 20, 3, 3, 48, {0, 0, 0, 0}, 20, 16},    // one output position, 48 channels
      {1, 16, 1, 1, 16, {1, 1, 1, 1}, 8, 16},     // a 1x1 input padded to 3x3
  };
  for (const WinogradCase& c : cases) RunCase(c, nullptr);
}

TEST(TopiConv2DWinograd, ConfigsThatDoNotDivideTheTiles) {
  // 16 tiles in stages over the whole layer: a register tile of 5 leaves a partial last
  // tile, 16 divides.
  WinogradCase partial_tiles{1, 12, 14, 15, 32, {1, 2, 1, 0}, 4, 16};
  for (WinogradConfig config :
       {WinogradConfig{false, 5, 32, 3}, WinogradConfig{false, 16, 16, 2}}) {
    RunCase(partial_tiles, &config);
  }
  // Rows of 3 whole tiles, fused: a register tile of 2 leaves a partial one in each row,
  // one of 5 is larger than the row.
  WinogradCase whole_tiles{1, 12, 8, 12, 32, {1, 1, 1, 1}, 12, 32};
  for (WinogradConfig config : {WinogradConfig{true, 2, 32, 12}, WinogradConfig{true, 5, 16, 4}}) {
    RunCase(whole_tiles, &config);
  }
}

TEST(TopiConv2DWinograd, AppliesAnElementwiseEpilogue) {
  const DataType f32 = DataType::Float(32);
  WinogradCase c{1, 16, 8, 12, 32, {1, 1, 1, 1}, 16, 16};
  std::vector<int64_t> data_shape = {1, 1, 8, 12, 16};
  te::Tensor x = te::placeholder(test::Exprs(data_shape), f32, "x");
  te::Tensor w = te::placeholder(test::Exprs({32, 16, 3, 3}), f32, "w");
  te::Tensor u = te::placeholder(test::Exprs({6, 6, 2, 16, 16}), f32, "u");
  te::Tensor bias = te::placeholder(test::Exprs({1, 2, 1, 1, 16}), f32, "bias");
  te::Tensor y = relu(add(conv2d_nchwc_winograd(x, u, Pads(c.pads), 16), bias));
  tir::HostArray in_x = RandomArray(f32, data_shape, 53);
  tir::HostArray in_w = RandomArray(f32, {32, 16, 3, 3}, 54);
  tir::HostArray in_bias = RandomArray(f32, {1, 2, 1, 1, 16}, 55);
  tir::HostArray in_u = TransformWeight(w, in_w);
  Reference want = DirectReference(in_x, in_w, c);
  const int64_t positions = 8 * 12;
  for (size_t i = 0; i < want.value.size(); ++i) {
    // Output [1, 2, 8, 12, 16]: block i / (positions * 16), lane i % 16.
    int64_t channel = static_cast<int64_t>(i / (positions * 16) * 16 + i % 16);
    want.value[i] = std::max(0.0, want.value[i] + in_bias.GetFloat(channel));
    want.magnitude[i] += std::abs(in_bias.GetFloat(channel));
  }
  for (bool fuse : {true, false}) {
    WinogradConfig config{fuse, 6, 32, 4};
    tir::HostArray got = test::RunScheduled(schedule_conv2d_nchwc_winograd(y, config),
                                            {x, u, bias}, {y}, {in_x, in_u, in_bias})[0];
    ExpectWithinTolerance(got, want, "relu(winograd + bias) " + config.str());
  }
}

TEST(TopiConv2DWinograd, PrefersWinogradFor3x3Stride1WithEnoughTiles) {
  Conv2DWorkload resnet{1, 64, 56, 56, 64, 3, 3, Pads({1, 1, 1, 1})};
  EXPECT_TRUE(PreferWinograd(resnet));
  Conv2DWorkload strided = resnet;
  strided.attrs.strides = {2, 2};
  EXPECT_FALSE(PreferWinograd(strided));
  Conv2DWorkload pointwise = resnet;
  pointwise.r = pointwise.s = 1;
  EXPECT_FALSE(PreferWinograd(pointwise));
  Conv2DWorkload depthwise = resnet;
  depthwise.attrs.groups = 64;
  EXPECT_FALSE(PreferWinograd(depthwise));
  // 14x14 has 16 tiles; 7x7 only 4, too few to pay for the 4 times larger weight.
  EXPECT_TRUE(PreferWinograd({1, 256, 14, 14, 256, 3, 3, Pads({1, 1, 1, 1})}));
  EXPECT_FALSE(PreferWinograd({1, 512, 7, 7, 512, 3, 3, Pads({1, 1, 1, 1})}));
  EXPECT_TRUE(PreferWinograd({4, 512, 7, 7, 512, 3, 3, Pads({1, 1, 1, 1})}));
}

TEST(TopiConv2DWinograd, UserErrorsNameTheProblem) {
  const DataType f32 = DataType::Float(32);
  te::Tensor x = te::placeholder(test::Exprs({1, 2, 8, 8, 8}), f32, "x");
  te::Tensor u = te::placeholder(test::Exprs({6, 6, 2, 16, 16}), f32, "u");
  auto error = [](const std::function<void()>& f, const std::string& text) {
    std::string message = test::ErrorOf(f);
    EXPECT_NE(message.find(text), std::string::npos) << message;
  };
  Conv2DAttrs strided;
  strided.strides = {2, 2};
  error([&] { conv2d_nchwc_winograd(x, u, strided, 16); }, "needs stride 1, dilation 1");
  error([&] { conv2d_nchwc_winograd(x, u, {}, 24); }, "oc_bn=24 must be a multiple of 16");
  te::Tensor u_wrong = te::placeholder(test::Exprs({6, 6, 2, 8, 16}), f32, "u_wrong");
  error([&] { conv2d_nchwc_winograd(x, u_wrong, {}, 16); }, "expected [6, 6, K/16, 16, 16]");
  te::Tensor tiny = te::placeholder(test::Exprs({1, 2, 2, 8, 8}), f32, "tiny");
  error([&] { conv2d_nchwc_winograd(tiny, u, {}, 16); }, "does not fit the padded 2x8");
  te::Tensor w5 = te::placeholder(test::Exprs({16, 16, 5, 5}), f32, "w5");
  error([&] { winograd_weight_transform(w5); }, "needs a 3x3 kernel");
  te::Tensor y = conv2d_nchwc_winograd(x, u, Pads({1, 1, 1, 1}), 16);
  error([&] { schedule_conv2d_nchwc_winograd(y, WinogradConfig{true, 6, 48, 4}); },
        "does not fit 16 input and 32 output channels");
  error([&] { schedule_conv2d_nchwc_winograd(y, WinogradConfig{true, 6, 16, 3}); },
        "gemm_unroll a divisor of C");
  te::Tensor partial = conv2d_nchwc_winograd(x, u, {}, 16);
  error([&] { schedule_conv2d_nchwc_winograd(partial, WinogradConfig{true, 6, 16, 4}); },
        "fuse_tile_rows needs one image of whole 4x4 output tiles, got 1 of 6x6");
  te::Tensor two_images = te::placeholder(test::Exprs({2, 2, 8, 8, 8}), f32, "two_images");
  te::Tensor batched = conv2d_nchwc_winograd(two_images, u, Pads({1, 1, 1, 1}), 16);
  error([&] { schedule_conv2d_nchwc_winograd(batched, WinogradConfig{true, 6, 16, 4}); },
        "got 2 of 8x8");
  error([&] { schedule_conv2d_nchwc_winograd(x, WinogradConfig{}); },
        "is neither a conv2d_nchwc_winograd output nor an elementwise epilogue");
}

}  // namespace
}  // namespace loom::topi::x86
