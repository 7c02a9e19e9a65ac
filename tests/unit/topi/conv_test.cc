// conv2d_nchw, conv2d_transpose_nchw, conv2d_nhwc (alone and under a bias + ReLU epilogue)
// and conv1d_ncw compiled with their schedules against direct references written here:
// strides, dilations, asymmetric pads, groups (depthwise included), 1x1 kernels, widths and
// channel counts that are no multiple of 16, batch 2; and the user errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "conv_reference.h"
#include "loom/topi/elementwise.h"
#include "loom/topi/nn.h"
#include "loom/topi/reduction.h"
#include "topi_test_util.h"

namespace loom::topi {
namespace {

using target_test::RandomArray;

struct ConvCase {
  std::vector<int64_t> data;    // N, C, H, W
  std::vector<int64_t> weight;  // K, C / groups, R, S
  Conv2DAttrs attrs;
};

Conv2DAttrs Attrs(std::array<int64_t, 2> strides, std::array<int64_t, 2> dilations,
                  std::array<int64_t, 4> pads, int64_t groups) {
  Conv2DAttrs a;
  a.strides = strides;
  a.dilations = dilations;
  a.pads = pads;
  a.groups = groups;
  return a;
}

TEST(TopiConv2D, MatchesTheDirectReference) {
  std::vector<ConvCase> cases = {
      {{1, 3, 11, 19}, {5, 3, 3, 3}, Attrs({1, 1}, {1, 1}, {1, 1, 1, 1}, 1)},
      {{2, 4, 12, 33}, {6, 4, 3, 3}, Attrs({2, 2}, {1, 1}, {1, 1, 1, 1}, 1)},
      {{1, 2, 13, 17}, {3, 2, 3, 3}, Attrs({1, 1}, {2, 2}, {2, 2, 2, 2}, 1)},
      {{1, 3, 9, 20}, {4, 3, 2, 3}, Attrs({1, 2}, {1, 1}, {0, 1, 1, 2}, 1)},
      {{1, 4, 10, 18}, {6, 2, 3, 3}, Attrs({1, 1}, {1, 1}, {1, 1, 1, 1}, 2)},
      {{1, 8, 14, 14}, {8, 1, 3, 3}, Attrs({1, 1}, {1, 1}, {1, 1, 1, 1}, 8)},  // depthwise
      {{1, 16, 7, 7}, {24, 16, 1, 1}, Attrs({1, 1}, {1, 1}, {0, 0, 0, 0}, 1)},  // 1x1
  };
  for (const ConvCase& c : cases) {
    te::Tensor x = te::placeholder(test::Exprs(c.data), DataType::Float(32), "x");
    te::Tensor w = te::placeholder(test::Exprs(c.weight), DataType::Float(32), "w");
    te::Tensor y = conv2d_nchw(x, w, c.attrs);
    int64_t P = 0, Q = 0;
    ASSERT_TRUE(IsConstInt(y.shape()[2], &P) && IsConstInt(y.shape()[3], &Q));
    tir::HostArray in_x = RandomArray(DataType::Float(32), c.data, 41);
    tir::HostArray in_w = RandomArray(DataType::Float(32), c.weight, 42);
    std::vector<double> want = test::ReferenceConv2D(in_x, in_w, c.attrs, P, Q);
    tir::HostArray got = test::RunScheduled(schedule_conv2d_nchw(y), {x, w}, {y}, {in_x, in_w})[0];
    ASSERT_EQ(got.NumElements(), static_cast<int64_t>(want.size()));
    std::string label = "conv2d C=" + std::to_string(c.data[1]) + " K=" + std::to_string(c.weight[0]) +
                        " groups=" + std::to_string(c.attrs.groups);
    // float32 sums of up to 144 products below 16 in magnitude.
    test::ExpectClose(got, [&](int64_t i) { return want[i]; }, 3e-4, label);
  }
}

// relu(conv + bias[k]) as one schedule: the epilogue runs on each tile of accumulators.
TEST(TopiConv2D, EpilogueRunsOnTheConvolutionsTiles) {
  te::Tensor x = te::placeholder({1, 3, 10, 21}, DataType::Float(32), "x");
  te::Tensor w = te::placeholder({5, 3, 3, 3}, DataType::Float(32), "w");
  te::Tensor b = te::placeholder({5, 1, 1}, DataType::Float(32), "b");
  Conv2DAttrs attrs = Attrs({1, 1}, {1, 1}, {1, 1, 1, 1}, 1);
  te::Tensor y = relu(add(conv2d_nchw(x, w, attrs), b));
  tir::HostArray in_x = RandomArray(DataType::Float(32), {1, 3, 10, 21}, 51);
  tir::HostArray in_w = RandomArray(DataType::Float(32), {5, 3, 3, 3}, 52);
  tir::HostArray in_b = RandomArray(DataType::Float(32), {5, 1, 1}, 53);
  std::vector<double> conv = test::ReferenceConv2D(in_x, in_w, attrs, 10, 21);
  tir::HostArray got =
      test::RunScheduled(schedule_conv2d_nchw(y), {x, w, b}, {y}, {in_x, in_w, in_b})[0];
  test::ExpectClose(
      got,
      [&](int64_t i) { return std::max(0.0, conv[i] + in_b.GetFloat(i / (10 * 21))); }, 3e-4,
      "relu(conv2d + bias)");
}

// The reference scatters each input element through the kernel (the definition of a
// transposed convolution), independent of the gather form the operator computes.
TEST(TopiConv2D, TransposeMatchesTheScatterReference) {
  struct Case {
    std::vector<int64_t> data, weight;  // [N, C, H, W], [C, K / groups, R, S]
    std::array<int64_t, 2> strides, dilations;
    std::array<int64_t, 4> pads;
    int64_t groups;
    std::array<int64_t, 2> output_padding;
  };
  std::vector<Case> cases = {
      {{1, 3, 5, 7}, {3, 4, 3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 1, {1, 1}},
      {{2, 2, 6, 5}, {2, 3, 2, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, {0, 0}},
      {{1, 4, 4, 6}, {4, 1, 3, 2}, {2, 1}, {2, 1}, {1, 0, 0, 1}, 2, {1, 0}},
  };
  for (const Case& c : cases) {
    const Conv2DAttrs a = Attrs(c.strides, c.dilations, c.pads, c.groups);
    te::Tensor x = te::placeholder(test::Exprs(c.data), DataType::Float(32), "x");
    te::Tensor w = te::placeholder(test::Exprs(c.weight), DataType::Float(32), "w");
    te::Tensor y = conv2d_transpose_nchw(x, w, a, c.output_padding);
    int64_t K = 0, P = 0, Q = 0;
    ASSERT_TRUE(IsConstInt(y.shape()[1], &K) && IsConstInt(y.shape()[2], &P) &&
                IsConstInt(y.shape()[3], &Q));
    const int64_t N = c.data[0], C = c.data[1], H = c.data[2], W = c.data[3];
    const int64_t KG = c.weight[1], R = c.weight[2], S = c.weight[3], CG = C / c.groups;
    EXPECT_EQ(P, (H - 1) * c.strides[0] - c.pads[0] - c.pads[2] + c.dilations[0] * (R - 1) +
                     c.output_padding[0] + 1);
    tir::HostArray in_x = RandomArray(DataType::Float(32), c.data, 43);
    tir::HostArray in_w = RandomArray(DataType::Float(32), c.weight, 44);
    std::vector<double> want(N * K * P * Q, 0.0);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t ch = 0; ch < C; ++ch)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t wc = 0; wc < W; ++wc)
            for (int64_t kk = 0; kk < KG; ++kk)
              for (int64_t r = 0; r < R; ++r)
                for (int64_t s = 0; s < S; ++s) {
                  int64_t p = h * c.strides[0] - c.pads[0] + r * c.dilations[0];
                  int64_t q = wc * c.strides[1] - c.pads[1] + s * c.dilations[1];
                  if (p < 0 || p >= P || q < 0 || q >= Q) continue;
                  int64_t k = ch / CG * KG + kk;
                  want[((n * K + k) * P + p) * Q + q] +=
                      in_x.GetFloat(((n * C + ch) * H + h) * W + wc) *
                      in_w.GetFloat(((ch * KG + kk) * R + r) * S + s);
                }
    tir::HostArray got = test::RunScheduled(schedule_conv2d_nchw(y), {x, w}, {y}, {in_x, in_w})[0];
    ASSERT_EQ(got.NumElements(), static_cast<int64_t>(want.size()));
    test::ExpectClose(got, [&](int64_t i) { return want[i]; }, 3e-4,
                      "conv2d_transpose groups=" + std::to_string(c.groups));
  }
  te::Tensor x = te::placeholder({1, 3, 5, 5}, DataType::Float(32), "x");
  te::Tensor w = te::placeholder({3, 2, 3, 3}, DataType::Float(32), "w");
  EXPECT_NE(test::ErrorOf([&] { conv2d_transpose_nchw(x, w, {}, {1, 0}); })
                .find("output_padding below the stride or the dilation"),
            std::string::npos);
}

TEST(TopiConv1D, MatchesTheDirectReference) {
  struct Case {
    std::vector<int64_t> data, weight;  // [N, C, W], [K, C / groups, S]
    Conv1DAttrs attrs;
  };
  auto attrs = [](int64_t stride, int64_t dilation, std::array<int64_t, 2> pads, int64_t groups) {
    Conv1DAttrs a;
    a.stride = stride;
    a.dilation = dilation;
    a.pads = pads;
    a.groups = groups;
    return a;
  };
  std::vector<Case> cases = {{{2, 3, 37}, {5, 3, 3}, attrs(1, 1, {1, 1}, 1)},
                             {{1, 4, 50}, {6, 2, 5}, attrs(2, 2, {3, 0}, 2)},
                             {{1, 6, 20}, {6, 1, 3}, attrs(1, 1, {1, 1}, 6)}};
  for (const Case& c : cases) {
    te::Tensor x = te::placeholder(test::Exprs(c.data), DataType::Float(32), "x");
    te::Tensor w = te::placeholder(test::Exprs(c.weight), DataType::Float(32), "w");
    te::Tensor y = conv1d_ncw(x, w, c.attrs);
    int64_t Q = 0;
    ASSERT_TRUE(IsConstInt(y.shape()[2], &Q));
    const int64_t N = c.data[0], C = c.data[1], W = c.data[2];
    const int64_t K = c.weight[0], CG = c.weight[1], S = c.weight[2];
    tir::HostArray in_x = RandomArray(DataType::Float(32), c.data, 45);
    tir::HostArray in_w = RandomArray(DataType::Float(32), c.weight, 46);
    std::vector<double> want;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < K; ++k)
        for (int64_t q = 0; q < Q; ++q) {
          double total = 0;
          for (int64_t rc = 0; rc < CG; ++rc)
            for (int64_t s = 0; s < S; ++s) {
              int64_t pos = q * c.attrs.stride + s * c.attrs.dilation - c.attrs.pads[0];
              if (pos < 0 || pos >= W) continue;
              int64_t channel = k / (K / c.attrs.groups) * CG + rc;
              total += in_x.GetFloat((n * C + channel) * W + pos) * in_w.GetFloat((k * CG + rc) * S + s);
            }
          want.push_back(total);
        }
    tir::HostArray got = test::RunScheduled(schedule_conv1d_ncw(y), {x, w}, {y}, {in_x, in_w})[0];
    ASSERT_EQ(got.NumElements(), static_cast<int64_t>(want.size()));
    test::ExpectClose(got, [&](int64_t i) { return want[i]; }, 3e-4,
                      "conv1d groups=" + std::to_string(c.attrs.groups));
  }
  te::Tensor x = te::placeholder({1, 4, 8}, DataType::Float(32), "x");
  te::Tensor w = te::placeholder({2, 3, 3}, DataType::Float(32), "w");
  EXPECT_NE(test::ErrorOf([&] { conv1d_ncw(x, w); }).find("has 3 input channels per group"),
            std::string::npos);
}

// NHWC data and HWIO weights against a reference indexing them directly; the cases marked
// also through a bias + ReLU epilogue, which the schedule inlines into the output loop.
TEST(TopiConv2D, NhwcMatchesTheDirectReference) {
  struct Case {
    std::vector<int64_t> data, weight;  // [N, H, W, C], [R, S, C / groups, K]
    std::array<int64_t, 2> strides, dilations;
    std::array<int64_t, 4> pads;
    int64_t groups;
    bool epilogue = false;
  };
  std::vector<Case> cases = {
      {{1, 11, 19, 3}, {3, 3, 3, 5}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1},
      {{2, 12, 13, 4}, {3, 3, 4, 20}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 1},
      {{1, 13, 17, 4}, {3, 3, 2, 6}, {1, 1}, {2, 2}, {2, 2, 2, 2}, 2},  // dilated, 2 groups
      {{1, 9, 10, 3}, {2, 3, 3, 17}, {1, 2}, {1, 1}, {0, 1, 1, 2}, 1, true},  // asymmetric pads
      {{1, 7, 14, 24}, {3, 3, 1, 24}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 24},  // depthwise
      {{1, 7, 5, 16}, {1, 1, 16, 33}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1},  // 1x1, no padding
      {{1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1},
  };
  for (const Case& c : cases) {
    const Conv2DAttrs a = Attrs(c.strides, c.dilations, c.pads, c.groups);
    const int64_t N = c.data[0], H = c.data[1], W = c.data[2], C = c.data[3];
    const int64_t R = c.weight[0], S = c.weight[1], CG = c.weight[2], K = c.weight[3];
    te::Tensor x = te::placeholder(test::Exprs(c.data), DataType::Float(32), "x");
    te::Tensor w = te::placeholder(test::Exprs(c.weight), DataType::Float(32), "w");
    te::Tensor bias = te::placeholder({int(K)}, DataType::Float(32), "bias");
    te::Tensor y = conv2d_nhwc(x, w, a);
    te::Tensor fused = relu(add(y, bias));
    int64_t P = 0, Q = 0;
    ASSERT_TRUE(IsConstInt(y.shape()[1], &P) && IsConstInt(y.shape()[2], &Q));
    EXPECT_EQ(P, (H + c.pads[0] + c.pads[2] - c.dilations[0] * (R - 1) - 1) / c.strides[0] + 1);
    tir::HostArray in_x = RandomArray(DataType::Float(32), c.data, 47);
    tir::HostArray in_w = RandomArray(DataType::Float(32), c.weight, 48);
    tir::HostArray in_b = RandomArray(DataType::Float(32), {K}, 49);
    // The NCHW reference on the same values, read back in NHWC order.
    tir::HostArray x_nchw(DataType::Float(32), {N, C, H, W});
    tir::HostArray w_kcrs(DataType::Float(32), {K, CG, R, S});
    for (int64_t i = 0; i < in_x.NumElements(); ++i) {  // NHWC
      int64_t channel = i % C, wc = i / C % W, h = i / (C * W) % H, n = i / (C * W * H);
      x_nchw.SetFloat(((n * C + channel) * H + h) * W + wc, in_x.GetFloat(i));
    }
    for (int64_t i = 0; i < in_w.NumElements(); ++i) {  // HWIO
      int64_t k = i % K, rc = i / K % CG, s = i / (K * CG) % S, r = i / (K * CG * S);
      w_kcrs.SetFloat(((k * CG + rc) * R + r) * S + s, in_w.GetFloat(i));
    }
    std::vector<double> nchw = test::ReferenceConv2D(x_nchw, w_kcrs, a, P, Q);
    std::vector<double> want;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t p = 0; p < P; ++p)
        for (int64_t q = 0; q < Q; ++q)
          for (int64_t k = 0; k < K; ++k) want.push_back(nchw[((n * K + k) * P + p) * Q + q]);
    std::string label = "conv2d_nhwc C=" + std::to_string(C) + " K=" + std::to_string(K) +
                        " groups=" + std::to_string(c.groups);
    tir::HostArray got = test::RunScheduled(schedule_conv2d_nhwc(y), {x, w}, {y}, {in_x, in_w})[0];
    ASSERT_EQ(got.NumElements(), static_cast<int64_t>(want.size()));
    test::ExpectClose(got, [&](int64_t i) { return want[i]; }, 3e-4, label);
    if (!c.epilogue) continue;
    tir::HostArray got_fused = test::RunScheduled(schedule_conv2d_nhwc(fused), {x, w, bias}, {fused},
                                                  {in_x, in_w, in_b})[0];
    test::ExpectClose(
        got_fused, [&](int64_t i) { return std::max(0.0, want[i] + in_b.GetFloat(i % K)); }, 3e-4,
        label + " + bias + relu");
  }
}

using ConvFunction =
    std::function<te::Tensor(const te::Tensor&, const te::Tensor&, const Conv2DAttrs&)>;

// The checks conv2d_nchw and conv2d_nhwc (channels_last) share, on data 'x' of 4 channels
// and 8x8 positions, with 6 filters.
void ExpectSharedConv2DChecks(const std::string& op, const ConvFunction& conv,
                              bool channels_last) {
  const DataType f32 = DataType::Float(32);
  te::Tensor x = te::placeholder(channels_last ? Array<PrimExpr>{1, 8, 8, 4}
                                               : Array<PrimExpr>{1, 4, 8, 8}, f32, "x");
  auto weight = [&](int channels, int size, const std::string& name) {
    return te::placeholder(channels_last ? Array<PrimExpr>{size, size, channels, 6}
                                         : Array<PrimExpr>{6, channels, size, size},
                           f32, name);
  };
  te::Tensor w = weight(3, 3, "w"), w2 = weight(2, 3, "w2"), w4 = weight(4, 3, "w4");
  te::Tensor big = weight(4, 11, "big");
  Conv2DAttrs groups3;
  groups3.groups = 3;
  Conv2DAttrs negative;
  negative.pads = {0, 0, -1, 0};
  Conv2DAttrs zero_stride;
  zero_stride.strides = {0, 1};
  Conv2DAttrs zero_dilation;
  zero_dilation.dilations = {1, 0};
  auto error = [&](const te::Tensor& weight, const Conv2DAttrs& a) {
    return test::ErrorOf([&] { conv(x, weight, a); });
  };
  EXPECT_NE(error(w, {}).find(op + ": weight 'w' has 3 input channels per group, but data 'x' has "
                              "4 channels in 1 groups"),
            std::string::npos);
  EXPECT_NE(error(w2, groups3).find("must both divide into 3 groups"), std::string::npos);
  EXPECT_NE(error(w4, negative).find("pads must not be negative, got (0, 0, -1, 0)"),
            std::string::npos);
  EXPECT_NE(error(w4, zero_stride).find("strides and dilations must be positive"),
            std::string::npos);
  EXPECT_NE(error(w4, zero_dilation).find("strides and dilations must be positive"),
            std::string::npos);
  EXPECT_NE(error(big, {}).find("does not fit the padded 8x8 input"), std::string::npos);
}

TEST(TopiConv2D, NhwcBadShapesAndAttributesAreUserErrors) {
  te::Tensor x = te::placeholder({1, 8, 8, 4}, DataType::Float(32), "x");
  ExpectSharedConv2DChecks("conv2d_nhwc", conv2d_nhwc, /*channels_last=*/true);
  EXPECT_NE(test::ErrorOf([&] { conv2d_nhwc(x, te::placeholder({3, 3, 4}, DataType::Float(32), "w3")); })
                .find("must be 4-d (NHWC and HWIO), got 4-d and 3-d"),
            std::string::npos);
  EXPECT_NE(test::ErrorOf([&] { schedule_conv2d_nhwc(x); }).find("'x' is neither the output of conv2d_nhwc nor an elementwise epilogue of one"),
            std::string::npos);
  te::Tensor y = conv2d_nhwc(x, te::placeholder({3, 3, 4, 6}, DataType::Float(32), "w4"));
  EXPECT_NE(test::ErrorOf([&] { schedule_conv2d_nhwc(sum(y, {3})); }).find("neither the output of conv2d_nhwc"),
            std::string::npos);
}

TEST(TopiConv2D, BadShapesAndAttributesAreUserErrors) {
  te::Tensor x = te::placeholder({1, 4, 8, 8}, DataType::Float(32), "x");
  ExpectSharedConv2DChecks(
      "conv2d_nchw",
      [](const te::Tensor& data, const te::Tensor& weight, const Conv2DAttrs& attrs) {
        return conv2d_nchw(data, weight, attrs);
      },
      /*channels_last=*/false);
  EXPECT_NE(test::ErrorOf([&] { schedule_conv2d_nchw(x); })
                .find("schedule_conv2d_nchw: 'x' is neither the output of conv2d_nchw or "
                      "conv2d_transpose_nchw nor an elementwise epilogue of one"),
            std::string::npos);
}

}  // namespace
}  // namespace loom::topi
