// Blocked-layout operators: the layout transform between NCHW and the NCHW[x]c /
// OIHW[x]i[y]o layouts of the x86 convolution kernels, and those convolutions themselves
// (direct, depthwise, Winograd) on blocked tensors, their tiling given as attributes; and a
// dense layer on a weight packed into column panels. AlterOpLayout
// (transforms/alter_op_layout.cc) rewrites nn.conv2d and nn.dense into them. Each type is
// read off the topi compute (TypeFromCompute), so the shape rules live once, in topi.
#include <functional>
#include <regex>
#include <string>

#include "graph/ops/shape_util.h"
#include "loom/topi/transform.h"
#include "loom/topi/x86/conv2d.h"
#include "loom/topi/x86/conv2d_winograd.h"
#include "loom/topi/x86/dense.h"
#include "topi/topi_util.h"

namespace loom::graph::ops {
namespace {

using Tensors = std::vector<te::Tensor>;

// ---- layout_transform

// A layout name parsed: data layouts C, CHW (a per-channel operand such as a bias), NCHW
// and NCHW<block>c; weight layouts OIHW and OIHW<block>i<o_block>o.
struct Layout {
  bool weight = false;
  int rank = 0;
  int64_t block = 0;    // channels (data) or input channels (weight) per block; 0: none
  int64_t o_block = 0;  // output channels per block (weight)
  bool blocked() const { return block != 0; }
};

Layout ParseLayout(const std::string& name, const std::string& where) {
  if (name == "C" || name == "CHW") return {false, int(name.size()), 0, 0};
  if (name.rfind("NCHW", 0) == 0) {
    const int64_t block = topi::detail::ChannelBlock(name, where);
    return {false, block ? 5 : 4, block, 0};
  }
  static const std::regex weight("OIHW(?:([1-9][0-9]{0,5})i([1-9][0-9]{0,5})o)?");
  std::smatch match;
  LOOM_CHECK_USER(std::regex_match(name, match, weight))
      << where << ": layout '" << name << "' is not supported; expected C, CHW, NCHW, "
      << "NCHW<k>c (such as NCHW16c), OIHW or OIHW<a>i<b>o (such as OIHW16i16o)";
  if (!match[1].matched) return {true, 4, 0, 0};
  return {true, 6, std::stoll(match[1]), std::stoll(match[2])};
}

// `x` (in the data layout `src`) as NCHW: unit dimensions added to C / CHW (a bias), a
// channel block undone by topi.
te::Tensor ToNCHW(const te::Tensor& x, const std::string& src_name, const Layout& src) {
  if (src.rank == 5) return topi::layout_transform(x, src_name, "NCHW");
  if (src.rank == 4) return x;
  const bool spatial = src.rank == 3;
  PrimExpr one = make_const(topi::detail::IndexType(x), int64_t{1});
  Array<PrimExpr> shape = {one, x.shape()[0], spatial ? x.shape()[1] : one,
                           spatial ? x.shape()[2] : one};
  return te::compute(
      shape, [&](const Array<Var>& i) { return spatial ? x(i[1], i[2], i[3]) : x(i[1]); },
      "expand_to_nchw", topi::detail::kInjective);
}

Tensors LayoutTransformCompute(const CallInfo& info, const Tensors& in) {
  const std::string& src_name = info.attrs.GetString("src_layout");
  const std::string& dst_name = info.attrs.GetString("dst_layout");
  Layout src = ParseLayout(src_name, info.where), dst = ParseLayout(dst_name, info.where);
  LOOM_CHECK_USER(src_name != dst_name && src.weight == dst.weight && dst.rank >= 4 &&
                  (!src.weight || (!src.blocked() && dst.blocked())))
      << info.where << ": cannot transform " << src_name << " to " << dst_name
      << " (supported: C, CHW, NCHW or NCHW<a>c to NCHW or NCHW<b>c; OIHW to OIHW<a>i<b>o)";
  LOOM_CHECK_USER(in[0].ndim() == src.rank)
      << info.where << ": the input " << info.input_types[0].str() << " does not have the rank "
      << src.rank << " of " << src_name;
  if (dst.weight) {
    return {topi::x86::pack_conv2d_weight(in[0], dst.block, dst.o_block, info.where)};
  }
  te::Tensor nchw = ToNCHW(in[0], src_name, src);
  if (!dst.blocked()) return {nchw};
  return {topi::layout_transform(nchw, "NCHW", dst_name)};
}

// ---- the blocked convolutions

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

OpBuilder& ConvAttrFields(OpBuilder& op) {
  return op.Attr("strides", AttrKind::kInts, Ints{1, 1}, "step between windows (h, w)")
      .Attr("padding", AttrKind::kInts, Ints{0, 0, 0, 0}, "zeros: top, left, bottom, right")
      .Attr("dilation", AttrKind::kInts, Ints{1, 1}, "step between kernel taps (h, w)");
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
  RegisterComputedOp("layout_transform", LayoutTransformCompute)
      .Describe(
          "the same tensor in another layout: C, CHW, NCHW or NCHW<a>c to NCHW or "
          "NCHW<b>c; OIHW to OIHW<a>i<b>o")
      .Inputs({"data"})
      .Attr("src_layout", AttrKind::kString, std::nullopt, "the input's layout")
      .Attr("dst_layout", AttrKind::kString, std::nullopt, "the output's layout")
      .Pattern(OpPattern::kInjective);

  OpBuilder direct =
      RegisterComputedOp("nn.contrib_conv2d_nchwc", [](const CallInfo& info, const Tensors& in) {
        return Tensors{topi::x86::conv2d_nchwc(in[0], in[1], Conv2DAttrsOf(info, 1))};
      });
  direct.Describe("conv2d of NCHW<ib>c data and an OIHW<ib>i<ob>o weight into NCHW<ob>c")
      .Inputs({"data", "weight"})
      .Pattern(OpPattern::kOutEWiseFusable)
      .Schedule(ScheduleNCHWc);
  TilingAttrFields(ConvAttrFields(direct));

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
      .Describe("a dense weight [N, K] as [ceil(N / tile_columns), K, tile_columns] panels")
      .Inputs({"weight"})
      .Pattern(OpPattern::kOpaque)
      .Attr("tile_columns", AttrKind::kInt, int64_t{32}, "panel width (a multiple of 16)");

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
        config.tile_columns = ConstInputShape(info, 1).back();
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
}  // namespace loom::graph::ops
