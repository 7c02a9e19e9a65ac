// The AMX kernels. bfloat16 conv2d and dense: compiled and run against a double-precision
// reference over the same bfloat16-rounded operands (the tiles multiply bfloat16 exactly and
// sum in float32, so only the summation order differs), for row tilings of one and two
// tiles, full and partial tile rows, padding, strides, dilation, 1x1, a fused epilogue, and a
// stem with its kernel columns unfolded into channels. int8 conv2d and dense (tdpbusd):
// bit-exact against the integer reference over the full range of uint8 data and int8
// weights, with a zero point as the border. And the computes' user errors. The compiled runs
// are skipped on hosts without amx-bf16 / amx-int8 (the kernels are still lowered, which
// checks the schedules and the tensorize matches).
#include "loom/topi/x86/amx.h"
#include "loom/topi/x86/tensor_intrinsics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "conv_kernel_check.h"
#include "loom/topi/elementwise.h"
#include "loom/topi/transform.h"
#include "topi_test_util.h"

namespace loom::topi::x86 {
namespace {

using conv_check::Workload;
using target_test::CallWithArrays;
using test::Exprs;

const DataType kBf16 = DataType::BFloat16(), kF32 = DataType::Float(32);

bool HostHasAmxBf16() { return Target::Parse("llvm").HasFeature("amx-bf16"); }

// A float32 sum of `terms` products may differ from the exact one by about terms * 2^-24 of
// the sum of magnitudes; 1e-5 relative to a magnitude of a few units is ample.
constexpr double kTolerance = 1e-4;

void ExpectDenseMatches(int64_t M, int64_t N, int64_t K, bool relu_epilogue) {
  SCOPED_TRACE("M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K));
  te::Tensor weight = te::placeholder(Exprs({N, K}), kF32, "weight");
  te::Tensor packed = pack_weight_bf16(weight);
  te::Tensor data = te::placeholder(Exprs({M, K}), kBf16, "data");
  te::Tensor packed_in = te::placeholder(packed.shape(), kBf16, "packed");
  te::Tensor out = dense_bf16(data, packed_in);
  if (relu_epilogue) out = relu(out);
  IRModule module;
  module.Add("pack", te::lower(schedule_injective({packed}), {weight, packed}, "pack"));
  module.Add("dense", te::lower(schedule_dense_amx(out), {data, packed_in, out}, "dense"));
  if (!HostHasAmxBf16()) return;
  runtime::Module compiled = build(module, Target::Parse("llvm"));
  tir::HostArray w = test::BFloat16ValuedArray(kF32, {N, K}, 1);
  tir::HostArray x = test::BFloat16ValuedArray(kBf16, {M, K}, 2);
  tir::HostArray pw(kBf16, tir::ConstParamShape(module.Lookup("pack"), 1));
  tir::HostArray y(kF32, {M, N});
  CallWithArrays(compiled, "pack", {w, pw});
  CallWithArrays(compiled, "dense", {x, pw, y});
  test::ExpectClose(
      y,
      [&](int64_t i) {
        const int64_t m = i / N, n = i % N;
        double sum = 0;
        for (int64_t k = 0; k < K; ++k) sum += x.GetFloat(m * K + k) * w.GetFloat(n * K + k);
        return relu_epilogue ? std::max(sum, 0.0) : sum;
      },
      kTolerance, "dense");
}

TEST(TopiX86AmxBf16, DenseMatchesTheReference) {
  ExpectDenseMatches(128, 64, 96, false);  // two tiles of 16 rows
  ExpectDenseMatches(1, 96, 64, true);     // one row: a 1-row tile
  ExpectDenseMatches(42, 32, 32, false);   // 2 x 7 rows per block, three blocks
  if (!HostHasAmxBf16()) GTEST_SKIP() << "the host has no amx-bf16 (the kernels are only lowered)";
}

// A bfloat16 conv's module (pack_data, pack_weight, conv, unpack), run where the host has
// AMX (conv_check::ExpectBf16ModuleMatches), else lowered only (schedules and tensorize
// checked).
void ExpectConvModuleMatches(const IRModule& module, const Conv2DWorkload& wl, double scale) {
  if (HostHasAmxBf16()) conv_check::ExpectBf16ModuleMatches(module, wl, scale);
}

// The four functions of an AMX convolution for RunPackedConv: data of `data_type` to
// NCHW32c, the weight of `weight_type` packed by `pack`, the convolution `conv` (its result
// doubled with `add_epilogue`), and the result back to NCHW.
IRModule AmxConvModule(const Conv2DWorkload& wl, DataType data_type, DataType weight_type,
                       const std::function<te::Tensor(const te::Tensor&)>& pack,
                       const std::function<te::Tensor(const te::Tensor&, const te::Tensor&)>& conv,
                       bool add_epilogue) {
  te::Tensor weight = te::placeholder(Exprs({wl.k, wl.c, wl.r, wl.s}), weight_type, "weight");
  te::Tensor packed_weight = pack(weight);
  te::Tensor data = te::placeholder(Exprs({wl.n, wl.c, wl.h, wl.w}), data_type, "data");
  te::Tensor packed_data = layout_transform(data, "NCHW", "NCHW32c");
  te::Tensor conv_data = te::placeholder(packed_data.shape(), data_type, "blocked_data");
  te::Tensor conv_weight =
      te::placeholder(packed_weight.shape(), packed_weight.dtype(), "packed_weight");
  te::Tensor out = conv(conv_data, conv_weight);
  if (add_epilogue) out = add(out, out);
  te::Tensor blocked = te::placeholder(out.shape(), out.dtype(), "blocked");
  te::Tensor result = layout_transform(blocked, "NCHW32c", "NCHW");
  IRModule module;
  module.Add("pack_data",
             te::lower(schedule_injective({packed_data}), {data, packed_data}, "pack_data"));
  module.Add("pack_weight", te::lower(schedule_injective({packed_weight}), {weight, packed_weight},
                                      "pack_weight"));
  module.Add("conv", te::lower(schedule_conv2d_nchwc_amx(out, wl.attrs),
                               {conv_data, conv_weight, out}, "conv"));
  module.Add("unpack", te::lower(schedule_injective({result}), {blocked, result}, "unpack"));
  return module;
}

void ExpectConvMatches(const Conv2DWorkload& wl, bool add_epilogue) {
  SCOPED_TRACE(wl.str());
  IRModule module = AmxConvModule(
      wl, kBf16, kF32, pack_weight_bf16,
      [&](const te::Tensor& x, const te::Tensor& w) { return conv2d_nchwc_bf16(x, w, wl.attrs); },
      add_epilogue);
  ExpectConvModuleMatches(module, wl, add_epilogue ? 2 : 1);
}

TEST(TopiX86AmxBf16, Conv2DMatchesTheReference) {
  // 3x3 pad 1 with two 14-row tiles per block (28 columns), two channel blocks each way.
  ExpectConvMatches(Workload({1, 64, 6, 28}, {64, 3, 3}, 1, {1, 1, 1, 1}), false);
  // 1x1 stride 2 (unpadded data read in place), two images, 7 columns: one 7-row tile.
  ExpectConvMatches(Workload({2, 32, 13, 13}, {32, 1, 1}, 2, {0, 0, 0, 0}), true);
  // Asymmetric pads, stride 2, dilation 2.
  ExpectConvMatches(Workload({1, 32, 11, 12}, {64, 3, 3}, 2, {2, 1, 2, 2}, 1, 2), false);
  if (!HostHasAmxBf16()) GTEST_SKIP() << "the host has no amx-bf16 (the kernels are only lowered)";
}

// A stem (few channels): the kernel columns unfolded into channels, the weight laid out
// [K, S * C, R, 1] (zero past C * S), the convolution R x 1 with column stride 1.
void ExpectUnfoldedConvMatches(const Conv2DWorkload& wl) {
  SCOPED_TRACE(wl.str());
  te::Tensor data = te::placeholder(Exprs({wl.n, wl.c, wl.h, wl.w}), kBf16, "data");
  te::Tensor weight = te::placeholder(Exprs({wl.k, wl.c, wl.r, wl.s}), kF32, "weight");
  te::Tensor unfolded = unfold_columns_nchwc(data, wl.attrs, wl.s);
  const int channels = int(wl.c), depth = int(wl.c * wl.s);
  te::Tensor laid_out = te::compute(
      Exprs({wl.k, int64_t{kAmxDepth}, wl.r, 1}),
      [&](const Array<Var>& i) {
        return te::if_then_else(
            i[1] < depth, weight(i[0], floormod(i[1], channels), i[2], floordiv(i[1], channels)),
            make_zero(kF32));
      },
      "laid_out");
  te::Tensor packed = pack_weight_bf16(laid_out);
  te::Tensor conv_data = te::placeholder(unfolded.shape(), kBf16, "unfolded_data");
  te::Tensor conv_weight = te::placeholder(packed.shape(), kBf16, "packed_weight");
  Conv2DAttrs conv_attrs;
  conv_attrs.strides = {wl.attrs.strides[0], 1};
  conv_attrs.dilations = {wl.attrs.dilations[0], 1};
  te::Tensor out = conv2d_nchwc_bf16(conv_data, conv_weight, conv_attrs);
  te::Tensor blocked = te::placeholder(out.shape(), kF32, "blocked");
  te::Tensor result = layout_transform(blocked, "NCHW32c", "NCHW");
  IRModule module;
  module.Add("pack_data",
             te::lower(schedule_unfold_columns(unfolded), {data, unfolded}, "pack_data"));
  module.Add("pack_weight",
             te::lower(schedule_injective({packed}), {weight, packed}, "pack_weight"));
  module.Add("conv", te::lower(schedule_conv2d_nchwc_amx(out, conv_attrs),
                               {conv_data, conv_weight, out}, "conv"));
  module.Add("unpack", te::lower(schedule_injective({result}), {blocked, result}, "unpack"));
  ExpectConvModuleMatches(module, wl, 1);
}

TEST(TopiX86AmxBf16, AStemWithItsColumnsUnfoldedMatchesTheReference) {
  // ResNet's stem, smaller: 3 channels, 7x7 stride 2 pad 3 (21 of 32 lanes).
  ExpectUnfoldedConvMatches(Workload({1, 3, 30, 30}, {64, 7, 7}, 2, {3, 3, 3, 3}));
  // 4 channels x 5 columns, stride 1, asymmetric pads, row dilation 2, two images.
  Conv2DWorkload wl = Workload({2, 4, 11, 9}, {32, 3, 5}, 1, {2, 1, 0, 3});
  wl.attrs.dilations = {2, 1};
  ExpectUnfoldedConvMatches(wl);
  if (!HostHasAmxBf16()) GTEST_SKIP() << "the host has no amx-bf16 (the kernels are only lowered)";
}

TEST(TopiX86AmxBf16, BadOperandsAreUserErrors) {
  te::Tensor data = te::placeholder(Exprs({1, 1, 8, 8, 32}), kBf16, "data");
  te::Tensor weight = te::placeholder(Exprs({1, 1, 3, 3, 16, 32, 2}), kBf16, "w");
  te::Tensor float_data = te::placeholder(Exprs({1, 1, 8, 8, 32}), kF32, "f");
  EXPECT_NE(test::ErrorOf([&] {
              conv2d_nchwc_bf16(float_data, weight, {});
            }).find("'f' must be bfloat16"),
            std::string::npos);
  te::Tensor other = te::placeholder(Exprs({1, 2, 3, 3, 16, 32, 2}), kBf16, "other");
  EXPECT_NE(test::ErrorOf([&] { conv2d_nchwc_bf16(data, other, {}); }).find("with the data's C/32"),
            std::string::npos);
  te::Tensor kcrs = te::placeholder(Exprs({48, 32, 3, 3}), kF32, "kcrs");
  EXPECT_NE(test::ErrorOf([&] { pack_weight_bf16(kcrs); })
                .find("its first dimension a multiple of 32 and its second of 32"),
            std::string::npos);
  te::Tensor wide = te::placeholder(Exprs({1, 5, 8, 8}), kBf16, "wide");
  EXPECT_NE(test::ErrorOf([&] { unfold_columns_nchwc(wide, {}, 7); }).find("at most 32"),
            std::string::npos);
  Conv2DAttrs dilated;
  dilated.dilations = {1, 2};
  EXPECT_NE(
      test::ErrorOf([&] { unfold_columns_nchwc(wide, dilated, 3); }).find("the column dilation 1"),
      std::string::npos);
  te::Tensor narrow = te::placeholder(Exprs({4, 24}), kBf16, "narrow");
  te::Tensor packed = te::placeholder(Exprs({1, 1, 16, 32, 2}), kBf16, "packed");
  EXPECT_NE(test::ErrorOf([&] { dense_bf16(narrow, packed); }).find("must be [..., M, K]"),
            std::string::npos);
}

bool HostHasAmxInt8() { return Target::Parse("llvm").HasFeature("amx-int8"); }

void ExpectInt8ConvMatches(const Conv2DWorkload& wl, int64_t pad_value, bool add_epilogue) {
  SCOPED_TRACE(wl.str() + " pad_value=" + std::to_string(pad_value));
  IRModule module = AmxConvModule(
      wl, DataType::UInt(8), DataType::Int(8), pack_weight_amx_int8,
      [&](const te::Tensor& x, const te::Tensor& w) {
        return conv2d_nchwc_amx_int8(x, w, wl.attrs, pad_value);
      },
      add_epilogue);
  if (!HostHasAmxInt8()) return;  // lowered (schedules and tensorize checked), not run
  conv_check::ExpectInt8ModuleMatches(module, wl, pad_value,
                                      [&](int64_t sum) { return add_epilogue ? 2 * sum : sum; });
}

TEST(TopiX86AmxInt8, Conv2DMatchesTheIntegerReferenceExactly) {
  // 3x3 pad 1 with a zero point as the border, two 14-row tiles per block, two channel blocks
  // each way.
  ExpectInt8ConvMatches(Workload({1, 64, 6, 28}, {64, 3, 3}, 1, {1, 1, 1, 1}), 131, false);
  // 1x1 stride 2, two images, 7 columns (one 7-row tile), an epilogue.
  ExpectInt8ConvMatches(Workload({2, 32, 13, 13}, {32, 1, 1}, 2, {0, 0, 0, 0}), 0, true);
  // Asymmetric pads, stride 2, dilation 2, the largest border value.
  ExpectInt8ConvMatches(Workload({1, 32, 11, 12}, {64, 3, 3}, 2, {2, 1, 2, 2}, 1, 2), 255, false);
  if (!HostHasAmxInt8()) GTEST_SKIP() << "the host has no amx-int8 (the kernels are only lowered)";
}

// uint8 data [..., M, K] (`data_shape`) times an int8 weight [N, K] over their full ranges
// (both ends included), against the integer sum: the products of 0..255 by -128..127 summed
// in int32 exactly.
void ExpectInt8DenseMatches(const std::vector<int64_t>& data_shape, int64_t N, bool add_epilogue) {
  SCOPED_TRACE("data " + ::testing::PrintToString(data_shape) + " N=" + std::to_string(N));
  const int64_t K = data_shape.back();
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < data_shape.size(); ++d) rows *= data_shape[d];
  std::vector<int64_t> out_shape = data_shape;
  out_shape.back() = N;
  te::Tensor weight = te::placeholder(Exprs({N, K}), DataType::Int(8), "weight");
  te::Tensor packed = pack_weight_amx_int8(weight);
  te::Tensor data = te::placeholder(Exprs(data_shape), DataType::UInt(8), "data");
  te::Tensor packed_in = te::placeholder(packed.shape(), DataType::Int(8), "packed");
  te::Tensor out = dense_amx_int8(data, packed_in);
  if (add_epilogue) out = add(out, out);
  IRModule module;
  module.Add("pack", te::lower(schedule_injective({packed}), {weight, packed}, "pack"));
  module.Add("dense", te::lower(schedule_dense_amx(out), {data, packed_in, out}, "dense"));
  if (!HostHasAmxInt8()) return;  // lowered (schedules and tensorize checked), not run
  runtime::Module compiled = build(module, Target::Parse("llvm"));
  tir::HostArray w(DataType::Int(8), {N, K}), x(DataType::UInt(8), data_shape);
  std::mt19937 rng(7);
  for (int64_t i = 0; i < w.NumElements(); ++i) w.SetInt(i, int64_t(rng() % 256) - 128);
  for (int64_t i = 0; i < x.NumElements(); ++i) x.SetInt(i, int64_t(rng() % 256));
  w.SetInt(0, -128), w.SetInt(1, 127), x.SetInt(0, 255), x.SetInt(1, 255);
  tir::HostArray pw(DataType::Int(8), tir::ConstParamShape(module.Lookup("pack"), 1));
  tir::HostArray y(DataType::Int(32), out_shape);
  CallWithArrays(compiled, "pack", {w, pw});
  CallWithArrays(compiled, "dense", {x, pw, y});
  for (int64_t m = 0; m < rows; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      int64_t sum = 0;
      for (int64_t k = 0; k < K; ++k) sum += x.GetInt(m * K + k) * w.GetInt(n * K + k);
      ASSERT_EQ(y.GetInt(m * N + n), add_epilogue ? 2 * sum : sum) << "at " << m << ", " << n;
    }
  }
}

TEST(TopiX86AmxInt8, DenseMatchesTheIntegerReferenceExactly) {
  ExpectInt8DenseMatches({128, 192}, 64, false);   // two tiles of 16 rows, three steps of K
  ExpectInt8DenseMatches({1, 64}, 96, true);       // one row: a 1-row tile; an epilogue
  ExpectInt8DenseMatches({42, 2048}, 32, false);   // 2 x 7 rows per block; a long sum
  ExpectInt8DenseMatches({3, 2, 7, 64}, 64, true);  // leading dimensions: tasks of their own
  if (!HostHasAmxInt8()) GTEST_SKIP() << "the host has no amx-int8 (the kernels are only lowered)";
}

TEST(TopiX86AmxInt8, BadOperandsAreUserErrors) {
  te::Tensor data = te::placeholder(Exprs({1, 1, 8, 8, 32}), DataType::UInt(8), "data");
  te::Tensor bf16_weight = te::placeholder(Exprs({1, 1, 3, 3, 16, 32, 2}), kBf16, "w");
  EXPECT_NE(test::ErrorOf([&] {
              conv2d_nchwc_amx_int8(data, bf16_weight, {}, 0);
            }).find("'w' must be int8"),
            std::string::npos);
  te::Tensor float_kcrs = te::placeholder(Exprs({32, 32, 3, 3}), kF32, "kcrs");
  EXPECT_NE(test::ErrorOf([&] { pack_weight_amx_int8(float_kcrs); })
                .find("must be int8 KCRS or [N, K]"),
            std::string::npos);
  te::Tensor int8_rows = te::placeholder(Exprs({4, 32}), DataType::Int(8), "rows");
  te::Tensor packed = te::placeholder(Exprs({1, 1, 8, 32, 4}), DataType::Int(8), "packed");
  EXPECT_NE(test::ErrorOf([&] { dense_amx_int8(int8_rows, packed); })
                .find("data 'rows' must be uint8, got int8"),
            std::string::npos);
}

TEST(TopiX86AmxBf16, RowTilingTakesTheLargestBlockThatDivides) {
  auto tiling = [](int64_t extent) {
    AmxRowTiling t = ChooseAmxRowTiling(extent);
    return std::to_string(t.row_tiles) + "x" + std::to_string(t.rows);
  };
  EXPECT_EQ(tiling(128), "2x16");
  EXPECT_EQ(tiling(56), "2x14");
  EXPECT_EQ(tiling(7), "1x7");
  EXPECT_EQ(tiling(1), "1x1");
  EXPECT_EQ(tiling(17), "1x1");  // prime: one row per tile
}

}  // namespace
}  // namespace loom::topi::x86
