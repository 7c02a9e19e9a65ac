// The x86 layout rewrites (AlterOpLayout asks for them through graph/strategy.h): each
// nn.conv2d becomes the kernel topi::x86::ChooseConv2DKernel picks for its workload (direct,
// depthwise or Winograd) on blocked NCHW[x]c tensors, and nn.dense with a constant weight
// the GEMM on a weight packed once into column panels; qnn.conv2d (8-bit operands) becomes
// an int8 kernel (AMX tiles where the CPU has amx-int8 and the channels fit, else AVX-512
// VNNI), qnn.dense the int8 GEMM, where the CPU has AVX-512 VNNI; nn.conv2d and nn.dense of
// bfloat16 operands (--precision bf16) the bfloat16 kernels (bf16_rewrites.cc).
// The blocked kernels are AVX-512 code: on CPUs without it the calls stay as they are.
#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "loom/graph/strategy.h"
#include "loom/graph/tuning.h"
#include "loom/topi/x86/amx.h"
#include "loom/topi/x86/conv2d.h"
#include "loom/topi/x86/conv2d_winograd.h"
#include "loom/topi/x86/dense.h"
#include "loom/topi/x86/tensor_intrinsics.h"
#include "strategy/x86/workloads.h"

#include "strategy/x86/layout_rewrites.h"

namespace loom::strategy::x86 {

using topi::x86::Conv2DNCHWcConfig;
using topi::x86::Conv2DWorkload;
using topi::x86::WinogradConfig;

bool HasBlockedKernels(const Target& target) { return target.HasFeature("avx512f"); }

bool PositiveShape(const std::vector<int64_t>& shape) {
  return std::all_of(shape.begin(), shape.end(), [](int64_t d) { return d > 0; });
}

namespace {

// The output channels a conv computes for `channels`: those, or the next multiple of the
// vector width when that takes fewer vectors than the largest block dividing `channels`
// does (1000 classes: 63 vectors of 16, not 100 of 10 lanes).
int64_t WholeVectorChannels(int64_t channels, int64_t lanes) {
  const int64_t padded_vectors = (channels + lanes - 1) / lanes;
  int64_t block = std::min(channels, lanes);
  while (channels % block != 0) --block;
  const int64_t block_vectors = channels / block;
  return padded_vectors < block_vectors ? padded_vectors * lanes : channels;
}

}  // namespace

std::optional<OperandShapes> OperandShapesOf(const CallNode& call, DataType dtype) {
  const graph::Type& data = call.args[0].type();
  const graph::Type& weight = call.args[1].type();
  std::optional<std::vector<int64_t>> x = data.ConstShape(), w = weight.ConstShape();
  if (!x || !w || data.dtype() != dtype || weight.dtype() != dtype) return std::nullopt;
  if (!PositiveShape(*x) || !PositiveShape(*w)) return std::nullopt;
  return std::make_pair(*x, *w);
}

Conv2DWorkload WorkloadOf(const CallNode& call, const std::vector<int64_t>& x,
                          const std::vector<int64_t>& w) {
  Conv2DWorkload wl;
  wl.n = x[0], wl.c = x[1], wl.h = x[2], wl.w = x[3];
  wl.k = w[0], wl.r = w[2], wl.s = w[3];
  const Ints& strides = call.attrs.GetInts("strides");
  const Ints& padding = call.attrs.GetInts("padding");
  const Ints& dilation = call.attrs.GetInts("dilation");
  wl.attrs.strides = {strides[0], strides[1]};
  wl.attrs.pads = {padding[0], padding[1], padding[2], padding[3]};
  wl.attrs.dilations = {dilation[0], dilation[1]};
  wl.attrs.groups = call.attrs.GetInt("groups");
  return wl;
}

LayoutRewrite WithOutChannels(Expr conv, int64_t block, int64_t filters, int64_t out_channels) {
  const std::string blocked = graph::BlockedDataLayout(block);
  if (filters == out_channels) return LayoutRewrite{std::move(conv), blocked};
  Expr nchw = MakeCall("layout_transform", {std::move(conv)},
                       {{"src_layout", blocked}, {"dst_layout", std::string("NCHW")}});
  Expr sliced = MakeCall("strided_slice", {nchw},
                         {{"begin", Ints{0}}, {"end", Ints{out_channels}}, {"axes", Ints{1}}});
  return LayoutRewrite{sliced, "NCHW"};
}

std::optional<LayoutRewrite> RewriteConv2D(const CallNode& call, LayoutRewriteContext& context,
                                           const Target& target) {
  auto operands = OperandShapesOf(call, DataType::Float(32));
  if (!HasBlockedKernels(target) || !operands) return std::nullopt;
  Conv2DWorkload wl = WorkloadOf(call, operands->first, operands->second);
  const int64_t lanes = target.VectorLanes(32);
  // Grouped: the direct kernel, its channel blocks within a group. Groups of at least a
  // 128-bit vector of output channels gain over the generic schedule (1 thread, 2026-11-29:
  // RegNetX-400MF, 16 per group, 25.2 -> 7.1 ms; RegNetY-400MF, 8, 18.5 -> 10.7 ms;
  // ResNeXt-50 32x4d, 4, 71.1 -> 59.4 ms); narrower groups stay generic.
  constexpr int64_t kMinGroupChannels = 4;
  const bool grouped = wl.attrs.groups != 1 && !wl.depthwise();
  if (grouped && (wl.c % wl.attrs.groups != 0 || wl.k % wl.attrs.groups != 0 ||
                  (wl.k / wl.attrs.groups) % kMinGroupChannels != 0)) {
    return std::nullopt;
  }
  const int64_t out_channels = wl.k;
  if (!wl.depthwise() && !grouped) wl.k = WholeVectorChannels(out_channels, lanes);
  // A tuned point where the compile has one (graph/tuning.h), else the default.
  const std::optional<topi::Config> tuned =
      graph::QueryTunedConfig(target, Conv2DTuningWorkload(wl));
  topi::x86::Conv2DChoice choice =
      tuned ? topi::x86::Conv2DChoiceOf(wl, *tuned) : topi::x86::ChooseConv2DKernel(wl);
  // A depthwise conv computes each channel alone, so any block of its channels serves: it
  // takes its data's block where that is wider than its own (the AMX kernels' 32) and
  // divides the channels, rather than converting the data there and its result back.
  if (choice.algorithm == "depthwise") {
    std::optional<int64_t> data_block = graph::DataLayoutBlock(context.OperandLayout(0));
    if (data_block && *data_block > choice.config.ic_bn && wl.c % *data_block == 0) {
      choice.config = topi::x86::DepthwiseConfigWithBlock(wl, choice.config, *data_block);
    }
  }
  const Conv2DNCHWcConfig& cfg = choice.config;

  Expr blocked_data = context.Operand(0, graph::BlockedDataLayout(cfg.ic_bn));
  Expr kernel = context.Operand(1, "");
  if (wl.k != out_channels) {
    // Zero filters for the added channels (folded into the weight when it is constant).
    const Ints pad_width = {0, 0, 0, 0, wl.k - out_channels, 0, 0, 0};
    kernel = MakeCall("nn.pad", {kernel}, {{"pad_width", pad_width}});
  }
  Attrs attrs = WindowAttrs(call);
  graph::Call conv;
  if (choice.algorithm == "winograd") {
    const WinogradConfig& wg = choice.winograd;
    attrs = attrs.With("oc_bn", cfg.oc_bn)
                .With("fuse_tile_rows", int64_t{wg.fuse_tile_rows})
                .With("gemm_rows", wg.gemm_rows)
                .With("gemm_columns", wg.gemm_columns)
                .With("gemm_unroll", wg.gemm_unroll);
    Expr transformed = MakeCall("nn.contrib_conv2d_winograd_weight_transform", {kernel});
    conv = MakeCall("nn.contrib_conv2d_winograd_nchwc", {blocked_data, transformed}, attrs,
                    call.name_hint);
  } else {
    const bool depthwise = choice.algorithm == "depthwise";
    if (grouped) attrs = attrs.With("groups", wl.attrs.groups);
    attrs = attrs.With("oc_tile", cfg.oc_tile)
                .With("reg_h", cfg.reg_h)
                .With("reg_w", cfg.reg_w)
                .With("unroll_kw", int64_t{cfg.unroll_kw})
                .With("row_tiles_per_task", cfg.row_tiles_per_task);
    // A depthwise weight [C, 1, R, S] is OIHW with input blocks of one channel.
    std::string weight_layout =
        "OIHW" + std::to_string(depthwise ? 1 : cfg.ic_bn) + "i" + std::to_string(cfg.oc_bn) + "o";
    Expr blocked_weight =
        MakeCall("layout_transform", {kernel},
                 {{"src_layout", std::string("OIHW")}, {"dst_layout", weight_layout}});
    conv = MakeCall(depthwise ? "nn.contrib_depthwise_conv2d_nchwc" : "nn.contrib_conv2d_nchwc",
                    {blocked_data, blocked_weight}, attrs, call.name_hint);
  }
  return WithOutChannels(conv, cfg.oc_bn, wl.k, out_channels);
}

int64_t RoundUp(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

namespace {

// An 8-bit operand as the VNNI kernels take it: vpdpbusd multiplies unsigned by signed bytes,
// so data is uint8 (int8 shifted up by 128) and a second activation int8 (uint8 shifted down
// by 128), its zero point shifted with it.
struct ByteOperand {
  DataType dtype = DataType::UInt(8);
  int64_t offset = 0;      // added to every value
  int64_t zero_point = 0;  // the operand's, offset too
  Expr operator()(Expr data) const {
    if (offset == 0) return data;
    Expr wide = MakeCall("cast", {std::move(data)}, {{"dtype", std::string("int32")}});
    Expr shifted =
        MakeCall("add", {wide, graph::MakeScalarConstant(double(offset), DataType::Int(32))});
    return MakeCall("cast", {shifted}, {{"dtype", dtype.str()}});
  }
};

// An operand of type `from` with `zero_point` as type `to` (uint8 or int8).
ByteOperand AsByteOperand(DataType from, DataType to, int64_t zero_point) {
  ByteOperand operand;
  operand.dtype = to;
  if (from != to) operand.offset = to == DataType::UInt(8) ? 128 : -128;
  operand.zero_point = zero_point + operand.offset;
  return operand;
}

// The int8 kernels' operands where a call (qnn.conv2d, qnn.dense) has them: 8-bit data, a
// constant int8 weight with zero point 0, constant positive shapes, and a CPU with VNNI.
std::optional<ByteOperand> VnniOperands(const CallNode& call, const Target& target) {
  const graph::Type& data = call.args[0].type();
  const graph::Type& weight = call.args[1].type();
  std::optional<std::vector<int64_t>> x = data.ConstShape(), w = weight.ConstShape();
  const DataType u8 = DataType::UInt(8), i8 = DataType::Int(8);
  if (!HasBlockedKernels(target) || !target.HasFeature("avx512vnni") || !x || !w ||
      !PositiveShape(*x) || !PositiveShape(*w) || weight.dtype() != i8 ||
      (data.dtype() != u8 && data.dtype() != i8) || call.attrs.GetInt("weight_zero_point") != 0 ||
      !IsConstantExpr(call.args[1])) {
    return std::nullopt;
  }
  return AsByteOperand(data.dtype(), u8, call.attrs.GetInt("data_zero_point"));
}

// The data zero point's share of an integer product, zero_point * sum(weight) per output
// channel (the sum over `axes` of the weight): what a kernel summing data * weight computes
// beyond sum((data - zero_point) * weight). A constant once FoldConstant has run.
Expr ZeroPointShare(const Expr& weight, const Ints& axes, int64_t zero_point) {
  Expr wide = MakeCall("cast", {weight}, {{"dtype", std::string("int32")}});
  Expr sums = MakeCall("sum", {wide}, {{"axis", axes}});
  Expr scalar = graph::MakeScalarConstant(double(zero_point), DataType::Int(32));
  return MakeCall("multiply", {sums, scalar});
}

}  // namespace

Expr BlockedData(LayoutRewriteContext& context, const std::function<Expr(Expr)>& convert,
                 int64_t channels, int64_t padded_channels, int64_t block, double pad_value) {
  const std::string layout = graph::BlockedDataLayout(block);
  if (padded_channels == channels) return convert(context.Operand(0, layout));
  const Ints pad_width = {0, 0, 0, 0, 0, padded_channels - channels, 0, 0};
  Expr data = MakeCall("nn.pad", {convert(context.Operand(0, ""))},
                       {{"pad_width", pad_width}, {"pad_value", pad_value}});
  return MakeCall("layout_transform", {data},
                  {{"src_layout", std::string("NCHW")}, {"dst_layout", layout}});
}

DotConv2DCall DotProductConv2D(const CallNode& call, LayoutRewriteContext& context,
                               const Target& target, int depth,
                               const std::string& op, const std::function<Expr(Expr)>& convert,
                               double pad_value, const Attrs& attrs) {
  const std::vector<int64_t> x = *call.args[0].type().ConstShape();
  const std::vector<int64_t> w = *call.args[1].type().ConstShape();
  Conv2DWorkload wl = WorkloadOf(call, x, w);
  wl.c = RoundUp(wl.c, depth);
  // Filters in blocks of 16, or of 8 (256-bit registers: AVX-512 VL) where that avoids
  // padding them.
  if (wl.k % (topi::x86::kVnniLanes / 2) != 0 || !target.HasFeature("avx512vl")) {
    wl.k = RoundUp(wl.k, topi::x86::kVnniLanes);
  }
  Conv2DNCHWcConfig cfg = topi::x86::DefaultConv2DDotConfig(wl, depth);
  // The data's own block where it holds whole groups (up to 16 channels): no conversion
  // between a producer's block (8 for 24 channels) and this kernel's default.
  std::optional<int64_t> data_block = graph::DataLayoutBlock(context.OperandLayout(0));
  if (wl.c == x[1] && data_block && *data_block > 0 && *data_block <= 16 &&
      *data_block % depth == 0 && wl.c % *data_block == 0) {
    cfg.ic_bn = *data_block;
  }
  Expr data = BlockedData(context, convert, x[1], wl.c, cfg.ic_bn, pad_value);
  Expr kernel = context.Operand(1, "");
  if (wl.k != w[0] || wl.c != w[1]) {
    const Ints pad_width = {0, 0, 0, 0, wl.k - w[0], wl.c - w[1], 0, 0};
    kernel = MakeCall("nn.pad", {kernel}, {{"pad_width", pad_width}});
  }
  Expr packed = MakeCall("nn.contrib_conv2d_dot_weight_pack", {kernel},
                         {{"ic_bn", cfg.ic_bn}, {"oc_bn", cfg.oc_bn}});
  Attrs conv_attrs = WindowAttrs(call)
                         .With("oc_tile", cfg.oc_tile)
                         .With("reg_h", cfg.reg_h)
                         .With("reg_w", cfg.reg_w)
                         .With("unroll_kw", int64_t{cfg.unroll_kw});
  for (const auto& [name, value] : attrs.values()) conv_attrs = conv_attrs.With(name, value);
  return {MakeCall(op, {data, packed}, conv_attrs, call.name_hint), kernel, wl.k, cfg.oc_bn};
}

namespace {

// Whether the x86 rewrite below makes an int8 kernel of a grouped qnn.conv2d: a depthwise
// one (groups = channels = filters) with VNNI's operands on a CPU that also permutes bytes
// across a vector (AVX-512 VBMI's vpermb, which turns 4 columns of 16 channels into each
// channel's 4 taps), its column dilation 1 (the 4 taps summed at once are adjacent columns).
bool HasIntegerDepthwiseKernel(const CallNode& call, const Target& target) {
  if (!VnniOperands(call, target) || !target.HasFeature("avx512vbmi")) return false;
  const Conv2DWorkload wl =
      WorkloadOf(call, *call.args[0].type().ConstShape(), *call.args[1].type().ConstShape());
  return wl.depthwise() && wl.attrs.dilations[1] == 1;
}

// Depthwise qnn.conv2d of uint8 or int8 data and a constant int8 weight [C, 1, R, S] (zero
// point 0) -> topi::x86::depthwise_conv2d_nchwc_int8: NCHW<b>c uint8 data, b the data's own
// block where it is a multiple of 16 dividing the channels (the AMX convolutions' 32), else
// 16, the channels padded to a multiple of 16 with the zero point. Each channel's kernel row
// is padded with zero taps to a multiple of 4, the right border by as many columns (the
// output is the same), and the weight laid out [C/b, R, S/4, b, 4]; the zero point's share
// is subtracted after, as for RewriteIntegerConv2D.
std::optional<LayoutRewrite> RewriteIntegerDepthwise(const CallNode& call,
                                                     LayoutRewriteContext& context,
                                                     const ByteOperand& unsigned_data) {
  const std::vector<int64_t> x = *call.args[0].type().ConstShape();
  const std::vector<int64_t> w = *call.args[1].type().ConstShape();
  Conv2DWorkload wl = WorkloadOf(call, x, w);
  const int64_t channels = RoundUp(wl.c, topi::x86::kVnniLanes);
  const int64_t taps = RoundUp(wl.s, topi::x86::kVnniDepth);
  int64_t block = topi::x86::kVnniLanes;
  std::optional<int64_t> data_block = graph::DataLayoutBlock(context.OperandLayout(0));
  if (channels == wl.c && data_block && *data_block > 0 &&
      *data_block % topi::x86::kVnniLanes == 0 &&
      channels % *data_block == 0) {
    block = *data_block;
  }
  Expr data = BlockedData(context, unsigned_data, wl.c, channels, block,
                          static_cast<double>(unsigned_data.zero_point));
  // [C, 1, R, S] -> [C', 1, R, taps] (zero filters and taps) -> [C'/b, R, taps/4, b, 4]
  const Ints pad_width = {0, 0, 0, 0, channels - wl.c, 0, 0, taps - wl.s};
  Expr kernel = MakeCall("nn.pad", {context.Operand(1, "")}, {{"pad_width", pad_width}});
  const int64_t tap_groups = taps / topi::x86::kVnniDepth;
  Expr packed = MakeCall(
      "reshape", {kernel},
      {{"newshape", Ints{channels / block, block, wl.r, tap_groups, topi::x86::kVnniDepth}}});
  packed = MakeCall("transpose", {packed}, {{"axes", Ints{0, 2, 3, 1, 4}}});

  Ints padding = call.attrs.GetInts("padding");
  padding[3] += taps - wl.s;
  wl.c = wl.k = wl.attrs.groups = channels;
  wl.s = taps;
  wl.attrs.pads[3] = padding[3];
  const Conv2DNCHWcConfig cfg = topi::x86::DepthwiseConfigWithBlock(
      wl, topi::x86::DefaultConv2DNCHWcConfig(wl), block);
  Attrs attrs = WindowAttrs(call)
                    .With("padding", padding)
                    .With("oc_tile", cfg.oc_tile)
                    .With("reg_h", cfg.reg_h)
                    .With("reg_w", cfg.reg_w)
                    .With("row_tiles_per_task", cfg.row_tiles_per_task)
                    .With("pad_value", unsigned_data.zero_point);
  Expr conv = MakeCall("nn.contrib_depthwise_conv2d_nchwc_int8", {data, packed}, attrs,
                       call.name_hint);
  if (unsigned_data.zero_point != 0) {
    const Ints blocked_shape = {1, channels / block, 1, 1, block};
    Expr share =
        MakeCall("reshape", {ZeroPointShare(kernel, Ints{1, 2, 3}, unsigned_data.zero_point)},
                 {{"newshape", blocked_shape}});
    conv = MakeCall("subtract", {conv, share}, {}, call.name_hint);
  }
  return WithOutChannels(conv, block, channels, w[0]);
}

// qnn.conv2d of uint8 or int8 data and a constant int8 weight (zero point 0; groups 1, a
// depthwise one is RewriteIntegerDepthwise's) -> an int8 kernel that multiplies unsigned by
// signed bytes: int8 data is shifted by 128 into uint8, its zero point with it. The kernels pad the border with the zero point and sum
// data * weight, so the zero point's share, zero_point * sum(weight) per filter, is
// subtracted after them (a constant FoldConstant computes).
//   - On AMX tiles (topi::x86::conv2d_nchwc_amx_int8) where the CPU has amx-int8 and the
//     channels and filters are multiples of 32: NCHW32c in and out, as the bf16 kernel.
//   - Else the AVX-512 VNNI kernel (topi::x86::conv2d_nchwc_int8, DotProductConv2D): channels
//     padded to a multiple of 4 (with the zero point; the weight with zeros), filters to a
//     multiple of 8 or 16.
std::optional<LayoutRewrite> RewriteIntegerConv2D(const CallNode& call,
                                                  LayoutRewriteContext& context,
                                                  const Target& target) {
  std::optional<ByteOperand> unsigned_data = VnniOperands(call, target);
  if (!unsigned_data) return std::nullopt;
  if (call.attrs.GetInt("groups") != 1) {
    if (!HasIntegerDepthwiseKernel(call, target)) return std::nullopt;
    return RewriteIntegerDepthwise(call, context, *unsigned_data);
  }
  const int64_t zero_point = unsigned_data->zero_point;
  const std::vector<int64_t> x = *call.args[0].type().ConstShape();
  const std::vector<int64_t> w = *call.args[1].type().ConstShape();
  const Conv2DWorkload wl = WorkloadOf(call, x, w);
  // Channels padded to 32 measured slower (MobileNetV2's 16, 24 and 144: 3.7 -> 5.3 ms, 1
  // thread): the padding and the conversions around cost more than the tiles gain. Padded
  // filters would be sliced off after, which keeps the epilogue out of the kernel
  // (MobileNetV2's 16- and 24-filter layers on VNNI instead: 2.9 -> 2.7 ms, 2 threads).
  DotConv2DCall dot;
  if (target.HasFeature("amx-int8") && wl.c % topi::x86::kAmxDepth == 0 &&
      wl.k % topi::x86::kAmxBlockColumns == 0) {
    dot.block = topi::x86::kAmxBlockColumns;
    dot.filters = wl.k;
    dot.kernel = context.Operand(1, "");
    Expr data = BlockedData(context, *unsigned_data, wl.c, wl.c, topi::x86::kAmxDepth,
                            static_cast<double>(zero_point));
    Expr packed = MakeCall("nn.contrib_amx_int8_weight_pack", {dot.kernel});
    dot.conv = MakeCall("nn.contrib_conv2d_nchwc_amx_int8", {data, packed},
                        WindowAttrs(call).With("pad_value", zero_point), call.name_hint);
  } else {
    dot = DotProductConv2D(call, context, target, topi::x86::kVnniDepth,
                           "nn.contrib_conv2d_nchwc_int8",
                           *unsigned_data, static_cast<double>(zero_point),
                           {{"pad_value", zero_point}});
  }
  Expr conv = dot.conv;
  if (zero_point != 0) {
    const Ints blocked_shape = {1, dot.filters / dot.block, 1, 1, dot.block};
    Expr share = MakeCall("reshape", {ZeroPointShare(dot.kernel, Ints{1, 2, 3}, zero_point)},
                          {{"newshape", blocked_shape}});
    conv = MakeCall("subtract", {conv, share}, {}, call.name_hint);
  }
  return WithOutChannels(conv, dot.block, dot.filters, w[0]);
}
}  // namespace


Expr PackedDense(const Expr& data, const Expr& weight, int64_t n,
                 const topi::x86::DenseConfig& config, const std::string& name) {
  Expr packed =
      MakeCall("nn.contrib_dense_pack", {weight}, {{"tile_columns", config.tile_columns}});
  return MakeCall("nn.contrib_dense_packed", {data, packed},
                  {{"units", n},
                   {"tile_rows", config.tile_rows},
                   {"block_columns", config.block_columns},
                   {"block_bytes", config.block_bytes},
                   {"k_unroll", config.k_unroll}},
                  name);
}

Expr PadAxisEnd(Expr value, size_t rank, size_t axis, int64_t amount, double pad_value) {
  if (amount == 0) return value;
  Ints pad_width(2 * rank, 0);
  pad_width[rank + axis] = amount;
  return MakeCall("nn.pad", {std::move(value)},
                  {{"pad_width", pad_width}, {"pad_value", pad_value}});
}

AmxDenseRows AmxDenseRowsOf(const std::vector<int64_t>& x) {
  const int64_t m = x[x.size() - 2];
  int64_t all = 1;
  for (size_t d = 0; d + 1 < x.size(); ++d) all *= x[d];
  if (m < topi::x86::kAmxMaxRows && all > m) return {true, all};
  return {false, m};
}

Expr AmxDense(const std::string& op, const std::string& pack_op, int64_t depth, Expr data,
              Expr weight, const std::vector<int64_t>& x, int64_t n, double pad_value,
              const std::string& name,
              const std::function<Expr(const Expr& product, const Expr& weight)>& adjust) {
  constexpr int64_t kBlock = topi::x86::kAmxBlockColumns;
  const AmxDenseRows view = AmxDenseRowsOf(x);
  const int64_t rows = view.rows, k = x.back();
  if (view.flatten) data = MakeCall("reshape", {data}, {{"newshape", Ints{rows, k}}});
  const size_t rank = view.flatten ? 2 : x.size();
  const int64_t padded_k = RoundUp(k, depth), padded_n = RoundUp(n, kBlock);
  const int64_t padded_rows =
      topi::x86::ChooseAmxRowTiling(rows).block() >= std::min<int64_t>(rows, 8)
          ? rows
          : RoundUp(rows, topi::x86::kAmxMaxRows);
  data = PadAxisEnd(PadAxisEnd(data, rank, rank - 1, padded_k - k, pad_value), rank, rank - 2,
                    padded_rows - rows, pad_value);
  weight = PadAxisEnd(PadAxisEnd(weight, 2, 1, padded_k - k), 2, 0, padded_n - n);
  Expr product = MakeCall(op, {data, MakeCall(pack_op, {weight})}, {}, name);
  if (adjust) product = adjust(product, weight);
  if (padded_rows != rows || padded_n != n) {
    const auto last = static_cast<int64_t>(rank - 1);
    product =
        MakeCall("strided_slice", {product},
                 {{"begin", Ints{0, 0}}, {"end", Ints{rows, n}}, {"axes", Ints{last - 1, last}}});
  }
  if (view.flatten) {
    Ints shape(x.begin(), x.end());
    shape.back() = n;
    product = MakeCall("reshape", {product}, {{"newshape", shape}});
  }
  return product;
}

namespace {

// The fewest rows of data (as AmxDenseRowsOf counts them) an int8 dense layer takes to AMX
// tiles. With one row both GEMMs stream the weight at the same rate (MobileNetV2's
// classifier: 0.057 ms on tiles, 0.048 ms on VNNI with its requantization fused); from two
// rows on, each weight tile serves several.
constexpr int64_t kAmxInt8DenseMinRows = 2;

// qnn.dense of 8-bit data and a constant int8 weight [N, K] (zero point 0), the data as
// RewriteIntegerConv2D takes it (uint8), the zero point's share subtracted after ->
//   - where the CPU has amx-int8 and the GEMM would tile kAmxInt8DenseMinRows rows or more:
//     the AMX GEMM (topi::x86::dense_amx_int8, AmxDense);
//   - else the packed GEMM with the k loop on vpdpbusd (topi::x86::dense_packed on an int8
//     packed weight), K padded to a multiple of 4 (the data with its zero point, the weight
//     with zeros).
std::optional<LayoutRewrite> RewriteIntegerDense(const CallNode& call,
                                                 LayoutRewriteContext& context,
                                                 const Target& target) {
  std::optional<ByteOperand> unsigned_data = VnniOperands(call, target);
  if (!unsigned_data) return std::nullopt;
  const int64_t zero_point = unsigned_data->zero_point;
  const std::vector<int64_t> x = *call.args[0].type().ConstShape();
  const int64_t n = (*call.args[1].type().ConstShape())[0], k = x.back();
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < x.size(); ++d) rows *= x[d];
  Expr data = (*unsigned_data)(context.Operand(0, ""));
  Expr weight = context.Operand(1, "");
  if (target.HasFeature("amx-int8") && x.size() >= 2 &&
      AmxDenseRowsOf(x).rows >= kAmxInt8DenseMinRows) {
    // The zero point's share subtracted before the slice, so that it joins the GEMM's kernel.
    auto subtract_share = [&](const Expr& product, const Expr& padded_weight) {
      if (zero_point == 0) return product;
      return Expr(MakeCall("subtract",
                           {product, ZeroPointShare(padded_weight, Ints{1}, zero_point)}, {},
                           call.name_hint));
    };
    return LayoutRewrite{AmxDense("nn.contrib_dense_amx_int8", "nn.contrib_amx_int8_weight_pack",
                                  topi::x86::kAmxInt8DenseDepth, data, weight, x, n,
                                  static_cast<double>(zero_point), call.name_hint, subtract_share),
                         ""};
  }
  const int64_t padded_k = RoundUp(k, topi::x86::kVnniDepth);
  if (padded_k != k) {
    Ints data_pad(2 * x.size(), 0);
    data_pad.back() = padded_k - k;
    data = MakeCall("nn.pad", {data},
                    {{"pad_width", data_pad}, {"pad_value", static_cast<double>(zero_point)}});
    weight = MakeCall("nn.pad", {weight}, {{"pad_width", Ints{0, 0, 0, padded_k - k}}});
  }
  Expr product = PackedDense(data, weight, n, topi::x86::DefaultDenseConfig(rows, n, padded_k),
                             call.name_hint);
  if (zero_point != 0) {
    product = MakeCall("subtract", {product, ZeroPointShare(weight, Ints{1}, zero_point)}, {},
                       call.name_hint);
  }
  return LayoutRewrite{product, ""};
}

// The row count a dense layer's tiling is chosen for when it is a size only a run knows
// (one row dimension symbolic, the others 1: a sequence length): several row tiles' worth,
// so that the tiling is the one for many rows, which a run at a short length still fits.
constexpr int64_t kRowsOfASymbolicCount = 64;

// The rows of dense data [..., M, K] (its dimensions before K multiplied): constant, or
// kRowsOfASymbolicCount where one of them is symbolic and the others 1; nullopt otherwise.
std::optional<int64_t> DenseRows(const graph::Type& data) {
  int64_t rows = 1;
  int symbolic = 0;
  const std::vector<PrimExpr>& shape = data.shape();
  for (size_t d = 0; d + 1 < shape.size(); ++d) {
    int64_t extent = 0;
    if (!IsConstInt(shape[d], &extent)) {
      ++symbolic;
    } else if (extent <= 0) {
      return std::nullopt;
    } else {
      rows *= extent;
    }
  }
  int64_t k = 0;
  if (!IsConstInt(shape.back(), &k) || k <= 0 || symbolic > 1 || (symbolic == 1 && rows != 1)) {
    return std::nullopt;
  }
  return symbolic == 1 ? kRowsOfASymbolicCount : rows;
}

// nn.dense(x, W) with a constant float32 weight W [N, K] -> the packed-panel GEMM
// (PackedDense) with the tuned tiling, else topi's default for the shape. Data of a symbolic
// row count (DenseRows) takes the default for kRowsOfASymbolicCount rows.
std::optional<LayoutRewrite> RewriteDense(const CallNode& call, LayoutRewriteContext& context,
                                          const Target& target) {
  const graph::Type& data = call.args[0].type();
  const graph::Type& weight = call.args[1].type();
  const std::optional<std::vector<int64_t>> w = weight.ConstShape();
  if (!HasBlockedKernels(target) || data.dtype() != DataType::Float(32) ||
      weight.dtype() != DataType::Float(32) || data.ndim() < 2 || !w || !PositiveShape(*w) ||
      !IsConstantExpr(call.args[1])) {
    return std::nullopt;
  }
  const std::optional<int64_t> counted = DenseRows(data);
  if (!counted) return std::nullopt;
  const int64_t rows = *counted, n = (*w)[0], k = (*w)[1];
  const std::optional<topi::Config> tuned =
      data.ConstShape() ? graph::QueryTunedConfig(target, DenseTuningWorkload(rows, n, k))
                        : std::nullopt;
  topi::x86::DenseConfig config = tuned ? topi::x86::DenseConfigFrom(rows, n, k, *tuned)
                                        : topi::x86::DefaultDenseConfig(rows, n, k);
  return LayoutRewrite{PackedDense(context.Operand(0, ""), call.args[1], n, config, call.name_hint),
                       ""};
}

}  // namespace

bool FitsDotMatmul(const CallNode& call) {
  std::optional<std::vector<int64_t>> x = call.args[0].type().ConstShape();
  std::optional<std::vector<int64_t>> w = call.args[1].type().ConstShape();
  if (!x || !w || !PositiveShape(*x) || !PositiveShape(*w) || x->size() < 2 ||
      x->size() != w->size()) {
    return false;
  }
  const size_t batch = x->size() - 2;
  return std::equal(x->begin(), x->begin() + static_cast<std::ptrdiff_t>(batch), w->begin()) &&
         x->back() == (*w)[batch] && w->back() % topi::x86::kVnniLanes == 0;
}

namespace {

// A qnn.matmul the VNNI batched product takes: 8-bit operands the dot-product kernel fits
// (FitsDotMatmul), on a CPU with VNNI.
bool FitsIntegerMatmul(const CallNode& call, const Target& target) {
  auto is_byte = [](DataType t) { return t == DataType::UInt(8) || t == DataType::Int(8); };
  return HasBlockedKernels(target) && target.HasFeature("avx512vnni") &&
         is_byte(call.args[0].type().dtype()) && is_byte(call.args[1].type().dtype()) &&
         FitsDotMatmul(call);
}

// The products FoldQuantizedProducts makes only where a kernel computes them (graph::
// HasIntegerKernel): depthwise convolutions and batched products of activations.
bool HasOptionalIntegerKernel(const CallNode& product, const Target& target) {
  if (product.op->name == "qnn.conv2d") return HasIntegerDepthwiseKernel(product, target);
  return product.op->name == "qnn.matmul" && FitsIntegerMatmul(product, target);
}

// qnn.matmul of two 8-bit activations -> topi::x86::batch_matmul_dot: a as uint8 and b as
// int8 (ByteOperand), b packed when the product runs (nn.contrib_batch_matmul_dot_pack,
// which pads K with zeros; a is padded with zeros too). The kernel sums a * b; the zero
// points' shares follow it, from sums over K that run as small reductions:
//   sum (a - za)(b - zb) = sum a b - zb sum_k a - za sum_k b + K za zb.
std::optional<LayoutRewrite> RewriteIntegerMatmul(const CallNode& call,
                                                  LayoutRewriteContext& context,
                                                  const Target& target) {
  if (!FitsIntegerMatmul(call, target)) return std::nullopt;
  const std::vector<int64_t> x = *call.args[0].type().ConstShape();
  const size_t rank = x.size();
  const int64_t k = x.back();
  const ByteOperand a_operand = AsByteOperand(call.args[0].type().dtype(), DataType::UInt(8),
                                              call.attrs.GetInt("a_zero_point"));
  const ByteOperand b_operand = AsByteOperand(call.args[1].type().dtype(), DataType::Int(8),
                                              call.attrs.GetInt("b_zero_point"));
  Expr a = a_operand(context.Operand(0, ""));
  Expr b = b_operand(context.Operand(1, ""));
  Expr padded_a = PadAxisEnd(a, rank, rank - 1, RoundUp(k, topi::x86::kVnniDepth) - k);
  Expr product =
      MakeCall("nn.contrib_batch_matmul_dot",
               {padded_a, MakeCall("nn.contrib_batch_matmul_dot_pack", {b})}, {}, call.name_hint);
  const int64_t za = a_operand.zero_point, zb = b_operand.zero_point;
  const DataType i32 = DataType::Int(32);
  auto share = [&](const Expr& operand, int64_t axis, int64_t zero_point) {
    Expr wide = MakeCall("cast", {operand}, {{"dtype", std::string("int32")}});
    Expr sums = MakeCall("sum", {wide}, {{"axis", Ints{axis}}, {"keepdims", int64_t{1}}});
    return MakeCall("multiply", {sums, graph::MakeScalarConstant(double(zero_point), i32)});
  };
  if (zb != 0) {
    product = MakeCall("subtract", {product, share(a, int64_t(rank) - 1, zb)}, {}, call.name_hint);
  }
  if (za != 0) {
    product = MakeCall("subtract", {product, share(b, int64_t(rank) - 2, za)}, {}, call.name_hint);
  }
  if (za != 0 && zb != 0) {
    product = MakeCall("add", {product, graph::MakeScalarConstant(double(k * za * zb), i32)}, {},
                       call.name_hint);
  }
  return LayoutRewrite{product, ""};
}

[[maybe_unused]] const bool kRegistered = [] {
  graph::RegisterHalfPrecisionProducts("x86", DataType::BFloat16(), HasBf16Products);
  graph::RegisterIntegerKernel("x86", HasOptionalIntegerKernel);
  graph::RegisterLayoutRewrite("nn.conv2d", "x86", RewriteBf16Conv2D);
  graph::RegisterLayoutRewrite("nn.dense", "x86", RewriteBf16Dense);
  graph::RegisterLayoutRewrite("nn.matmul", "x86", RewriteBf16Matmul);
  graph::RegisterLayoutRewrite("nn.batch_matmul", "x86", RewriteBf16Matmul);
  graph::RegisterLayoutRewrite("nn.conv2d", "x86", RewriteConv2D);
  graph::RegisterLayoutRewrite("qnn.conv2d", "x86", RewriteIntegerConv2D);
  graph::RegisterLayoutRewrite("qnn.dense", "x86", RewriteIntegerDense);
  graph::RegisterLayoutRewrite("qnn.matmul", "x86", RewriteIntegerMatmul);
  // Dense data of a symbolic row count (a sequence length) takes the packed GEMM too.
  graph::RegisterLayoutRewrite("nn.dense", "x86", RewriteDense, graph::RewriteShapes::kSymbolicToo);
  return true;
}();

}  // namespace
}  // namespace loom::strategy::x86
