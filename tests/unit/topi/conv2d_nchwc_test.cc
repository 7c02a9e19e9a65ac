// The x86 conv2d kernels (direct and depthwise NCHW[x]c, their default and other tilings,
// fused epilogues) compiled and run through MakeConv2DKernel's four functions, against the
// direct NCHW reference; and the user errors of the computes, the schedule and the strategy.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "conv_kernel_check.h"
#include "loom/tir/analysis.h"
#include "loom/topi/elementwise.h"
#include "loom/topi/x86/conv2d.h"
#include "loom/topi/x86/conv2d_winograd.h"
#include "topi_test_util.h"

namespace loom::topi::x86 {
namespace {

using conv_check::ExpectKernelMatchesReference;
using target_test::RandomArray;
using conv_check::Workload;

TEST(TopiX86Conv2D, DefaultKernelsMatchTheReference) {
  std::vector<Conv2DWorkload> cases = {
      Workload({1, 16, 9, 9}, {32, 3, 3}, 1, {1, 1, 1, 1}),
      Workload({1, 3, 23, 21}, {16, 7, 7}, 2, {3, 3, 3, 3}),        // a stem: ic_bn = 3
      Workload({1, 32, 14, 14}, {48, 1, 1}, 1, {0, 0, 0, 0}),       // 1x1
      Workload({1, 32, 15, 15}, {16, 1, 1}, 2, {0, 0, 0, 0}),       // 1x1 stride 2
      Workload({2, 16, 10, 13}, {16, 3, 3}, 1, {0, 1, 2, 1}),       // batch 2, asymmetric
      Workload({1, 16, 12, 12}, {16, 3, 3}, 1, {2, 2, 2, 2}, 1, 2), // dilation 2
      Workload({1, 24, 8, 8}, {24, 1, 1}, 1, {0, 0, 0, 0}),         // blocks of 12 and 12
      Workload({1, 32, 17, 17}, {32, 3, 3}, 1, {1, 1, 1, 1}, 32),   // depthwise
      Workload({1, 48, 16, 16}, {48, 3, 3}, 2, {1, 1, 1, 1}, 48),   // depthwise stride 2
      Workload({1, 24, 9, 9}, {24, 3, 3}, 1, {1, 1, 1, 1}, 24),     // depthwise blocks of 12
      Workload({1, 64, 10, 10}, {64, 3, 3}, 1, {1, 1, 1, 1}, 2),    // 2 groups of 32
      Workload({1, 32, 9, 9}, {64, 3, 3}, 2, {1, 1, 1, 1}, 4),      // groups: 8 in, 16 out
      Workload({1, 32, 8, 8}, {32, 1, 1}, 1, {0, 0, 0, 0}, 8),      // groups of 4, 1x1
      Workload({1, 64, 5, 5}, {64, 3, 3}, 1, {1, 1, 1, 1}, 16),     // groups of 4, 3x3
      Workload({1, 16, 16, 18}, {32, 3, 3}, 1, {1, 1, 1, 1}),       // Winograd
  };
  std::vector<std::string> algorithms;
  for (const Conv2DWorkload& wl : cases) {
    Conv2DKernel kernel = MakeConv2DKernel(wl);
    algorithms.push_back(kernel.algorithm);
    if (kernel.algorithm == "winograd") {
      EXPECT_EQ(kernel.winograd.str(), DefaultWinogradConfig(wl).str());
    }
    ExpectKernelMatchesReference(wl, kernel);
  }
  EXPECT_EQ(algorithms[0], "direct");
  EXPECT_EQ(algorithms[7], "depthwise");
  EXPECT_EQ(algorithms.back(), "winograd");
}

TEST(TopiX86Conv2D, EveryTilingComputesTheSame) {
  Conv2DWorkload wl = Workload({1, 32, 8, 12}, {64, 3, 3}, 1, {1, 1, 1, 1});
  // {ic_bn, oc_bn, oc_tile, reg_h, reg_w, unroll_kw}: tiles of one position up to the
  // whole output, two-vector channel blocks, the kernel columns rolled.
  std::vector<Conv2DNCHWcConfig> configs = {
      {16, 16, 1, 1, 1, true}, {8, 16, 2, 2, 3, false}, {16, 32, 2, 8, 1, true},
      {32, 16, 4, 1, 12, true}, {16, 64, 1, 2, 6, false},
  };
  for (const Conv2DNCHWcConfig& config : configs)
    ExpectKernelMatchesReference(wl, MakeConv2DKernel(wl, config));
}

// Depthwise tasks are blocks of rows whose bounds LoopPartition peels: blocks that hold
// the top or bottom padding, a block that is all border (5 rows, pads of 2), column tiles
// that straddle both borders, strides and dilation, two images.
TEST(TopiX86Conv2D, DepthwiseRowBlocksComputeTheSame) {
  struct Case {
    Conv2DWorkload workload;
    Conv2DNCHWcConfig config;
  };
  auto config = [](int64_t bn, int64_t reg_h, int64_t reg_w, int64_t row_tiles) {
    Conv2DNCHWcConfig c{bn, bn, 1, reg_h, reg_w, false};
    c.row_tiles_per_task = row_tiles;
    return c;
  };
  std::vector<Case> cases = {
      {Workload({1, 32, 20, 17}, {32, 3, 3}, 1, {1, 2, 2, 1}, 32), config(16, 1, 6, 7)},
      {Workload({1, 32, 20, 17}, {32, 3, 3}, 1, {1, 2, 2, 1}, 32), config(16, 3, 18, 1)},
      {Workload({2, 24, 21, 21}, {24, 3, 3}, 2, {1, 1, 1, 1}, 24), config(12, 1, 11, 11)},
      {Workload({1, 16, 5, 9}, {16, 5, 5}, 1, {2, 2, 2, 2}, 16), config(16, 1, 3, 5)},
      {Workload({1, 16, 14, 14}, {16, 3, 3}, 1, {2, 2, 2, 2}, 16, 2), config(8, 2, 7, 7)},
  };
  for (const Case& c : cases) {
    ExpectKernelMatchesReference(c.workload, MakeConv2DKernel(c.workload, c.config));
  }
}

TEST(TopiX86Conv2D, EpilogueRunsOnTheRegisterTile) {
  // relu(conv + bias + residual) as one kernel, the epilogue inlined into the tile's store.
  const DataType f32 = DataType::Float(32);
  te::Tensor data = te::placeholder(test::Exprs({1, 2, 6, 7, 16}), f32, "data");
  te::Tensor weight = te::placeholder(test::Exprs({2, 2, 3, 3, 16, 16}), f32, "weight");
  te::Tensor bias = te::placeholder(test::Exprs({2, 1, 1, 16}), f32, "bias");
  te::Tensor residual = te::placeholder(test::Exprs({1, 2, 6, 7, 16}), f32, "residual");
  Conv2DAttrs attrs;
  attrs.pads = {1, 1, 1, 1};
  te::Tensor conv = conv2d_nchwc(data, weight, attrs);
  te::Tensor out = relu(add(add(conv, bias), residual));
  Conv2DNCHWcConfig config;
  config.oc_tile = 2;
  config.reg_h = 2;
  config.reg_w = 7;
  te::Schedule s = schedule_conv2d_nchwc(out, config);
  std::vector<tir::HostArray> in = {RandomArray(f32, {1, 2, 6, 7, 16}, 1),
                                    RandomArray(f32, {2, 2, 3, 3, 16, 16}, 2),
                                    RandomArray(f32, {2, 1, 1, 16}, 3),
                                    RandomArray(f32, {1, 2, 6, 7, 16}, 4)};
  tir::HostArray got = test::RunScheduled(s, {data, weight, bias, residual}, {out}, in)[0];
  auto at = [](int64_t c, int64_t h, int64_t w, int64_t b, int64_t height, int64_t width) {
    return ((c * height + h) * width + w) * 16 + b;
  };
  test::ExpectClose(got, [&](int64_t i) {
    int64_t b = i % 16, q = i / 16 % 7, p = i / 112 % 6, k = i / 672;
    double total = in[2].GetFloat(k * 16 + b) + in[3].GetFloat(i);
    for (int64_t c = 0; c < 32; ++c)
      for (int64_t r = 0; r < 3; ++r)
        for (int64_t t = 0; t < 3; ++t) {
          int64_t h = p + r - 1, w = q + t - 1;
          if (h < 0 || h >= 6 || w < 0 || w >= 7) continue;
          total += in[0].GetFloat(at(c / 16, h, w, c % 16, 6, 7)) *
                   in[1].GetFloat((((k * 2 + c / 16) * 3 + r) * 3 + t) * 256 + c % 16 * 16 + b);
        }
    return std::max(total, 0.0);
  }, 1e-4, "conv + bias + residual, relu");
}

TEST(TopiX86Conv2D, DepthwiseEpilogueRunsOnTheRegisterTile) {
  const DataType f32 = DataType::Float(32);
  te::Tensor data = te::placeholder(test::Exprs({1, 2, 5, 9, 16}), f32, "data");
  te::Tensor weight = te::placeholder(test::Exprs({2, 1, 3, 3, 1, 16}), f32, "weight");
  te::Tensor bias = te::placeholder(test::Exprs({2, 1, 1, 16}), f32, "bias");
  Conv2DAttrs attrs;
  attrs.pads = {1, 0, 1, 2};
  attrs.strides = {1, 2};
  attrs.groups = 32;
  te::Tensor out = relu(add(depthwise_conv2d_nchwc(data, weight, attrs), bias));
  Conv2DNCHWcConfig config;
  config.reg_w = 5;
  std::vector<tir::HostArray> in = {RandomArray(f32, {1, 2, 5, 9, 16}, 5),
                                    RandomArray(f32, {2, 1, 3, 3, 1, 16}, 6),
                                    RandomArray(f32, {2, 1, 1, 16}, 7)};
  tir::HostArray got =
      test::RunScheduled(schedule_conv2d_nchwc(out, config), {data, weight, bias}, {out}, in)[0];
  ASSERT_EQ(got.shape(), (std::vector<int64_t>{1, 2, 5, 5, 16}));
  test::ExpectClose(got, [&](int64_t i) {
    int64_t b = i % 16, q = i / 16 % 5, p = i / 80 % 5, c = i / 400;
    double total = in[2].GetFloat(c * 16 + b);
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t t = 0; t < 3; ++t) {
        int64_t h = p + r - 1, w = q * 2 + t;
        if (h < 0 || h >= 5 || w >= 9) continue;
        total += in[0].GetFloat(((c * 5 + h) * 9 + w) * 16 + b) *
                 in[1].GetFloat(((c * 3 + r) * 3 + t) * 16 + b);
      }
    return std::max(total, 0.0);
  }, 1e-5, "depthwise + bias, relu");
}

// Enough accumulators to hide the FMA latency, and no more than the 32 zmm registers hold
// beside a weight vector per channel block and the broadcast value (beyond, LLVM spills).
TEST(TopiX86Conv2D, DefaultTileFitsTheRegisters) {
  for (int64_t size : {7, 14, 28, 56, 112})
    for (int64_t k : {16, 96, 512}) {
      Conv2DWorkload wl = Workload({1, 64, size, size}, {k, 3, 3}, 1, {1, 1, 1, 1});
      Conv2DNCHWcConfig config = DefaultConv2DNCHWcConfig(wl);
      int64_t accumulators = config.oc_tile * config.reg_h * config.reg_w;
      EXPECT_GE(accumulators, 7) << wl.str() << ": " << config.str();
      EXPECT_LE(accumulators + config.oc_tile + 1, 31) << wl.str() << ": " << config.str();
    }
}

// A grouped conv's default tile is one channel block (a tile across blocks of different
// groups would broadcast each input value per block) by a row of up to 14 columns, the
// kernel's columns unrolled, and it computes the same.
TEST(TopiX86Conv2D, GroupedDefaultTileIsOneChannelBlock) {
  for (int64_t size : {7, 14, 28, 56})
    for (int64_t groups : {13, 32}) {
      Conv2DWorkload wl =
          Workload({1, 8 * groups, size, size}, {8 * groups, 3, 3}, 1, {1, 1, 1, 1}, groups);
      Conv2DNCHWcConfig config = DefaultConv2DNCHWcConfig(wl);
      EXPECT_EQ(config.oc_bn, 8) << wl.str();
      EXPECT_EQ(config.oc_tile, 1) << wl.str() << ": " << config.str();
      EXPECT_EQ(config.reg_w, size == 7 ? 7 : 14) << wl.str() << ": " << config.str();
      EXPECT_TRUE(config.unroll_kw) << wl.str();
    }
  Conv2DWorkload small = Workload({1, 32, 10, 10}, {32, 3, 3}, 1, {1, 1, 1, 1}, 8);
  ExpectKernelMatchesReference(small, MakeConv2DKernel(small, DefaultConv2DNCHWcConfig(small)));
}

// A depthwise conv taking a wider block (its data's) keeps its column tile within the
// registers: 112 columns by 16 are 16 accumulators of one vector; by 32, two vectors each, so
// 14 columns; by 128, eight, so 2. And it computes the same.
TEST(TopiX86Conv2D, DepthwiseOnAWiderBlockKeepsItsTileInTheRegisters) {
  Conv2DWorkload wide = Workload({1, 128, 112, 112}, {128, 3, 3}, 1, {1, 1, 1, 1}, 128);
  Conv2DNCHWcConfig config = DefaultConv2DNCHWcConfig(wide);
  EXPECT_EQ(config.ic_bn, 16);
  EXPECT_EQ(config.reg_w, 16);
  EXPECT_EQ(DepthwiseConfigWithBlock(wide, config, 32).reg_w, 14);
  EXPECT_EQ(DepthwiseConfigWithBlock(wide, config, 128).reg_w, 2);
  EXPECT_EQ(DepthwiseConfigWithBlock(wide, config, 32).oc_bn, 32);
  EXPECT_NE(test::ErrorOf([&] { DepthwiseConfigWithBlock(wide, config, 96); })
                .find("split into blocks of 96"),
            std::string::npos);
  Conv2DWorkload small = Workload({1, 64, 9, 30}, {64, 3, 3}, 1, {1, 1, 1, 1}, 64);
  Conv2DNCHWcConfig blocked = DepthwiseConfigWithBlock(small, DefaultConv2DNCHWcConfig(small), 32);
  EXPECT_EQ(blocked.reg_w, 10);  // 30's largest divisor within 14
  ExpectKernelMatchesReference(small, MakeConv2DKernel(small, blocked));
}

TEST(TopiX86Conv2D, UserErrorsNameTheProblem) {
  const DataType f32 = DataType::Float(32);
  te::Tensor data = te::placeholder(test::Exprs({1, 2, 8, 8, 16}), f32, "data");
  te::Tensor weight = te::placeholder(test::Exprs({2, 3, 3, 3, 16, 16}), f32, "weight");
  EXPECT_NE(test::ErrorOf([&] { conv2d_nchwc(data, weight); })
                .find("must have the data's input channel blocks per group: 2 blocks of 16 in "
                      "1 group(s)"),
            std::string::npos);
  te::Tensor good = te::placeholder(test::Exprs({2, 2, 3, 3, 16, 16}), f32, "weight");
  Conv2DAttrs negative;
  negative.pads = {1, -1, 1, 1};
  EXPECT_NE(test::ErrorOf([&] { conv2d_nchwc(data, good, negative); }).find("must not be negative"),
            std::string::npos);
  Conv2DNCHWcConfig bad;
  bad.reg_w = 5;
  EXPECT_NE(test::ErrorOf([&] { schedule_conv2d_nchwc(conv2d_nchwc(data, good), bad); })
                .find("does not tile the output (1, 2, 6, 6, 16)"),
            std::string::npos);
  Conv2DNCHWcConfig uneven_blocks;
  uneven_blocks.row_tiles_per_task = 4;
  te::Tensor depthwise_weight = te::placeholder(test::Exprs({2, 1, 3, 3, 1, 16}), f32, "dw");
  Conv2DAttrs depthwise;
  depthwise.groups = 32;
  EXPECT_NE(test::ErrorOf([&] {
              schedule_conv2d_nchwc(depthwise_conv2d_nchwc(data, depthwise_weight, depthwise),
                                    uneven_blocks);
            }).find("row_tiles_per_task=4 does not tile the output (1, 2, 6, 6, 16)"),
            std::string::npos);
  uneven_blocks.row_tiles_per_task = 2;
  EXPECT_NE(test::ErrorOf([&] { schedule_conv2d_nchwc(conv2d_nchwc(data, good), uneven_blocks); })
                .find("(and be 1 but for depthwise)"),
            std::string::npos);
  EXPECT_NE(test::ErrorOf([&] { schedule_conv2d_nchwc(exp(data), bad); })
                .find("is neither a conv2d_nchwc / depthwise_conv2d_nchwc output nor an "
                      "elementwise epilogue of one (none of the elementwise stages"),
            std::string::npos);
  // A reduction reading the convolution, of the convolution's shape (a sum over two
  // neighbouring lanes), is no epilogue that can run on the register tile.
  te::Tensor conv = conv2d_nchwc(data, good);
  IterVar pair = te::reduce_axis(Range(0, 2), "pair");
  te::Tensor neighbours = te::compute(
      conv.shape(),
      [&](const Array<Var>& i) {
        return te::sum(conv(i[0], i[1], i[2], i[3], floormod(i[4] + pair->var, 16)), {pair});
      },
      "neighbours");
  EXPECT_NE(test::ErrorOf([&] { schedule_conv2d_nchwc(neighbours, Conv2DNCHWcConfig{}); })
                .find("schedule_conv2d_nchwc: 'neighbours' is neither a conv2d_nchwc / "
                      "depthwise_conv2d_nchwc output nor an elementwise epilogue of one (its "
                      "stage 'neighbours' is not elementwise)"),
            std::string::npos);
  Conv2DWorkload grouped = Workload({1, 32, 8, 8}, {32, 3, 3}, 1, {1, 1, 1, 1}, 2);
  Conv2DNCHWcConfig across_groups{32, 16, 1, 1, 1, true};  // an input block spans both groups
  EXPECT_NE(test::ErrorOf([&] { MakeConv2DKernel(grouped, across_groups); })
                .find("ic_bn must divide 16 and oc_bn 16 (the channels of one group)"),
            std::string::npos);
  EXPECT_NE(test::ErrorOf([&] { MakeConv2DKernel(Workload({1, 30, 8, 8}, {32, 3, 3}, 1,
                                                          {1, 1, 1, 1}, 4)); })
                .find("groups must divide the input and output channels"),
            std::string::npos);
  for (auto [stride, dilation, pad] : std::vector<std::array<int64_t, 3>>{{0, 1, 1}, {1, 0, 1}}) {
    Conv2DWorkload zero = Workload({1, 16, 8, 8}, {16, 3, 3}, stride, {pad, pad, pad, pad}, 1,
                                   dilation);
    EXPECT_NE(test::ErrorOf([&] { MakeConv2DKernel(zero); })
                  .find(": strides and dilations must be positive, got strides (" +
                        std::to_string(stride) + ", " + std::to_string(stride) + ")"),
              std::string::npos);
  }
  EXPECT_NE(test::ErrorOf([&] {
              MakeConv2DKernel(Workload({1, 16, 8, 8}, {16, 3, 3}, 1, {1, -1, 1, 1}));
            }).find("pads must not be negative, got (1, -1, 1, 1)"),
            std::string::npos);
  EXPECT_NE(test::ErrorOf([&] { MakeConv2DKernel(Workload({1, 16, 2, 8}, {16, 3, 3}, 1, {0, 0, 0, 0})); })
                .find("ChooseConv2DKernel(n=1 c=16 h=2 w=8 k=16 r=3 s=3 stride=1 pad=0 groups=1): "
                      "the 3x3 kernel (dilations 1, 1) does not fit the padded 2x8 input"),
            std::string::npos);
  Conv2DNCHWcConfig uneven;
  uneven.ic_bn = 3;
  EXPECT_NE(test::ErrorOf([&] {
              MakeConv2DKernel(Workload({1, 16, 8, 8}, {16, 3, 3}, 1, {1, 1, 1, 1}), uneven);
            }).find("ic_bn must divide 16"),
            std::string::npos);
}

}  // namespace
}  // namespace loom::topi::x86
