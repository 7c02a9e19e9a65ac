// Direct and depthwise conv2d in the blocked NCHW[x]c layouts, and their x86 schedule.
//
// The schedule is a register-blocked direct convolution: each task owns rows of output of
// a few channel blocks (depthwise: a block of rows of every channel block), and per tile of (channel blocks x rows x columns) the accumulators
// stay in zmm registers over the whole reduction. Every multiply-add is one input value
// broadcast (an embedded-broadcast memory operand) times a vector of 16 weights, so the
// inner loop needs one weight load per channel block and one broadcast per position.
#include "loom/topi/x86/conv2d.h"

#include <sstream>
#include <string>

#include "loom/topi/transform.h"
#include "loom/topi/x86/tensor_intrinsics.h"
#include "topi/topi_util.h"
#include "topi/x86/padded_input.h"

namespace loom::topi::x86 {

namespace {

using detail::ConstShape;
using detail::HasPadding;
using detail::LikelyInside;
using detail::PaddedInput;
using detail::PadSpatial;

void CheckBlockedFloat(const std::string& op, const te::Tensor& data, const te::Tensor& weight) {
  LOOM_CHECK_USER(data.ndim() == 5 && weight.ndim() == 6)
      << op << ": data '" << data.name() << "' must be 5-d (NCHW[x]c) and weight '"
      << weight.name() << "' 6-d (OIHW[x]i[y]o), got " << data.ndim() << "-d and "
      << weight.ndim() << "-d";
  LOOM_CHECK_USER(data.dtype() == weight.dtype() && data.dtype().is_float())
      << op << ": data and weight must share one float type, got " << data.dtype().str()
      << " and " << weight.dtype().str();
}

// The int8 convolutions' operands: 5-d uint8 data, an int8 weight of `weight_rank`
// dimensions (`layout`), a uint8 border value.
void CheckBlockedInt8(const std::string& op, const te::Tensor& data, const te::Tensor& weight,
                      int weight_rank, const std::string& layout, int64_t pad_value) {
  LOOM_CHECK_USER(data.ndim() == 5 && weight.ndim() == weight_rank &&
                  data.dtype() == DataType::UInt(8) && weight.dtype() == DataType::Int(8))
      << op << ": data '" << data.name() << "' must be 5-d uint8 (NCHW[x]c) and weight '"
      << weight.name() << "' " << weight_rank << "-d int8 (" << layout << "), got "
      << data.ndim() << "-d " << data.dtype().str() << " and " << weight.ndim() << "-d "
      << weight.dtype().str();
  LOOM_CHECK_USER(pad_value >= 0 && pad_value <= 255)
      << op << ": the pad value " << pad_value << " is not a uint8";
}

}  // namespace

te::Tensor conv2d_nchwc(const te::Tensor& data, const te::Tensor& weight, const Conv2DAttrs& a) {
  const std::string op = "conv2d_nchwc";
  CheckBlockedFloat(op, data, weight);
  std::vector<int64_t> in = ConstShape(data, op), w = ConstShape(weight, op);
  // Grouped: each group's input and output channels are whole blocks, so an output block
  // reads the input blocks of its own group only.
  const int64_t groups = a.groups;
  LOOM_CHECK_USER(groups >= 1 && w[0] % groups == 0)
      << op << ": groups must be positive and divide the " << w[0]
      << " output channel blocks, got " << groups
      << " (depthwise_conv2d_nchwc takes groups = channels)";
  LOOM_CHECK_USER(w[1] * groups == in[1] && w[4] == in[4])
      << op << ": weight '" << weight.name() << "' " << detail::ShapeText(w)
      << " must have the data's input channel blocks per group: " << in[1] << " blocks of "
      << in[4] << " in " << groups << " group(s) (data '" << data.name() << "' "
      << detail::ShapeText(in) << ")";
  const int64_t group_out_blocks = w[0] / groups, group_in_blocks = w[1];
  const int64_t r = w[2], s = w[3];
  detail::Conv2DOutputSize out = detail::CheckedConv2DOutputSize(op, in[2], in[3], r, s, a);
  PaddedInput padded = PadSpatial(data, a);
  IterVar rco = te::reduce_axis(Range(0, int(group_in_blocks)), "rco");
  IterVar rr = te::reduce_axis(Range(0, int(r)), "rr");
  IterVar rs = te::reduce_axis(Range(0, int(s)), "rs");
  IterVar rci = te::reduce_axis(Range(0, int(in[4])), "rci");
  return te::compute(
      {int(in[0]), int(w[0]), int(out.p), int(out.q), int(w[5])},
      [&](const Array<Var>& i) {
        PrimExpr row = i[2] * int(a.strides[0]) + rr->var * int(a.dilations[0]);
        PrimExpr column = i[3] * int(a.strides[1]) + rs->var * int(a.dilations[1]);
        PrimExpr in_block = rco->var;
        if (groups > 1) {
          in_block = floordiv(i[1], int(group_out_blocks)) * int(group_in_blocks) + rco->var;
        }
        return te::sum(padded(i[0], in_block, row, column, rci->var) *
                           weight(i[1], rco->var, rr->var, rs->var, rci->var, i[4]),
                       {rco, rr, rs, rci});
      },
      op, "conv2d_nchwc");
}

te::Tensor depthwise_conv2d_nchwc(const te::Tensor& data, const te::Tensor& weight,
                                  const Conv2DAttrs& a) {
  const std::string op = "depthwise_conv2d_nchwc";
  CheckBlockedFloat(op, data, weight);
  std::vector<int64_t> in = ConstShape(data, op), w = ConstShape(weight, op);
  LOOM_CHECK_USER(w[0] == in[1] && w[1] == 1 && w[4] == 1 && w[5] == in[4])
      << op << ": weight '" << weight.name() << "' " << detail::ShapeText(w) << " must be ["
      << in[1] << ", 1, R, S, 1, " << in[4] << "] (one filter per channel of data '"
      << data.name() << "' " << detail::ShapeText(in) << ")";
  LOOM_CHECK_USER(a.groups == in[1] * in[4])
      << op << ": groups must equal the " << in[1] * in[4] << " channels, got " << a.groups;
  const int64_t r = w[2], s = w[3];
  detail::Conv2DOutputSize out = detail::CheckedConv2DOutputSize(op, in[2], in[3], r, s, a);
  IterVar rr = te::reduce_axis(Range(0, int(r)), "rr");
  IterVar rs = te::reduce_axis(Range(0, int(s)), "rs");
  return te::compute(
      {int(in[0]), int(in[1]), int(out.p), int(out.q), int(in[4])},
      [&](const Array<Var>& i) {
        PrimExpr row = i[2] * int(a.strides[0]) + rr->var * int(a.dilations[0]) - int(a.pads[0]);
        PrimExpr column =
            i[3] * int(a.strides[1]) + rs->var * int(a.dilations[1]) - int(a.pads[1]);
        PrimExpr value = data(i[0], i[1], row, column, i[4]);
        if (HasPadding(a)) {
          value = te::if_then_else(LikelyInside(row, in[2], column, in[3]), value,
                                   make_const(data.dtype(), 0.0));
        }
        return te::sum(value * weight(i[1], 0, rr->var, rs->var, 0, i[4]),
                       {rr, rs});
      },
      op, "depthwise_conv2d_nchwc");
}

te::Tensor pack_conv2d_weight_dot(const te::Tensor& weight, int64_t ic_bn, int64_t oc_bn) {
  const std::string op = "pack_conv2d_weight_dot";
  std::vector<int64_t> w = ConstShape(weight, op);
  const bool typed = IsDotProductWeight(weight.dtype());
  const int depth = typed ? DotProductDepth(weight.dtype()) : 1;
  LOOM_CHECK_USER(typed && w.size() == 4 && ic_bn > 0 && ic_bn % depth == 0 && oc_bn > 0 &&
                  w[0] % oc_bn == 0 && w[1] % ic_bn == 0)
      << op << ": the weight '" << weight.name() << "' " << weight.dtype().str() << " "
      << detail::ShapeText(w) << " must be int8 or bfloat16 KCRS, its K split into blocks of "
      << oc_bn << " and its C into blocks of " << ic_bn << " (a multiple of " << depth
      << ": 4 int8 or 2 bfloat16 per dot-product lane)";
  const int ib = int(ic_bn), ob = int(oc_bn);
  return te::compute(
      {int(w[0] / ob), int(w[1] / ib), int(w[2]), int(w[3]), ib / depth, ob, depth},
      [&](const Array<Var>& i) {
        return weight(i[0] * ob + i[5], i[1] * ib + i[4] * depth + i[6], i[2], i[3]);
      },
      "packed_weight", detail::kInjective);
}

namespace {

// The direct convolution on a dot-product instruction (vpdpbusd, vdpbf16ps): data
// NCHW[ic_bn]c, the weight packed by pack_conv2d_weight_dot, each output the sum in
// `sum_dtype` of data * weight over groups of DotProductDepth(data) input channels.
te::Tensor DotConv2D(const std::string& op, const te::Tensor& data, const te::Tensor& weight,
                     const Conv2DAttrs& a, int64_t pad_value, DataType sum_dtype) {
  const int depth = DotProductDepth(data.dtype());
  std::vector<int64_t> in = ConstShape(data, op), w = ConstShape(weight, op);
  LOOM_CHECK_USER(a.groups == 1 && w[1] == in[1] && w[4] * depth == in[4] && w[6] == depth &&
                  (w[5] % kVnniLanes == 0 || w[5] == kVnniLanes / 2))
      << op << ": weight '" << weight.name() << "' " << detail::ShapeText(w)
      << " must be [K / oc_bn, " << in[1] << ", R, S, " << in[4] / depth << ", oc_bn, "
      << depth << "] with oc_bn 8 or a multiple of " << kVnniLanes << " for data '" << data.name()
      << "' " << detail::ShapeText(in) << " (groups must be 1, got " << a.groups << ")";
  const int64_t r = w[2], s = w[3];
  detail::Conv2DOutputSize out = detail::CheckedConv2DOutputSize(op, in[2], in[3], r, s, a);
  PaddedInput padded = PadSpatial(data, a, pad_value);
  IterVar rco = te::reduce_axis(Range(0, int(w[1])), "rco");
  IterVar rr = te::reduce_axis(Range(0, int(r)), "rr");
  IterVar rs = te::reduce_axis(Range(0, int(s)), "rs");
  IterVar rcio = te::reduce_axis(Range(0, int(w[4])), "rcio");
  IterVar rcii = te::reduce_axis(Range(0, depth), "rcii");
  return te::compute(
      {int(in[0]), int(w[0]), int(out.p), int(out.q), int(w[5])},
      [&](const Array<Var>& i) {
        PrimExpr row = i[2] * int(a.strides[0]) + rr->var * int(a.dilations[0]);
        PrimExpr column = i[3] * int(a.strides[1]) + rs->var * int(a.dilations[1]);
        PrimExpr lane = rcio->var * depth + rcii->var;
        return te::sum(cast(sum_dtype, padded(i[0], rco->var, row, column, lane)) *
                           cast(sum_dtype, weight(i[1], rco->var, rr->var, rs->var, rcio->var,
                                                  i[4], rcii->var)),
                       {rco, rr, rs, rcio, rcii});
      },
      op, op);
}

}  // namespace

te::Tensor conv2d_nchwc_int8(const te::Tensor& data, const te::Tensor& weight,
                             const Conv2DAttrs& a, int64_t pad_value) {
  const std::string op = "conv2d_nchwc_int8";
  CheckBlockedInt8(op, data, weight, 7, "OIHW[x/4]i[y]o4i", pad_value);
  return DotConv2D(op, data, weight, a, pad_value, DataType::Int(32));
}

te::Tensor conv2d_nchwc_dpbf16(const te::Tensor& data, const te::Tensor& weight,
                               const Conv2DAttrs& a) {
  const std::string op = "conv2d_nchwc_dpbf16";
  LOOM_CHECK_USER(data.ndim() == 5 && weight.ndim() == 7 && data.dtype() == DataType::BFloat16() &&
                  weight.dtype() == DataType::BFloat16())
      << op << ": data '" << data.name() << "' must be 5-d bfloat16 (NCHW[x]c) and weight '"
      << weight.name() << "' 7-d bfloat16 (OIHW[x/2]i[y]o2i), got " << data.ndim() << "-d "
      << data.dtype().str() << " and " << weight.ndim() << "-d " << weight.dtype().str();
  return DotConv2D(op, data, weight, a, 0, DataType::Float(32));
}

te::Tensor depthwise_conv2d_nchwc_int8(const te::Tensor& data, const te::Tensor& weight,
                                       const Conv2DAttrs& a, int64_t pad_value) {
  const std::string op = "depthwise_conv2d_nchwc_int8";
  CheckBlockedInt8(op, data, weight, 5, "[c, R, S/4, x, 4]", pad_value);
  std::vector<int64_t> in = ConstShape(data, op), w = ConstShape(weight, op);
  LOOM_CHECK_USER(in[4] % kVnniLanes == 0 && w[0] == in[1] && w[3] == in[4] &&
                  w[4] == kVnniDepth)
      << op << ": weight '" << weight.name() << "' " << detail::ShapeText(w) << " must be ["
      << in[1] << ", R, S/4, " << in[4] << ", " << kVnniDepth << "] for data '" << data.name()
      << "' " << detail::ShapeText(in) << ", whose channel block must be a multiple of "
      << kVnniLanes;
  LOOM_CHECK_USER(a.groups == in[1] * in[4] && a.dilations[1] == 1)
      << op << ": groups must equal the " << in[1] * in[4]
      << " channels and the column dilation be 1, got " << a.groups << " and "
      << a.dilations[1];
  const int64_t r = w[1], s = w[2] * kVnniDepth;
  detail::Conv2DOutputSize out = detail::CheckedConv2DOutputSize(op, in[2], in[3], r, s, a);
  // Padded in the blocked layout (not as rows of columns x lanes): a vpdpbusd reads 4 whole
  // columns of a channel block, the [4, 16] tile tensorize binds.
  PaddedInput padded = PadSpatial(data, a, pad_value, /*columns_and_lanes_one_axis=*/false);
  IterVar rr = te::reduce_axis(Range(0, int(r)), "rr");
  IterVar rg = te::reduce_axis(Range(0, int(w[2])), "rg");
  IterVar rj = te::reduce_axis(Range(0, kVnniDepth), "rj");
  const DataType i32 = DataType::Int(32);
  return te::compute(
      {int(in[0]), int(in[1]), int(out.p), int(out.q), int(in[4])},
      [&](const Array<Var>& i) {
        PrimExpr row = i[2] * int(a.strides[0]) + rr->var * int(a.dilations[0]);
        PrimExpr column = i[3] * int(a.strides[1]) + rg->var * kVnniDepth + rj->var;
        return te::sum(cast(i32, padded(i[0], i[1], row, column, i[4])) *
                           cast(i32, weight(i[1], rr->var, rg->var, i[4], rj->var)),
                       {rr, rg, rj});
      },
      op, "depthwise_conv2d_nchwc_int8");
}

namespace {

// The direct convolutions on a dot-product instruction: 16 (or 8) output channels by a group
// of input channels per tensorized step.
bool IsDotConv(const te::Operation& op) {
  return op->tag == "conv2d_nchwc_int8" || op->tag == "conv2d_nchwc_dpbf16";
}

bool IsBlockedConv(const te::Operation& op) {
  return op->tag == "conv2d_nchwc" || op->tag == "depthwise_conv2d_nchwc" || IsDotConv(op) ||
         op->tag == "depthwise_conv2d_nchwc_int8";
}

}  // namespace

te::Schedule schedule_conv2d_nchwc(const te::Tensor& out, const Conv2DNCHWcConfig& config) {
  const std::string name = "schedule_conv2d_nchwc";
  te::Operation conv = detail::FindAnchor(out, IsBlockedConv, name,
                                          "a conv2d_nchwc / depthwise_conv2d_nchwc output");
  const bool depthwise =
      conv->tag == "depthwise_conv2d_nchwc" || conv->tag == "depthwise_conv2d_nchwc_int8";
  // Tensorized: the reduction's innermost group is the intrinsic's.
  const bool dot = IsDotConv(conv) || conv->tag == "depthwise_conv2d_nchwc_int8";
  detail::CheckEpilogueKeepsShape(out, conv, name);
  std::vector<int64_t> shape = ConstShape(te::Tensor(conv, 0), name);  // N, c, P, Q, bn
  const int64_t bn = shape[4];
  const int64_t lanes = bn % detail::kAvx512Lanes == 0 ? detail::kAvx512Lanes : bn;
  LOOM_CHECK_USER(config.oc_tile > 0 && shape[1] % config.oc_tile == 0 && config.reg_h > 0 &&
                  shape[2] % config.reg_h == 0 && config.reg_w > 0 &&
                  shape[3] % config.reg_w == 0 && config.row_tiles_per_task > 0 &&
                  (shape[2] / config.reg_h) % config.row_tiles_per_task == 0 &&
                  (depthwise ? config.oc_tile == 1 : config.row_tiles_per_task == 1))
      << name << ": " << config.str() << " does not tile the output " << detail::ShapeText(shape)
      << ": oc_tile must divide " << shape[1] << (depthwise ? " (and be 1 for depthwise)" : "")
      << ", reg_h " << shape[2] << ", reg_w " << shape[3] << ", and row_tiles_per_task the "
      << "row tiles" << (depthwise ? "" : " (and be 1 but for depthwise)");

  te::Schedule s = te::create_schedule({out.op()});
  // A direct convolution's padded input (if any) is materialized, not inlined: inlined, it
  // would put a bounds test on every multiply-add, and the convolution reads each input row
  // for every channel block and kernel row, so it is padded once, up front. A depthwise
  // convolution does little work per input element, so a padded copy costs as much as the
  // convolution (a whole copy made stride-2 layers 2x oneDNN's time, per-task copies of the
  // rows a task reads 1.3-2x on 2 threads): it reads its input in place, with likely()
  // bounds (depthwise_conv2d_nchwc) that LoopPartition peels off the border rows and column
  // tiles. That needs each task's rows to be a linear function of the parallel loop: the
  // tasks are blocks of rows, each over all channel blocks. The int8 depthwise convolution
  // with a border pads a copy all the same (each vpdpbusd reads 4 columns at once, which a
  // bounds test per column would break up), of the rows each task and channel block reads,
  // where it reads them (below).
  te::Tensor conv_data = conv->InputTensors()[0];
  const bool padded = conv_data.op()->tag == detail::kInjective && conv_data.op()->name == "pad";
  detail::InlineInjective(s, {out.op(), conv_data.op()});
  te::Operation acc = detail::RegisterTile(s, out, conv).op();

  te::Stage o = s[out];
  Array<IterVar> axes = o->leaf_iter_vars;  // n, c, p, q, b
  auto [chunk_outer, chunk_tile] = o.split(axes[1], int(config.oc_tile));
  auto [row_outer, row_tile] = o.split(axes[2], int(config.reg_h));
  auto [column_outer, column_tile] = o.split(axes[3], int(config.reg_w));
  auto [vector, lane] = o.split(axes[4], int(lanes));
  IterVar task;
  if (depthwise) {
    auto [row_block, row_in_block] = o.split(row_outer, int(config.row_tiles_per_task));
    o.reorder({row_block, axes[0], chunk_outer, row_in_block, column_outer, chunk_tile, row_tile,
               column_tile, vector, lane});
    task = row_block;
  } else {
    o.reorder({axes[0], chunk_outer, row_outer, column_outer, chunk_tile, row_tile, column_tile,
               vector, lane});
    task = o.fuse(o.fuse(axes[0], chunk_outer), row_outer);
  }
  o.parallel(task);
  // Constant offsets into the tile everywhere (unrolled copy-out), or LLVM keeps it in memory.
  o.unroll(chunk_tile);
  o.unroll(row_tile);
  o.unroll(column_tile);
  o.unroll(vector);
  o.vectorize(lane);
  s[acc].compute_at(o, column_outer);

  te::Stage t = s[acc];
  Array<IterVar> tile = t->leaf_iter_vars;  // n, c, p, q, b, then the reduction
  auto [tile_vector, tile_lane] = t.split(tile[4], int(lanes));
  Array<IterVar> order;
  if (depthwise) {
    order = {tile[5], tile[6]};  // rr, rs (int8: rr, rg; the 4 taps of rg, rj, innermost)
  } else {
    // rco, rr, rci, rs (int8 / bf16: rci is its groups of 4 / 2 channels, rcio; each
    // group's channels, rcii, are the intrinsic's own reduction, innermost)
    order = {tile[5], tile[6], tile[8], tile[7]};
    if (!config.unroll_kw) order = {tile[5], tile[6], tile[7], tile[8]};
  }
  // Channel blocks innermost: the input value broadcast for a position serves each of them
  // back to back and dies. (Outermost, LLVM keeps every broadcast of the tile live across
  // the blocks and spills the accumulators.)
  order.insert(order.end(), {tile[0], tile[2], tile[3], tile[1], tile_vector, tile_lane});
  if (dot) order.push_back(tile[depthwise ? 7 : 9]);
  t.reorder(order);
  if (depthwise || config.unroll_kw) t.unroll(tile[6]);
  if (depthwise) t.unroll(tile[5]);
  for (int d = 0; d < 4; ++d) t.unroll(tile[d]);
  t.unroll(tile_vector);
  // 16 (or 8) output channels by 4 input channels per vpdpbusd, by 2 per vdpbf16ps
  if (dot && depthwise) t.tensorize(tile_lane, VnniTapDot16x4(bn));
  else if (dot) t.tensorize(tile_lane, DotIntrinsicFor(conv->InputTensors()[0].dtype(), int(lanes)));
  else t.vectorize(tile_lane);

  if (padded && depthwise) {
    // The int8 depthwise conv's padded rows per task and channel block, where it reads them
    // (a few KiB, in L1): the input is read from memory once, as the float kernel's is in
    // place, rather than copied there and read again. A column's block at a time: the border
    // test is the column's, so LoopPartition peels the border columns and every copy is a
    // vector.
    te::Stage p = s[conv_data.op()];
    p.compute_at(o, chunk_outer);
    p.vectorize(p->leaf_iter_vars[4]);
  } else if (padded) {
    te::Stage p = s[conv_data.op()];
    Array<IterVar> pad_axes = p->leaf_iter_vars;  // n, c, h, w * block
    p.parallel(p.fuse(p.fuse(pad_axes[0], pad_axes[1]), pad_axes[2]));
    auto [pad_vector, pad_lane] = p.split(pad_axes[3], detail::kAvx512Lanes);
    p.vectorize(pad_lane);
  }
  return s;
}

std::string Conv2DNCHWcConfig::str() const {
  std::ostringstream text;
  text << "ic_bn=" << ic_bn << " oc_bn=" << oc_bn << " oc_tile=" << oc_tile << " reg_h=" << reg_h
       << " reg_w=" << reg_w << " unroll_kw=" << (unroll_kw ? 1 : 0)
       << " row_tiles_per_task=" << row_tiles_per_task;
  return text.str();
}

}  // namespace loom::topi::x86
