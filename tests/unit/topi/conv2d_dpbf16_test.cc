// The x86 bfloat16 convolution on AVX-512 BF16 (bfloat16 data x bfloat16 weight -> float32,
// tensorized onto vdpbf16ps, 2 input channels per lane): compiled and run against a
// double-precision reference over the same bfloat16-rounded operands (each product is exact;
// only the float32 summation differs), for tilings that do and do not unroll the kernel
// columns, strides, asymmetric padding, dilation, 1x1, a 2-channel stem, blocks of 8 filters
// and a fused epilogue; and the computes' user errors. The compiled runs are skipped on hosts without
// avx512bf16 (the kernels are still lowered, which checks the schedule and the tensorize
// match).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "conv_kernel_check.h"
#include "loom/topi/elementwise.h"
#include "loom/topi/transform.h"
#include "loom/topi/x86/conv2d.h"
#include "loom/topi/x86/tensor_intrinsics.h"
#include "topi_test_util.h"

namespace loom::topi::x86 {
namespace {

using conv_check::Workload;
using test::Exprs;

const DataType kBf16 = DataType::BFloat16(), kF32 = DataType::Float(32);

bool HostHasAvx512Bf16() { return Target::Parse("llvm").HasFeature("avx512bf16"); }

// Packs (data to NCHW[ic_bn]c, the float32 KCRS weight rounded to bfloat16 and packed),
// convolves (doubled by an epilogue when `double_epilogue`) and unpacks, as the graph compiler
// does, and compares with the reference.
void ExpectDpbf16ConvMatches(const Conv2DWorkload& wl, const Conv2DNCHWcConfig& config,
                             bool double_epilogue = false) {
  SCOPED_TRACE(wl.str() + " " + config.str());
  te::Tensor data = te::placeholder(Exprs({wl.n, wl.c, wl.h, wl.w}), kBf16, "data");
  te::Tensor weight = te::placeholder(Exprs({wl.k, wl.c, wl.r, wl.s}), kF32, "weight");
  te::Tensor packed_data =
      layout_transform(data, "NCHW", "NCHW" + std::to_string(config.ic_bn) + "c");
  te::Tensor packed_weight = pack_conv2d_weight_dot(cast(weight, kBf16), config.ic_bn, config.oc_bn);
  te::Tensor conv_data = te::placeholder(packed_data.shape(), kBf16, "packed_data");
  te::Tensor conv_weight = te::placeholder(packed_weight.shape(), kBf16, "packed_weight");
  te::Tensor out = conv2d_nchwc_dpbf16(conv_data, conv_weight, wl.attrs);
  ASSERT_EQ(out.dtype(), kF32);
  if (double_epilogue) out = add(out, out);
  te::Tensor blocked = te::placeholder(out.shape(), kF32, "blocked");
  te::Tensor result =
      layout_transform(blocked, "NCHW" + std::to_string(config.oc_bn) + "c", "NCHW");
  IRModule module;
  module.Add("pack_data",
             te::lower(schedule_injective({packed_data}), {data, packed_data}, "pack_data"));
  module.Add("pack_weight", te::lower(schedule_injective({packed_weight}),
                                      {weight, packed_weight}, "pack_weight"));
  module.Add("conv", te::lower(schedule_conv2d_nchwc(out, config),
                               {conv_data, conv_weight, out}, "conv"));
  module.Add("unpack", te::lower(schedule_injective({result}), {blocked, result}, "unpack"));
  if (!HostHasAvx512Bf16()) return;
  conv_check::ExpectBf16ModuleMatches(module, wl, double_epilogue ? 2 : 1);
}

Conv2DNCHWcConfig Config(int64_t ic_bn, int64_t oc_bn, int64_t oc_tile, int64_t reg_h,
                         int64_t reg_w, bool unroll_kw) {
  return {ic_bn, oc_bn, oc_tile, reg_h, reg_w, unroll_kw};
}

TEST(TopiX86Conv2DDpbf16, MatchesTheReference) {
  ExpectDpbf16ConvMatches(Workload({1, 16, 9, 9}, {32, 3, 3}, 1, {1, 1, 1, 1}),
                          Config(16, 16, 2, 1, 9, false));
  // Asymmetric pads, the kernel columns unrolled, an epilogue on the register tile.
  ExpectDpbf16ConvMatches(Workload({1, 32, 10, 13}, {16, 3, 3}, 1, {0, 1, 2, 1}),
                          Config(16, 16, 1, 2, 13, true), true);
  // A stem: 2 channels (one pair) in one block, 7x7 stride 2.
  ExpectDpbf16ConvMatches(Workload({1, 2, 23, 21}, {16, 7, 7}, 2, {3, 3, 3, 3}),
                          Config(2, 16, 1, 1, 11, false));
  // 1x1 stride 2 with two images, two-vector output blocks; dilation 2.
  ExpectDpbf16ConvMatches(Workload({2, 64, 15, 15}, {32, 1, 1}, 2, {0, 0, 0, 0}),
                          Config(32, 32, 1, 8, 1, false));
  ExpectDpbf16ConvMatches(Workload({1, 6, 12, 12}, {16, 3, 3}, 1, {2, 2, 2, 2}, 1, 2),
                          Config(6, 16, 1, 3, 4, false));
  // 24 filters in three blocks of 8 (256-bit vdpbf16ps), 8 input channels a block.
  ExpectDpbf16ConvMatches(Workload({1, 24, 7, 7}, {24, 3, 3}, 1, {1, 1, 1, 1}),
                          Config(8, 8, 3, 1, 7, false), true);
  if (!HostHasAvx512Bf16()) {
    GTEST_SKIP() << "the host has no avx512bf16 (the kernels are only lowered)";
  }
}

TEST(TopiX86Conv2DDpbf16, BadOperandsAreUserErrors) {
  te::Tensor data = te::placeholder(Exprs({1, 1, 8, 8, 16}), kBf16, "data");
  te::Tensor weight = te::placeholder(Exprs({1, 1, 3, 3, 8, 16, 2}), kBf16, "weight");
  // float32 operands are the float kernel's.
  te::Tensor f32_data = te::placeholder(Exprs({1, 1, 8, 8, 16}), kF32, "f32_data");
  EXPECT_NE(test::ErrorOf([&] { conv2d_nchwc_dpbf16(f32_data, weight, {}); })
                .find("must be 5-d bfloat16"),
            std::string::npos);
  // A weight whose input groups do not make the data's block.
  te::Tensor short_weight = te::placeholder(Exprs({1, 1, 3, 3, 4, 16, 2}), kBf16, "short");
  EXPECT_NE(test::ErrorOf([&] { conv2d_nchwc_dpbf16(data, short_weight, {}); })
                .find("must be [K / oc_bn, 1, R, S, 8, oc_bn, 2]"),
            std::string::npos);
  // The packing takes whole pairs of input channels, and int8 or bfloat16 only.
  te::Tensor kcrs = te::placeholder(Exprs({16, 6, 3, 3}), kBf16, "kcrs");
  EXPECT_NE(test::ErrorOf([&] { pack_conv2d_weight_dot(kcrs, 3, 16); }).find("a multiple of 2"),
            std::string::npos);
  te::Tensor f32_kcrs = te::placeholder(Exprs({16, 6, 3, 3}), kF32, "f32_kcrs");
  EXPECT_NE(test::ErrorOf([&] { pack_conv2d_weight_dot(f32_kcrs, 6, 16); })
                .find("must be int8 or bfloat16"),
            std::string::npos);
  EXPECT_NE(test::ErrorOf([&] { DotProductDepth(kF32); }).find("no dot-product instruction"),
            std::string::npos);
}

}  // namespace
}  // namespace loom::topi::x86
