// The x86 kernels' own operators: the convolutions of topi/x86 (direct, depthwise, Winograd,
// int8) on blocked NCHW[x]c tensors, their tiling given as attributes, and a dense layer on a
// weight packed into column panels. The x86 layout rewrites (layout_rewrites.cc) turn
// nn.conv2d and nn.dense into them. Each type is read off the topi compute
// (TypeFromCompute), so the shape rules live once, in topi.
#include <functional>
#include <string>

#include "loom/graph/op_util.h"
#include "loom/topi/x86/amx.h"
#include "loom/topi/x86/batch_matmul.h"
#include "loom/topi/x86/conv2d.h"
#include "loom/topi/x86/conv2d_winograd.h"
#include "loom/topi/x86/dense.h"

namespace loom::strategy::x86 {
namespace {

using namespace loom::graph;
using namespace loom::graph::ops;
using Tensors = std::vector<te::Tensor>;

// A depthwise convolution's groups: the channels of its blocked data [N, c, H, W, b].
int64_t DepthwiseGroups(const CallInfo& info) {
  RequireRank(info, 0, 5);
  std::vector<int64_t> data = ConstInputShape(info, 0);
  return data[1] * data[4];
}

// `schedule()`, a loom::Error it throws (a tiling that does not fit the shapes) naming the
// call.
te::Schedule NamingTheCall(const CallInfo& info, const std::function<te::Schedule()>& schedule) {
  try {
    return schedule();
  } catch (const Error& e) {
    LOOM_THROW << info.where << ": " << e.what();
  }
}

// The AMX convolutions (bfloat16 and int8): one register block per AmxTiles call.
te::Schedule ScheduleAmxConv2D(const CallInfo& info, const Tensors& outputs, const Target&) {
  LOOM_ICHECK(outputs.size() == 1) << info.where << ": a conv group has one output";
  return NamingTheCall(info, [&] {
    return topi::x86::schedule_conv2d_nchwc_amx(outputs[0], Conv2DAttrsOf(info, 1));
  });
}

// The AMX dense layers (bfloat16 and int8): one register block per AmxTiles call.
te::Schedule ScheduleAmxDense(const CallInfo& info, const Tensors& outputs, const Target&) {
  LOOM_ICHECK(outputs.size() == 1) << info.where << ": a dense group has one output";
  return NamingTheCall(info, [&] { return topi::x86::schedule_dense_amx(outputs[0]); });
}

te::Schedule ScheduleNCHWc(const CallInfo& info, const Tensors& outputs, const Target&) {
  LOOM_ICHECK(outputs.size() == 1) << info.where << ": a blocked conv group has one output";
  topi::x86::Conv2DNCHWcConfig config;
  // The blocks are the tensors' (the schedule reads them off the shapes); the rest is the
  // register tiling AlterOpLayout chose.
  config.ic_bn = ConstInputShape(info, 0)[4];
  config.oc_bn = info.output_type.ConstShape().value().back();
  config.oc_tile = info.attrs.GetInt("oc_tile");
  config.reg_h = info.attrs.GetInt("reg_h");
  config.reg_w = info.attrs.GetInt("reg_w");
  config.unroll_kw = info.attrs.GetInt("unroll_kw") != 0;
  config.row_tiles_per_task = info.attrs.GetInt("row_tiles_per_task");
  return NamingTheCall(info, [&] { return topi::x86::schedule_conv2d_nchwc(outputs[0], config); });
}

te::Schedule ScheduleWinograd(const CallInfo& info, const Tensors& outputs, const Target&) {
  LOOM_ICHECK(outputs.size() == 1) << info.where << ": a Winograd group has one output";
  topi::x86::WinogradConfig config;
  config.fuse_tile_rows = info.attrs.GetInt("fuse_tile_rows") != 0;
  config.gemm_rows = info.attrs.GetInt("gemm_rows");
  config.gemm_columns = info.attrs.GetInt("gemm_columns");
  config.gemm_unroll = info.attrs.GetInt("gemm_unroll");
  return NamingTheCall(
      info, [&] { return topi::x86::schedule_conv2d_nchwc_winograd(outputs[0], config); });
}

OpBuilder& TilingAttrFields(OpBuilder& op) {
  return op.Attr("oc_tile", AttrKind::kInt, int64_t{1}, "channel blocks per register tile")
      .Attr("reg_h", AttrKind::kInt, int64_t{1}, "output rows per register tile")
      .Attr("reg_w", AttrKind::kInt, int64_t{1}, "output columns per register tile")
      .Attr("unroll_kw", AttrKind::kInt, int64_t{0}, "1: the kernel-column loop unrolled")
      .Attr("row_tiles_per_task", AttrKind::kInt, int64_t{1},
            "rows of register tiles per parallel task (depthwise; 1 otherwise)");
}

[[maybe_unused]] const bool kRegistered = [] {
  OpBuilder direct =
      RegisterComputedOp("nn.contrib_conv2d_nchwc", [](const CallInfo& info, const Tensors& in) {
        return Tensors{topi::x86::conv2d_nchwc(in[0], in[1],
                                               Conv2DAttrsOf(info, info.attrs.GetInt("groups")))};
      });
  direct.Describe("conv2d of NCHW<ib>c data and an OIHW<ib>i<ob>o weight into NCHW<ob>c")
      .Inputs({"data", "weight"})
      .Pattern(OpPattern::kOutEWiseFusable)
      .Schedule(ScheduleNCHWc);
  TilingAttrFields(ConvAttrFields(direct))
      .Attr("groups", AttrKind::kInt, int64_t{1},
            "channel groups, each a whole number of blocks of input and output channels");

  // int8 (AVX-512 VNNI): what the x86 layout rewrite makes of qnn.conv2d.
  OpBuilder int8 =
      RegisterComputedOp("nn.contrib_conv2d_nchwc_int8", [](const CallInfo& info, const Tensors& in) {
        return Tensors{topi::x86::conv2d_nchwc_int8(in[0], in[1], Conv2DAttrsOf(info, 1),
                                                    info.attrs.GetInt("pad_value"))};
      });
  int8.Describe("sum(data * weight) in int32 of uint8 NCHW<ib>c data and an int8 "
                "OIHW<ib/4>i<ob>o4i weight, into NCHW<ob>c")
      .Inputs({"data", "weight"})
      .Pattern(OpPattern::kOutEWiseFusable)
      .Schedule(ScheduleNCHWc);
  TilingAttrFields(ConvAttrFields(int8))
      .Attr("pad_value", AttrKind::kInt, int64_t{0}, "the border's value (the data's zero point)");
  // bfloat16 (AVX-512 BF16): what the x86 layout rewrite makes of nn.conv2d with bfloat16
  // operands (--precision bf16) where the AMX kernel does not take it.
  OpBuilder dpbf16 = RegisterComputedOp(
      "nn.contrib_conv2d_nchwc_dpbf16", [](const CallInfo& info, const Tensors& in) {
        return Tensors{topi::x86::conv2d_nchwc_dpbf16(in[0], in[1], Conv2DAttrsOf(info, 1))};
      });
  dpbf16.Describe("sum(data * weight) in float32 of bfloat16 NCHW<ib>c data and a bfloat16 "
                  "OIHW<ib/2>i<ob>o2i weight, into NCHW<ob>c (vdpbf16ps)")
      .Inputs({"data", "weight"})
      .Pattern(OpPattern::kOutEWiseFusable)
      .Schedule(ScheduleNCHWc);
  TilingAttrFields(ConvAttrFields(dpbf16));
  // Opaque: a model's weights are constants, so FoldConstant packs it at compile time.
  RegisterComputedOp("nn.contrib_conv2d_dot_weight_pack",
                     [](const CallInfo& info, const Tensors& in) {
                       return Tensors{topi::x86::pack_conv2d_weight_dot(
                           in[0], info.attrs.GetInt("ic_bn"), info.attrs.GetInt("oc_bn"))};
                     })
      .Describe("an int8 / bfloat16 KCRS weight as [K/oc_bn, C/ic_bn, R, S, ic_bn/g, oc_bn, g], "
                "g = 4 / 2 (the elements one dot-product lane sums)")
      .Inputs({"weight"})
      .Pattern(OpPattern::kOpaque)
      .Attr("ic_bn", AttrKind::kInt, std::nullopt, "input channels per block (a multiple of g)")
      .Attr("oc_bn", AttrKind::kInt, std::nullopt, "output channels per block (8 or 16k)");

  // int8 on AMX: what the x86 layout rewrite makes of qnn.conv2d where the CPU has amx-int8.
  OpBuilder amx_int8 = RegisterComputedOp(
      "nn.contrib_conv2d_nchwc_amx_int8", [](const CallInfo& info, const Tensors& in) {
        return Tensors{topi::x86::conv2d_nchwc_amx_int8(
            in[0], in[1], Conv2DAttrsOf(info, 1), info.attrs.GetInt("pad_value"))};
      });
  amx_int8
      .Describe("sum(data * weight) in int32 of uint8 NCHW32c data and a packed int8 weight "
                "[K/32, C/32, R, S, 8, 32, 4], into NCHW32c (AMX tiles)")
      .Inputs({"data", "weight"})
      .Pattern(OpPattern::kOutEWiseFusable)
      .Schedule(ScheduleAmxConv2D);
  ConvAttrFields(amx_int8)
      .Attr("pad_value", AttrKind::kInt, int64_t{0}, "the border's value (the data's zero point)");
  RegisterComputedOp("nn.contrib_amx_int8_weight_pack",
                     [](const CallInfo&, const Tensors& in) {
                       return Tensors{topi::x86::pack_weight_amx_int8(in[0])};
                     })
      .Describe("an int8 KCRS weight as [K/32, C/32, R, S, 8, 32, 4], a dense one [N, K] as "
                "[N/32, K/64, 16, 32, 4]")
      .Inputs({"weight"})
      .Pattern(OpPattern::kOpaque);

  // bfloat16 on AMX: what the x86 layout rewrite makes of nn.conv2d and nn.dense with
  // bfloat16 operands (--precision bf16). The packs are opaque: FoldConstant packs the
  // constant weights at compile time.
  OpBuilder bf16 =
      RegisterComputedOp("nn.contrib_conv2d_nchwc_bf16", [](const CallInfo& info, const Tensors& in) {
        return Tensors{topi::x86::conv2d_nchwc_bf16(in[0], in[1], Conv2DAttrsOf(info, 1))};
      });
  bf16.Describe("sum(data * weight) in float32 of bfloat16 NCHW32c data and a packed bfloat16 "
                "weight [K/32, C/32, R, S, 16, 32, 2], into NCHW32c (AMX tiles)")
      .Inputs({"data", "weight"})
      .Pattern(OpPattern::kOutEWiseFusable)
      .Schedule(ScheduleAmxConv2D);
  ConvAttrFields(bf16);
  RegisterComputedOp("nn.contrib_bf16_weight_pack",
                     [](const CallInfo&, const Tensors& in) {
                       return Tensors{topi::x86::pack_weight_bf16(in[0])};
                     })
      .Describe("a KCRS weight as bfloat16 [K/32, C/32, R, S, 16, 32, 2], a dense one [N, K] "
                "as [N/32, K/32, 16, 32, 2]")
      .Inputs({"weight"})
      .Pattern(OpPattern::kOpaque);
  RegisterComputedOp("nn.contrib_unfold_columns",
                     [](const CallInfo& info, const Tensors& in) {
                       return Tensors{topi::x86::unfold_columns_nchwc(
                           in[0], Conv2DAttrsOf(info, 1), info.attrs.GetInt("kernel_columns"))};
                     })
      .Describe("NCHW data with a convolution's kernel columns unfolded into one block of 32 "
                "channels: [N, 1, H + pads, Q, 32] (the input of a stem on AMX tiles)")
      .Inputs({"data"})
      // Opaque: its own schedule (the padded rows materialized, then vector copies), not the
      // injective one that would inline the rows into a gather per value.
      .Pattern(OpPattern::kOpaque)
      .Schedule([](const CallInfo& info, const Tensors& outputs, const Target&) {
        return NamingTheCall(info,
                             [&] { return topi::x86::schedule_unfold_columns(outputs[0]); });
      })
      .Attr("kernel_columns", AttrKind::kInt, std::nullopt, "the kernel's columns S")
      .Attr("strides", AttrKind::kInts, Ints{1, 1}, "the convolution's strides (h, w)")
      .Attr("padding", AttrKind::kInts, Ints{0, 0, 0, 0}, "its padding: top, left, bottom, right")
      .Attr("dilation", AttrKind::kInts, Ints{1, 1}, "its dilation (h, w)");
  RegisterComputedOp("nn.contrib_dense_bf16",
                     [](const CallInfo&, const Tensors& in) {
                       return Tensors{topi::x86::dense_bf16(in[0], in[1])};
                     })
      .Describe("data [..., M, K] bfloat16 x a weight packed by nn.contrib_bf16_weight_pack "
                "-> [..., M, N] float32 (AMX tiles)")
      .Inputs({"data", "packed_weight"})
      .Pattern(OpPattern::kOutEWiseFusable)
      .Schedule(ScheduleAmxDense);
  RegisterComputedOp("nn.contrib_dense_amx_int8",
                     [](const CallInfo&, const Tensors& in) {
                       return Tensors{topi::x86::dense_amx_int8(in[0], in[1])};
                     })
      .Describe("data [..., M, K] uint8 x an int8 weight packed by "
                "nn.contrib_amx_int8_weight_pack -> [..., M, N] int32 (AMX tiles)")
      .Inputs({"data", "packed_weight"})
      .Pattern(OpPattern::kOutEWiseFusable)
      .Schedule(ScheduleAmxDense);

  OpBuilder depthwise = RegisterComputedOp(
      "nn.contrib_depthwise_conv2d_nchwc", [](const CallInfo& info, const Tensors& in) {
        return Tensors{topi::x86::depthwise_conv2d_nchwc(
            in[0], in[1], Conv2DAttrsOf(info, DepthwiseGroups(info)))};
      });
  depthwise.Describe("depthwise conv2d of NCHW<b>c data and a [c, 1, R, S, 1, b] weight")
      .Inputs({"data", "weight"})
      .Pattern(OpPattern::kOutEWiseFusable)
      .Schedule(ScheduleNCHWc);
  TilingAttrFields(ConvAttrFields(depthwise));

  // int8 depthwise (AVX-512 VNNI): what the x86 layout rewrite makes of a depthwise qnn.conv2d.
  OpBuilder depthwise_int8 = RegisterComputedOp(
      "nn.contrib_depthwise_conv2d_nchwc_int8", [](const CallInfo& info, const Tensors& in) {
        return Tensors{topi::x86::depthwise_conv2d_nchwc_int8(
            in[0], in[1], Conv2DAttrsOf(info, DepthwiseGroups(info)),
            info.attrs.GetInt("pad_value"))};
      });
  depthwise_int8
      .Describe("depthwise sum(data * weight) in int32 of uint8 NCHW<b>c data and an int8 "
                "[c, R, S/4, b, 4] weight (4 taps per group)")
      .Inputs({"data", "weight"})
      .Pattern(OpPattern::kOutEWiseFusable)
      .Schedule(ScheduleNCHWc);
  TilingAttrFields(ConvAttrFields(depthwise_int8))
      .Attr("pad_value", AttrKind::kInt, int64_t{0}, "the border's value (the data's zero point)");

  // Opaque: a model's weights are constants, so FoldConstant computes it at compile time.
  RegisterComputedOp("nn.contrib_conv2d_winograd_weight_transform",
                     [](const CallInfo&, const Tensors& in) {
                       return Tensors{topi::x86::winograd_weight_transform(in[0])};
                     })
      .Describe("a 3x3 OIHW weight as Winograd F(4x4, 3x3)'s [6, 6, K/16, C, 16]")
      .Inputs({"weight"})
      .Pattern(OpPattern::kOpaque);

  OpBuilder winograd = RegisterComputedOp(
      "nn.contrib_conv2d_winograd_nchwc", [](const CallInfo& info, const Tensors& in) {
        return Tensors{topi::x86::conv2d_nchwc_winograd(in[0], in[1], Conv2DAttrsOf(info, 1),
                                                        info.attrs.GetInt("oc_bn"))};
      });
  winograd.Describe("Winograd F(4x4, 3x3) conv2d of NCHW<ib>c data into NCHW<oc_bn>c")
      .Inputs({"data", "transformed_weight"})
      .Pattern(OpPattern::kOutEWiseFusable)
      .Schedule(ScheduleWinograd);
  ConvAttrFields(winograd)
      .Attr("oc_bn", AttrKind::kInt, std::nullopt, "output channels per block (16k)")
      .Attr("fuse_tile_rows", AttrKind::kInt, int64_t{1},
            "1: each row of tiles runs every stage in one parallel iteration")
      .Attr("gemm_rows", AttrKind::kInt, int64_t{6}, "tiles per GEMM register tile")
      .Attr("gemm_columns", AttrKind::kInt, int64_t{64}, "output channels per GEMM tile")
      .Attr("gemm_unroll", AttrKind::kInt, int64_t{4}, "GEMM copies over input channels");

  // A dense layer's weight [N, K] in column panels, and the product with packed panels
  // (topi/x86/dense.h): what AlterOpLayout makes of nn.dense with a constant weight.
  // Opaque: the weight is a constant, so FoldConstant packs it at compile time.
  RegisterComputedOp("nn.contrib_dense_pack",
                     [](const CallInfo& info, const Tensors& in) {
                       // Packing depends on the panel width only (one row: the register
                       // check of pack_dense_weight then holds for any panel that fits).
                       topi::x86::DenseConfig config;
                       config.tile_rows = 1;
                       config.tile_columns = info.attrs.GetInt("tile_columns");
                       return Tensors{topi::x86::pack_dense_weight(in[0], /*transposed=*/true,
                                                                   config)};
                     })
      .Describe("a dense weight [N, K] as [ceil(N / tile_columns), K, tile_columns] panels (int8 "
                "/ bfloat16: [ceil(N / tile_columns), K / g, tile_columns, g], g = 4 / 2)")
      .Inputs({"weight"})
      .Pattern(OpPattern::kOpaque)
      .Attr("tile_columns", AttrKind::kInt, int64_t{32}, "panel width (a multiple of 16)");

  // Batched products on dot-product instructions: what the x86 layout rewrites make of
  // qnn.matmul (int8, AVX-512 VNNI) and of nn.matmul of bfloat16 operands (AVX-512 BF16).
  RegisterComputedOp("nn.contrib_batch_matmul_dot_pack",
                     [](const CallInfo&, const Tensors& in) {
                       return Tensors{topi::x86::pack_batch_matmul_dot(in[0])};
                     })
      .Describe("an int8 / bfloat16 b [..., K, N] as [..., N / 16, ceil(K / g), 16, g], g = 4 / "
                "2 (zeros past K)")
      .Inputs({"b"})
      .Pattern(OpPattern::kInjective);
  RegisterComputedOp("nn.contrib_batch_matmul_dot",
                     [](const CallInfo&, const Tensors& in) {
                       return Tensors{topi::x86::batch_matmul_dot(in[0], in[1])};
                     })
      .Describe("sum(a * b) in int32 (float32) of uint8 (bfloat16) a [..., M, K] and an int8 "
                "(bfloat16) b packed by nn.contrib_batch_matmul_dot_pack -> [..., M, N]")
      .Inputs({"a", "packed_b"})
      .Pattern(OpPattern::kOutEWiseFusable)
      .Schedule([](const CallInfo& info, const Tensors& outputs, const Target&) {
        LOOM_ICHECK(outputs.size() == 1) << info.where << ": a product group has one output";
        const std::vector<int64_t> a = ConstInputShape(info, 0);
        const std::vector<int64_t> out = info.output_type.ConstShape().value();
        const topi::x86::BatchMatmulConfig config =
            topi::x86::DefaultBatchMatmulConfig(a[a.size() - 2], out.back(), a.back());
        return NamingTheCall(
            info, [&] { return topi::x86::schedule_batch_matmul(outputs[0], config); });
      });

  OpBuilder dense = RegisterComputedOp(
      "nn.contrib_dense_packed", [](const CallInfo& info, const Tensors& in) {
        return Tensors{topi::x86::dense_packed(in[0], in[1], info.attrs.GetInt("units"))};
      });
  dense.Describe("data [..., K] times a weight packed by nn.contrib_dense_pack: [..., units]")
      .Inputs({"data", "packed_weight"})
      .Pattern(OpPattern::kOutEWiseFusable)
      .Schedule([](const CallInfo& info, const Tensors& outputs, const Target&) {
        LOOM_ICHECK(outputs.size() == 1) << info.where << ": a dense group has one output";
        topi::x86::DenseConfig config;
        config.tile_rows = info.attrs.GetInt("tile_rows");
        // [panels, K, nr] or (int8, bfloat16) [panels, K / g, nr, g]
        config.tile_columns = ConstInputShape(info, 1)[2];
        config.block_columns = info.attrs.GetInt("block_columns");
        config.block_bytes = info.attrs.GetInt("block_bytes");
        config.k_unroll = info.attrs.GetInt("k_unroll");
        return NamingTheCall(info,
                             [&] { return topi::x86::schedule_dense_packed(outputs[0], config); });
      })
      .Attr("units", AttrKind::kInt, std::nullopt, "output columns N (before panel padding)")
      .Attr("tile_rows", AttrKind::kInt, int64_t{8}, "rows of the register tile")
      .Attr("block_columns", AttrKind::kInt, int64_t{0}, "columns per block (0: by block_bytes)")
      .Attr("block_bytes", AttrKind::kInt, int64_t{1} << 20, "packed bytes per column block")
      .Attr("k_unroll", AttrKind::kInt, int64_t{8}, "copies of the k loop body");
  return true;
}();

}  // namespace
}  // namespace loom::strategy::x86
