// The blocked-layout operators (layout.cc): layout_transform against the layouts' index
// maps, and each blocked convolution compiled alone (its compute and schedule, with a fused
// epilogue too) against nn.conv2d (topi::conv2d_nchw) on random data; the users' errors.
#include <gtest/gtest.h>

#include "graph_test_util.h"
#include "loom/topi/elementwise.h"
#include "loom/topi/x86/conv2d.h"
#include "loom/topi/x86/conv2d_winograd.h"

namespace loom::graph {
namespace {

using test::ErrorOf;
using test::ExpectClose;
using test::GetFloat;
using test::RandomArray;
using test::RunCall;

const DataType kF32 = DataType::Float(32);

Call Transform(const Expr& x, const std::string& src, const std::string& dst) {
  return MakeCall("layout_transform", {x}, {{"src_layout", src}, {"dst_layout", dst}}, "lt");
}

// Row-major offset of `index` in `shape`.
int64_t Offset(const std::vector<int64_t>& shape, const std::vector<int64_t>& index) {
  int64_t offset = 0;
  for (size_t d = 0; d < shape.size(); ++d) offset = offset * shape[d] + index[d];
  return offset;
}

// The elements of NCHW `x` as [N, C / b, H, W, b].
std::vector<double> Blocked(const runtime::NDArray& x, int64_t b) {
  const std::vector<int64_t> s = x.Shape();
  std::vector<double> out;
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t co = 0; co < s[1] / b; ++co)
      for (int64_t h = 0; h < s[2]; ++h)
        for (int64_t w = 0; w < s[3]; ++w)
          for (int64_t ci = 0; ci < b; ++ci)
            out.push_back(GetFloat(x, Offset(s, {n, co * b + ci, h, w})));
  return out;
}

TEST(GraphLayoutOps, DataTransformsFollowTheBlockedIndexMap) {
  runtime::NDArray x = RandomArray({2, 32, 3, 5}, kF32, 1);
  Var xv = MakeVar("x", TensorType({2, 32, 3, 5}, kF32));
  Call to8 = Transform(xv, "NCHW", "NCHW8c");
  EXPECT_EQ(to8.type().str(), "Tensor[(2, 4, 3, 5, 8), float32]");
  runtime::NDArray x8 = RunCall(to8, {x});
  ExpectClose(x8, Blocked(x, 8), 0, "NCHW8c");
  // Block to block in one transform, and back to NCHW.
  Call to16 = Transform(to8, "NCHW8c", "NCHW16c");
  EXPECT_EQ(to16.type().str(), "Tensor[(2, 2, 3, 5, 16), float32]");
  runtime::NDArray x16 = RunCall(to16, {x8});
  ExpectClose(x16, Blocked(x, 16), 0, "NCHW16c");
  ExpectClose(RunCall(Transform(to16, "NCHW16c", "NCHW"), {x16}), test::Values(x), 0, "NCHW");
}

TEST(GraphLayoutOps, PerChannelOperandsBecomeBlocked) {
  // A bias [C] or [C, 1, 1] as [1, C / b, 1, 1, b], what a blocked add broadcasts.
  runtime::NDArray bias = RandomArray({32}, kF32, 2);
  Call c = Transform(MakeVar("b", TensorType({32}, kF32)), "C", "NCHW16c");
  EXPECT_EQ(c.type().str(), "Tensor[(1, 2, 1, 1, 16), float32]");
  ExpectClose(RunCall(c, {bias}), test::Values(bias), 0, "C");
  runtime::NDArray bias_chw = RandomArray({32, 1, 1}, kF32, 3);
  Call chw = Transform(MakeVar("b", TensorType({32, 1, 1}, kF32)), "CHW", "NCHW8c");
  EXPECT_EQ(chw.type().str(), "Tensor[(1, 4, 1, 1, 8), float32]");
  ExpectClose(RunCall(chw, {bias_chw}), test::Values(bias_chw), 0, "CHW");
}

TEST(GraphLayoutOps, WeightTransformFollowsTheOIHWBlockedIndexMap) {
  const std::vector<int64_t> shape = {32, 8, 3, 2};
  runtime::NDArray w = RandomArray(shape, kF32, 4);
  Call blocked = Transform(MakeVar("w", TensorType(shape, kF32)), "OIHW", "OIHW4i16o");
  EXPECT_EQ(blocked.type().str(), "Tensor[(2, 2, 3, 2, 4, 16), float32]");
  std::vector<double> want;
  for (int64_t o = 0; o < 2; ++o)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t r = 0; r < 3; ++r)
        for (int64_t s = 0; s < 2; ++s)
          for (int64_t ib = 0; ib < 4; ++ib)
            for (int64_t ob = 0; ob < 16; ++ob)
              want.push_back(GetFloat(w, Offset(shape, {o * 16 + ob, i * 4 + ib, r, s})));
  ExpectClose(RunCall(blocked, {w}), want, 0, "OIHW4i16o");
}

TEST(GraphLayoutOps, TransformErrorsNameTheCall) {
  Var x = MakeVar("x", TensorType({1, 12, 4, 4}, kF32));
  EXPECT_NE(ErrorOf([&] { Transform(x, "NCHW", "NHWC"); })
                .find("layout_transform 'lt': layout 'NHWC' is not supported; expected C, CHW, "
                      "NCHW, NCHW<k>c (such as NCHW16c), OIHW or OIHW<a>i<b>o"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              Transform(x, "NCHW", "NCHW8c");
            }).find("channels 12 must be a constant multiple of 8"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              Transform(x, "NCHW", "OIHW4i4o");
            }).find("layout_transform 'lt': cannot transform NCHW to OIHW4i4o"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { Transform(x, "NCHW16c", "NCHW"); })
                .find("layout_transform 'lt': the input Tensor[(1, 12, 4, 4), float32] does not "
                      "have the rank 5 of NCHW16c"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { Transform(x, "OIHW", "OIHW8i4o"); })
                .find("layout_transform 'lt': the weight (1, 12, 4, 4) (KCRS) does not split "
                      "into blocks of 4 output and 8 input channels"),
            std::string::npos);
}

struct ConvCase {
  std::vector<int64_t> x, w;
  int64_t stride;
  Ints padding;
};

// nn.conv2d's attributes for `c` and groups; the blocked convolutions take the same but groups.
Attrs ConvAttrs(const ConvCase& c) {
  return {{"strides", Ints{c.stride, c.stride}}, {"padding", c.padding}};
}

// x -> NCHW<ib>c, w -> `weight_layout` (or the Winograd transform where empty), the blocked
// convolution `conv`, its output back to NCHW: each call compiled alone and run in turn,
// compared with nn.conv2d.
void ExpectBlockedConvMatches(const ConvCase& c, int64_t ib, const std::string& weight_layout,
                              const std::string& conv, const Attrs& attrs, double tolerance) {
  runtime::NDArray x = RandomArray(c.x, kF32, 5), w = RandomArray(c.w, kF32, 6);
  Var xv = MakeVar("x", TensorType(c.x, kF32)), wv = MakeVar("w", TensorType(c.w, kF32));
  Call xb = Transform(xv, "NCHW", "NCHW" + std::to_string(ib) + "c");
  Call wb = weight_layout.empty() ? MakeCall("nn.contrib_conv2d_winograd_weight_transform", {wv})
                                  : Transform(wv, "OIHW", weight_layout);
  Call y = MakeCall(conv, {xb, wb}, attrs, "conv");
  int64_t ob = y.type().ConstShape()->back();
  Call out = Transform(y, "NCHW" + std::to_string(ob) + "c", "NCHW");
  runtime::NDArray got = RunCall(out, {RunCall(y, {RunCall(xb, {x}), RunCall(wb, {w})})});
  // Depthwise: one filter per channel.
  int64_t groups = c.w[1] == 1 ? c.x[1] : 1;
  Call reference = MakeCall("nn.conv2d", {xv, wv}, ConvAttrs(c).With("groups", groups));
  ASSERT_EQ(got.Shape(), reference.type().ConstShape().value());
  ExpectClose(got, test::Values(RunCall(reference, {x, w})), tolerance, conv);
}

TEST(GraphLayoutOps, DirectConvMatchesTheNCHWReference) {
  // Blocks of 8 in and 16 out; a register tile of 2 channel blocks x 3 columns.
  ConvCase c{{1, 16, 9, 9}, {32, 16, 3, 3}, 1, {1, 1, 1, 1}};
  Attrs attrs = ConvAttrs(c)
                    .With("oc_tile", int64_t{2})
                    .With("reg_w", int64_t{3})
                    .With("unroll_kw", int64_t{1});
  ExpectBlockedConvMatches(c, 8, "OIHW8i16o", "nn.contrib_conv2d_nchwc", attrs, 1e-4);
  // Stride 2, asymmetric pads, batch 2, the default tiling of the workload.
  ConvCase strided{{2, 8, 11, 10}, {16, 8, 3, 3}, 2, {0, 1, 2, 1}};
  topi::x86::Conv2DWorkload wl{2, 8, 11, 10, 16, 3, 3, {}};
  wl.attrs.strides = {2, 2};
  wl.attrs.pads = {0, 1, 2, 1};
  topi::x86::Conv2DNCHWcConfig cfg = topi::x86::DefaultConv2DNCHWcConfig(wl);
  Attrs tiled = ConvAttrs(strided)
                    .With("oc_tile", cfg.oc_tile)
                    .With("reg_h", cfg.reg_h)
                    .With("reg_w", cfg.reg_w);
  std::string layout = "OIHW" + std::to_string(cfg.ic_bn) + "i" + std::to_string(cfg.oc_bn) + "o";
  ExpectBlockedConvMatches(strided, cfg.ic_bn, layout, "nn.contrib_conv2d_nchwc", tiled, 1e-4);
}

TEST(GraphLayoutOps, DepthwiseConvMatchesTheNCHWReference) {
  ConvCase c{{1, 32, 10, 10}, {32, 1, 3, 3}, 2, {1, 1, 1, 1}};
  Attrs attrs = ConvAttrs(c).With("reg_w", int64_t{5});
  ExpectBlockedConvMatches(c, 16, "OIHW1i16o", "nn.contrib_depthwise_conv2d_nchwc", attrs, 1e-4);
}

TEST(GraphLayoutOps, WinogradConvMatchesTheNCHWReference) {
  ConvCase c{{1, 16, 8, 8}, {32, 16, 3, 3}, 1, {1, 1, 1, 1}};
  topi::x86::Conv2DWorkload wl{1, 16, 8, 8, 32, 3, 3, {}};
  wl.attrs.pads = {1, 1, 1, 1};
  topi::x86::WinogradConfig wg = topi::x86::DefaultWinogradConfig(wl);
  Attrs attrs = ConvAttrs(c)
                    .With("oc_bn", int64_t{16})
                    .With("fuse_tile_rows", int64_t{wg.fuse_tile_rows})
                    .With("gemm_rows", wg.gemm_rows)
                    .With("gemm_columns", wg.gemm_columns)
                    .With("gemm_unroll", wg.gemm_unroll);
  // Winograd's transforms scale the rounding errors up (topi's tests bound them alike).
  ExpectBlockedConvMatches(c, 16, "", "nn.contrib_conv2d_winograd_nchwc", attrs, 1e-3);
}

TEST(GraphLayoutOps, ConvScheduleTakesAFusedEpilogue) {
  // relu(conv) as one group mastered by the conv: its schedule finds the conv under the
  // ReLU and runs the ReLU on the register tile.
  Call conv = MakeCall("nn.contrib_conv2d_nchwc",
                       {MakeVar("x", TensorType({1, 1, 6, 6, 16}, kF32)),
                        MakeVar("w", TensorType({2, 1, 3, 3, 16, 16}, kF32))},
                       {{"padding", Ints{1, 1, 1, 1}}, {"reg_w", int64_t{6}}});
  runtime::NDArray x = RandomArray({1, 1, 6, 6, 16}, kF32, 7);
  runtime::NDArray w = RandomArray({2, 1, 3, 3, 16, 16}, kF32, 8);
  runtime::NDArray got = test::RunWithRelu(conv, {x, w});
  std::vector<double> want = test::Values(RunCall(conv, {x, w}));
  for (double& value : want) value = std::max(0.0, value);
  ExpectClose(got, want, 0, "relu(conv)");
}

TEST(GraphLayoutOps, ConvErrorsNameTheCall) {
  Var x = MakeVar("x", TensorType({1, 2, 8, 8, 8}, kF32));
  Var w = MakeVar("w", TensorType({2, 1, 3, 3, 8, 16}, kF32));
  EXPECT_NE(ErrorOf([&] {
              MakeCall("nn.contrib_conv2d_nchwc", {x, w}, {}, "c1");
            })
                .find("nn.contrib_conv2d_nchwc 'c1': conv2d_nchwc: weight 'weight' (2, 1, 3, 3, 8, "
                      "16) must have the data's input channel blocks per group: 2 blocks of 8 in "
                      "1 group(s)"),
            std::string::npos);
  Var t = MakeVar("t", TensorType({6, 6, 2, 16, 16}, kF32));
  EXPECT_NE(
      ErrorOf([&] {
        MakeCall("nn.contrib_conv2d_winograd_nchwc", {x, t},
                 {{"oc_bn", int64_t{16}}, {"strides", Ints{2, 2}}}, "w1");
      })
          .find("nn.contrib_conv2d_winograd_nchwc 'w1': conv2d_nchwc_winograd: Winograd needs "
                "stride 1"),
      std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              MakeCall("nn.contrib_conv2d_nchwc",
                       {x, MakeVar("v", TensorType({2, 2, 3, 3, 4, 16}, kF32))},
                       {{"padding", Ints{1, 1}}}, "c2");
            }).find("nn.contrib_conv2d_nchwc 'c2': attribute 'padding' must hold 4 integers"),
            std::string::npos);
  // A tiling that does not fit the output: the schedule's error, naming the call.
  Call conv = MakeCall("nn.contrib_conv2d_nchwc",
                       {MakeVar("x", TensorType({1, 1, 6, 6, 16}, kF32)),
                        MakeVar("w", TensorType({2, 1, 3, 3, 16, 16}, kF32))},
                       {{"reg_w", int64_t{5}}}, "c3");
  runtime::NDArray x6 = RandomArray({1, 1, 6, 6, 16}, kF32, 10);
  runtime::NDArray w6 = RandomArray({2, 1, 3, 3, 16, 16}, kF32, 11);
  EXPECT_NE(ErrorOf([&] {
              RunCall(conv, {x6, w6});
            })
                .find("nn.contrib_conv2d_nchwc 'c3': schedule_conv2d_nchwc: ic_bn=16 oc_bn=16 "
                      "oc_tile=1 reg_h=1 reg_w=5 unroll_kw=0 row_tiles_per_task=1 does not tile "
                      "the output (1, 2, 4, 4, 16)"),
            std::string::npos);
}

}  // namespace
}  // namespace loom::graph
