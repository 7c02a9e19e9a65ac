// The x86 int8 convolution (uint8 data x int8 weight -> int32, tensorized onto AVX-512 VNNI's
// vpdpbusd): compiled and run on the full range of both types against an exact integer
// reference, with the border padded by a zero point, for tilings that do and do not unroll
// the kernel columns, strides, 1x1 and a fused epilogue; the depthwise kernel (taps summed by
// vpdpbusd) likewise; and the computes' user errors. The
// compiled runs are skipped on hosts without avx512vnni.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "conv_kernel_check.h"
#include "loom/topi/elementwise.h"
#include "loom/topi/transform.h"
#include "loom/topi/x86/conv2d.h"
#include "topi_test_util.h"

namespace loom::topi::x86 {
namespace {

using conv_check::Workload;

const DataType kU8 = DataType::UInt(8), kI8 = DataType::Int(8), kI32 = DataType::Int(32);

bool HostHasVnni() { return Target::Parse("llvm").HasFeature("avx512vnni"); }

Array<PrimExpr> Extents(std::initializer_list<int64_t> shape) {
  Array<PrimExpr> out;
  for (int64_t d : shape) out.push_back(int(d));
  return out;
}

// The tensors of a packed int8 convolution: NCHW data and KCRS weight, their packed forms
// computed from them, the placeholders of those the convolution reads, and its output.
struct PackedConv {
  te::Tensor data, weight, packed_data, packed_weight, conv_data, conv_weight, out;
};

// The four functions (pack_data, pack_weight, conv, unpack) compiled and run against the
// integer reference, unless the host has no VNNI (then lowered only: the schedule and
// tensorize checked).
void ExpectPackedModuleMatches(const PackedConv& t, const Conv2DWorkload& wl,
                               const Conv2DNCHWcConfig& config, int64_t pad_value,
                               const std::function<int64_t(int64_t)>& epilogue) {
  te::Tensor blocked = te::placeholder(t.out.shape(), kI32, "blocked");
  te::Tensor result =
      layout_transform(blocked, "NCHW" + std::to_string(config.oc_bn) + "c", "NCHW");
  IRModule module;
  module.Add("pack_data", te::lower(schedule_injective({t.packed_data}),
                                    {t.data, t.packed_data}, "pack_data"));
  module.Add("pack_weight", te::lower(schedule_injective({t.packed_weight}),
                                      {t.weight, t.packed_weight}, "pack_weight"));
  module.Add("conv", te::lower(schedule_conv2d_nchwc(t.out, config),
                               {t.conv_data, t.conv_weight, t.out}, "conv"));
  module.Add("unpack", te::lower(schedule_injective({result}), {blocked, result}, "unpack"));
  if (!HostHasVnni()) return;
  conv_check::ExpectInt8ModuleMatches(module, wl, pad_value, epilogue);
}

// Packs, convolves (with `epilogue` applied to the int32 result, if given) and unpacks, as
// the graph compiler does, and compares with the reference exactly.
void ExpectInt8ConvMatches(const Conv2DWorkload& wl, const Conv2DNCHWcConfig& config,
                           int64_t pad_value, bool add_one_epilogue = false) {
  SCOPED_TRACE(wl.str() + " " + config.str() + " pad_value=" + std::to_string(pad_value));
  te::Tensor data = te::placeholder(Extents({wl.n, wl.c, wl.h, wl.w}), kU8, "data");
  te::Tensor weight = te::placeholder(Extents({wl.k, wl.c, wl.r, wl.s}), kI8, "weight");
  te::Tensor packed_data =
      layout_transform(data, "NCHW", "NCHW" + std::to_string(config.ic_bn) + "c");
  te::Tensor packed_weight = pack_conv2d_weight_dot(weight, config.ic_bn, config.oc_bn);
  te::Tensor conv_data = te::placeholder(packed_data.shape(), kU8, "packed_data");
  te::Tensor conv_weight = te::placeholder(packed_weight.shape(), kI8, "packed_weight");
  te::Tensor out = conv2d_nchwc_int8(conv_data, conv_weight, wl.attrs, pad_value);
  if (add_one_epilogue)
    out = add(out, te::compute(
                       {}, [](const Array<Var>&) { return make_const(kI32, int64_t{1}); }, "one"));
  ExpectPackedModuleMatches({data, weight, packed_data, packed_weight, conv_data, conv_weight, out},
                            wl, config, pad_value,
                            [&](int64_t sum) { return sum + (add_one_epilogue ? 1 : 0); });
}

Conv2DNCHWcConfig Config(int64_t ic_bn, int64_t oc_bn, int64_t oc_tile, int64_t reg_h,
                         int64_t reg_w, bool unroll_kw) {
  return {ic_bn, oc_bn, oc_tile, reg_h, reg_w, unroll_kw};
}

TEST(TopiX86Conv2DInt8, MatchesTheIntegerReferenceExactly) {
  if (!HostHasVnni()) GTEST_SKIP() << "the host has no avx512vnni (the kernels are only lowered)";
  ExpectInt8ConvMatches(Workload({1, 16, 9, 9}, {32, 3, 3}, 1, {1, 1, 1, 1}),
                        Config(16, 16, 2, 1, 9, false), 0);
  // A zero point as the border, asymmetric pads, the kernel columns unrolled.
  ExpectInt8ConvMatches(Workload({1, 32, 10, 13}, {16, 3, 3}, 1, {0, 1, 2, 1}),
                        Config(16, 16, 1, 2, 13, true), 131);
  // A stem: 4 channels in one block, 7x7 stride 2.
  ExpectInt8ConvMatches(Workload({1, 4, 23, 21}, {16, 7, 7}, 2, {3, 3, 3, 3}),
                        Config(4, 16, 1, 1, 11, false), 255);
  // 1x1 stride 2 with two images, two-vector channel blocks, dilation.
  ExpectInt8ConvMatches(Workload({2, 64, 15, 15}, {32, 1, 1}, 2, {0, 0, 0, 0}),
                        Config(32, 32, 1, 8, 1, false), 7);
  ExpectInt8ConvMatches(Workload({1, 8, 12, 12}, {16, 3, 3}, 1, {2, 2, 2, 2}, 1, 2),
                        Config(8, 16, 1, 3, 4, false), 1);
  // An epilogue inlined into the register tile.
  ExpectInt8ConvMatches(Workload({1, 16, 6, 6}, {16, 3, 3}, 1, {1, 1, 1, 1}),
                        Config(16, 16, 1, 6, 3, false), 9, true);
  // 24 filters in three blocks of 8 (256-bit vpdpbusd), 8 input channels a block.
  ExpectInt8ConvMatches(Workload({1, 24, 7, 7}, {24, 1, 1}, 1, {0, 0, 0, 0}),
                        Config(8, 8, 3, 1, 7, false), 5);
}

// The depthwise int8 kernel as the x86 layout rewrite builds it: the data blocked by
// `block`, each channel's kernel row padded with zero taps to a multiple of 4 and the right
// border by as many columns, the weight [C/block, R, S/4, block, 4].
void ExpectDepthwiseInt8Matches(Conv2DWorkload wl, int64_t block, int64_t reg_h, int64_t reg_w,
                                int64_t pad_value) {
  SCOPED_TRACE(wl.str() + " block=" + std::to_string(block) + " reg_h=" + std::to_string(reg_h) +
               " reg_w=" + std::to_string(reg_w) + " pad_value=" + std::to_string(pad_value));
  const int64_t taps = (wl.s + 3) / 4 * 4;
  te::Tensor data = te::placeholder(Extents({wl.n, wl.c, wl.h, wl.w}), kU8, "data");
  te::Tensor weight = te::placeholder(Extents({wl.c, 1, wl.r, wl.s}), kI8, "weight");
  te::Tensor packed_data = layout_transform(data, "NCHW", "NCHW" + std::to_string(block) + "c");
  te::Tensor packed_weight = te::compute(
      Extents({wl.c / block, wl.r, taps / 4, block, 4}),
      [&](const Array<Var>& i) {
        PrimExpr tap = i[2] * 4 + i[4];
        return te::if_then_else(tap < int(wl.s), weight(i[0] * int(block) + i[3], 0, i[1], tap),
                                make_const(kI8, int64_t{0}));
      },
      "packed_weight");
  te::Tensor conv_data = te::placeholder(packed_data.shape(), kU8, "packed_data");
  te::Tensor conv_weight = te::placeholder(packed_weight.shape(), kI8, "packed_weight");
  Conv2DAttrs attrs = wl.attrs;
  attrs.pads[3] += taps - wl.s;
  te::Tensor out = depthwise_conv2d_nchwc_int8(conv_data, conv_weight, attrs, pad_value);
  Conv2DNCHWcConfig config;
  config.ic_bn = config.oc_bn = block;
  config.reg_h = reg_h;
  config.reg_w = reg_w;
  ExpectPackedModuleMatches({data, weight, packed_data, packed_weight, conv_data, conv_weight, out},
                            wl, config, pad_value, [](int64_t sum) { return sum; });
}

TEST(TopiX86Conv2DInt8, DepthwiseMatchesTheIntegerReferenceExactly) {
  if (!HostHasVnni()) GTEST_SKIP() << "the host has no avx512vnni (the kernels are only lowered)";
  // 3x3 stride 1 and 2 (MobileNet's), on blocks of 16 and 32 (whose taps are 4 loads apart).
  ExpectDepthwiseInt8Matches(Workload({1, 32, 9, 10}, {32, 3, 3}, 1, {1, 1, 1, 1}, 32), 16, 3,
                             5, 0);
  ExpectDepthwiseInt8Matches(Workload({1, 64, 11, 11}, {64, 3, 3}, 2, {1, 1, 1, 1}, 64), 32, 2,
                             3, 131);
  // 5x5 (two groups of taps, the second padded), asymmetric pads, two images.
  ExpectDepthwiseInt8Matches(Workload({2, 16, 8, 7}, {16, 5, 5}, 1, {2, 1, 0, 2}, 16), 16, 1, 3,
                             255);
  // No border; 1x4 and 7x1 kernels; a row dilation.
  ExpectDepthwiseInt8Matches(Workload({1, 16, 6, 9}, {16, 1, 4}, 1, {0, 0, 0, 0}, 16), 16, 6, 3,
                             9);
  ExpectDepthwiseInt8Matches(Workload({1, 16, 12, 5}, {16, 7, 1}, 1, {3, 0, 3, 0}, 16), 16, 4, 5,
                             1);
  Conv2DWorkload dilated = Workload({1, 16, 10, 10}, {16, 3, 3}, 1, {2, 1, 2, 1}, 16);
  dilated.attrs.dilations = {2, 1};
  ExpectDepthwiseInt8Matches(dilated, 16, 2, 10, 77);
}

TEST(TopiX86Conv2DInt8, BadOperandsAreUserErrors) {
  te::Tensor data = te::placeholder(Extents({1, 1, 8, 8, 16}), kU8, "data");
  te::Tensor weight = te::placeholder(Extents({1, 1, 3, 3, 4, 16, 4}), kI8, "w");
  te::Tensor float_data = te::placeholder(Extents({1, 1, 8, 8, 16}), DataType::Float(32), "f");
  EXPECT_NE(test::ErrorOf([&] {
              conv2d_nchwc_int8(float_data, weight, {}, 0);
            }).find("must be 5-d uint8"),
            std::string::npos);
  // Output blocks of 8 (256-bit) or whole 512-bit vectors, nothing else.
  te::Tensor narrow = te::placeholder(Extents({1, 1, 3, 3, 4, 12, 4}), kI8, "narrow");
  EXPECT_NE(test::ErrorOf([&] { conv2d_nchwc_int8(data, narrow, {}, 0); })
                .find("oc_bn 8 or a multiple of 16"),
            std::string::npos);
  EXPECT_NE(test::ErrorOf([&] { conv2d_nchwc_int8(data, weight, {}, 256); }).find("is not a uint8"),
            std::string::npos);
  te::Tensor taps = te::placeholder(Extents({1, 3, 1, 16, 4}), kI8, "taps");
  Conv2DAttrs depthwise;
  depthwise.groups = 16;
  EXPECT_NE(test::ErrorOf([&] {
              depthwise_conv2d_nchwc_int8(float_data, taps, depthwise, 0);
            }).find("must be 5-d uint8"),
            std::string::npos);
  EXPECT_NE(test::ErrorOf([&] { depthwise_conv2d_nchwc_int8(data, taps, {}, 0); })
                .find("groups must equal the 16 channels"),
            std::string::npos);
  depthwise.dilations = {1, 2};
  EXPECT_NE(test::ErrorOf([&] { depthwise_conv2d_nchwc_int8(data, taps, depthwise, 0); })
                .find("column dilation be 1"),
            std::string::npos);
  te::Tensor three_taps = te::placeholder(Extents({1, 3, 1, 16, 3}), kI8, "three_taps");
  EXPECT_NE(test::ErrorOf([&] { depthwise_conv2d_nchwc_int8(data, three_taps, {}, 0); })
                .find("must be [1, R, S/4, 16, 4]"),
            std::string::npos);
  te::Tensor kcrs = te::placeholder(Extents({16, 6, 3, 3}), kI8, "kcrs");
  EXPECT_NE(test::ErrorOf([&] { pack_conv2d_weight_dot(kcrs, 6, 16); }).find("a multiple of 4"),
            std::string::npos);
}

}  // namespace
}  // namespace loom::topi::x86
