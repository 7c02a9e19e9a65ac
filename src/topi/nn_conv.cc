// Convolutions: conv2d and conv1d read a zero-padded view of the input (an injective stage,
// inlined by the NCHW schedule, materialized by the NHWC one) in one reduction over the
// group's input channels and the kernel window; conv2d_transpose gathers the inputs whose
// strided window covers each output.
#include <algorithm>
#include <string>

#include "loom/topi/nn.h"
#include "loom/topi/transform.h"
#include "topi/topi_util.h"

namespace loom::topi {

namespace {

// Output columns per register tile of conv2d_nhwc: with one 16-lane vector of output
// channels each, the accumulators, the broadcast inputs and the weight vector fit in the
// AVX-512 register file.
constexpr int kNhwcTileColumns = 4;

struct Conv2DShape {
  int64_t N, C, H, W;   // data (N: -1 where the batch is symbolic)
  int64_t K, CG, R, S;  // weight: K filters of CG channels x R x S
  int64_t P, Q;        // output rows and columns
};

// The sizes of a 2-d convolution of data [N, C, H, W] and weight [K, C / groups, R, S]
// (channels_last: data [N, H, W, C] and weight [R, S, C / groups, K]), checked for `op`; the
// batch may be symbolic where `symbolic_batch` says so (N is then -1).
Conv2DShape CheckConv2D(const te::Tensor& data, const te::Tensor& weight, const Conv2DAttrs& a,
                        const std::string& op, bool channels_last, bool symbolic_batch = false) {
  LOOM_CHECK_USER(data.ndim() == 4 && weight.ndim() == 4)
      << op << ": data '" << data.name() << "' and weight '" << weight.name() << "' must be 4-d ("
      << (channels_last ? "NHWC and HWIO" : "NCHW and KCRS") << "), got " << data.ndim()
      << "-d and " << weight.ndim() << "-d";
  // Integer convolutions (ONNX ConvInteger, QLinearConv) compute in int32, the zero points
  // already subtracted.
  LOOM_CHECK_USER(data.dtype() == weight.dtype() &&
                  (data.dtype().is_float() || data.dtype() == DataType::Int(32)))
      << op << ": data and weight must share one float type, or both be int32, got "
      << data.dtype().str() << " and " << weight.dtype().str();
  std::vector<int64_t> w = detail::ConstShape(weight, op), in(4, -1);
  for (size_t d = 0; d < 4; ++d) {
    LOOM_CHECK_USER(IsConstInt(data.shape()[d], &in[d]) || (d == 0 && symbolic_batch))
        << op << " of '" << data.name() << "': shape " << detail::ShapeText(data.shape())
        << " is symbolic; the operator needs constant sizes"
        << (symbolic_batch ? " but for the batch" : "");
  }
  Conv2DShape g{};
  if (channels_last) {
    g = {in[0], in[3], in[1], in[2], w[3], w[2], w[0], w[1], 0, 0};
  } else {
    g = {in[0], in[1], in[2], in[3], w[0], w[1], w[2], w[3], 0, 0};
  }
  LOOM_CHECK_USER(a.groups > 0 && g.C % a.groups == 0 && g.K % a.groups == 0)
      << op << ": " << g.C << " input and " << g.K << " output channels must both divide into "
      << a.groups << " groups";
  LOOM_CHECK_USER(g.CG == g.C / a.groups)
      << op << ": weight '" << weight.name() << "' has " << g.CG << " input channels per group, "
      << "but data '" << data.name() << "' has " << g.C << " channels in " << a.groups
      << " groups (expected " << g.C / a.groups << ")";
  detail::Conv2DOutputSize out = detail::CheckedConv2DOutputSize(op, g.H, g.W, g.R, g.S, a);
  g.P = out.p;
  g.Q = out.q;
  return g;
}

}  // namespace

te::Tensor conv2d_nchw(const te::Tensor& data, const te::Tensor& weight, const Conv2DAttrs& a,
                       DataType out_dtype) {
  const std::string op = "conv2d_nchw";
  Conv2DShape g = CheckConv2D(data, weight, a, op, /*channels_last=*/false,
                              /*symbolic_batch=*/true);
  const int64_t K = g.K, CG = g.CG, R = g.R, S = g.S, P = g.P, Q = g.Q;
  // A symbolic batch (the VM's models) keeps its own expression; constants are int32.
  const PrimExpr batch = g.N < 0 ? data.shape()[0] : PrimExpr(make_const(DataType::Int(32), g.N));
  te::Tensor padded = pad(data, {0, 0, a.pads[0], a.pads[1]}, {0, 0, a.pads[2], a.pads[3]});
  IterVar rc = te::reduce_axis(Range(0, int(CG)), "rc");
  IterVar rr = te::reduce_axis(Range(0, int(R)), "rr");
  IterVar rs = te::reduce_axis(Range(0, int(S)), "rs");
  const int64_t out_per_group = K / a.groups;
  return te::compute(
      {batch, int(K), int(P), int(Q)},
      [&](Var n, Var k, Var p, Var q) {
        // One group reads channel rc whatever k is: said so, not floordiv(k, K) * C + rc,
        // which a schedule's region of k past K (a guarded tile) would not fold.
        PrimExpr channel =
            a.groups == 1 ? PrimExpr(rc->var) : floordiv(k, int(out_per_group)) * int(CG) + rc->var;
        PrimExpr x = padded(n, channel, p * int(a.strides[0]) + rr->var * int(a.dilations[0]),
                            q * int(a.strides[1]) + rs->var * int(a.dilations[1]));
        PrimExpr w = weight(k, rc->var, rr->var, rs->var);
        if (!out_dtype.is_void()) x = cast(out_dtype, x), w = cast(out_dtype, w);
        return te::sum(x * w, {rc, rr, rs});
      },
      op, "conv2d_nchw");
}

te::Tensor conv2d_transpose_nchw(const te::Tensor& data, const te::Tensor& weight,
                                 const Conv2DAttrs& a, std::array<int64_t, 2> output_padding) {
  const std::string op = "conv2d_transpose_nchw";
  LOOM_CHECK_USER(data.ndim() == 4 && weight.ndim() == 4)
      << op << ": data '" << data.name() << "' and weight '" << weight.name()
      << "' must be 4-d (NCHW and CKRS), got " << data.ndim() << "-d and " << weight.ndim() << "-d";
  LOOM_CHECK_USER(data.dtype() == weight.dtype() && data.dtype().is_float())
      << op << ": data and weight must share one float type, got " << data.dtype().str()
      << " and " << weight.dtype().str();
  std::vector<int64_t> in = detail::ConstShape(data, op), w = detail::ConstShape(weight, op);
  const int64_t N = in[0], C = in[1], H = in[2], W = in[3];
  const int64_t KG = w[1], R = w[2], S = w[3];
  LOOM_CHECK_USER(a.groups > 0 && C % a.groups == 0 && w[0] == C)
      << op << ": weight '" << weight.name() << "' has " << w[0] << " input channels; data '"
      << data.name() << "' has " << C << " (which must divide into " << a.groups << " groups)";
  const int64_t K = KG * a.groups, CG = C / a.groups;
  std::array<int64_t, 2> extent{};
  for (int d = 0; d < 2; ++d) {
    LOOM_CHECK_USER(a.strides[d] > 0 && a.dilations[d] > 0 && output_padding[d] >= 0 &&
                    (output_padding[d] < a.strides[d] || output_padding[d] < a.dilations[d]))
        << op << ": strides and dilations must be positive and output_padding below the stride "
        << "or the dilation, got strides (" << a.strides[0] << ", " << a.strides[1]
        << ") output_padding (" << output_padding[0] << ", " << output_padding[1] << ")";
    int64_t in_size = d == 0 ? H : W, kernel = d == 0 ? R : S;
    extent[d] = (in_size - 1) * a.strides[d] - a.pads[d] - a.pads[d + 2] +
                a.dilations[d] * (kernel - 1) + output_padding[d] + 1;
    LOOM_CHECK_USER(a.pads[d] >= 0 && a.pads[d + 2] >= 0 && extent[d] > 0)
        << op << ": pads (" << a.pads[0] << ", " << a.pads[1] << ", " << a.pads[2] << ", "
        << a.pads[3] << ") must be non-negative and leave a non-empty output";
  }
  IterVar rc = te::reduce_axis(Range(0, int(CG)), "rc");
  IterVar rr = te::reduce_axis(Range(0, int(R)), "rr");
  IterVar rs = te::reduce_axis(Range(0, int(S)), "rs");
  DataType t = data.dtype();
  return te::compute(
      {int(N), int(K), int(extent[0]), int(extent[1])},
      [&](Var n, Var k, Var p, Var q) {
        // Input row h contributes to output row h * stride - top + r * dilation.
        PrimExpr h_scaled = p + int(a.pads[0]) - rr->var * int(a.dilations[0]);
        PrimExpr w_scaled = q + int(a.pads[1]) - rs->var * int(a.dilations[1]);
        PrimExpr h = floordiv(h_scaled, int(a.strides[0]));
        PrimExpr wc = floordiv(w_scaled, int(a.strides[1]));
        PrimExpr hits = floormod(h_scaled, int(a.strides[0])) == 0 &&
                        floormod(w_scaled, int(a.strides[1])) == 0 && h >= 0 && h < int(H) &&
                        wc >= 0 && wc < int(W);
        PrimExpr group = floordiv(k, int(KG));
        PrimExpr channel = group * int(CG) + rc->var;
        // Reads are clamped into the input: a select evaluates both sides.
        PrimExpr value = data(n, channel, detail::ClampIndex(h, int(H)), detail::ClampIndex(wc, int(W))) *
                         weight(channel, floormod(k, int(KG)), rr->var, rs->var);
        return te::sum(select(hits, value, make_zero(t)), {rc, rr, rs});
      },
      op, "conv2d_transpose_nchw");
}

namespace {

// A convolution output [N, K, spatial...] reduced over (channels, kernel...): every output
// dimension but the last fused into parallel rows, the last split into 16-lane vectors
// accumulating in a register tile over the whole reduction.
// `out` is the convolution `conv` or an elementwise epilogue of it (bias, ReLU, ...), which
// runs on each tile of accumulators before it is stored.
te::Schedule ScheduleConvolution(const te::Tensor& out, const te::Operation& conv,
                                 int vector_lanes) {
  te::Schedule s = te::create_schedule({out.op()});
  detail::InlineInjective(s, {out.op()});
  te::Tensor tile = detail::RegisterTile(s, out, conv);
  te::Stage c = s[out];
  Array<IterVar> axes = c->leaf_iter_vars;
  auto [column_vectors, lanes] = c.split(axes.back(), vector_lanes);
  Array<IterVar> order(axes.begin(), axes.end() - 1);
  order.push_back(column_vectors);
  order.push_back(lanes);
  c.reorder(order);
  IterVar rows = axes[0];
  for (size_t d = 1; d + 1 < axes.size(); ++d) rows = c.fuse(rows, axes[d]);
  c.vectorize(lanes);
  c.parallel(rows);
  s[tile].compute_at(c, column_vectors);
  // The tile's loops: the output dimensions, then the reduction; the reduction goes outside.
  Array<IterVar> tile_axes = s[tile]->leaf_iter_vars;
  size_t spatial = axes.size();
  Array<IterVar> tile_order(tile_axes.begin() + spatial, tile_axes.end());
  tile_order.insert(tile_order.end(), tile_axes.begin(), tile_axes.begin() + spatial);
  s[tile].reorder(tile_order);
  s[tile].vectorize(tile_axes[spatial - 1]);
  return s;
}

// The convolution `out` computes (itself, or through an elementwise epilogue).
te::Operation ConvolutionAnchor(const te::Tensor& out, const std::vector<std::string>& tags,
                                const std::string& schedule, const std::string& description) {
  te::Operation conv = detail::FindAnchor(
      out,
      [&](const te::Operation& op) {
        return std::find(tags.begin(), tags.end(), op->tag) != tags.end();
      },
      schedule, description);
  detail::CheckEpilogueKeepsShape(out, conv, schedule);
  return conv;
}

}  // namespace

te::Schedule schedule_conv2d_nchw(const te::Tensor& out, int vector_lanes) {
  te::Operation conv =
      ConvolutionAnchor(out, {"conv2d_nchw", "conv2d_transpose_nchw"}, "schedule_conv2d_nchw",
                        "the output of conv2d_nchw or conv2d_transpose_nchw");
  return ScheduleConvolution(out, conv, vector_lanes);
}

te::Tensor conv2d_nhwc(const te::Tensor& data, const te::Tensor& weight, const Conv2DAttrs& a) {
  const std::string op = "conv2d_nhwc";
  Conv2DShape g = CheckConv2D(data, weight, a, op, /*channels_last=*/true);
  const int64_t N = g.N, K = g.K, CG = g.CG, R = g.R, S = g.S, P = g.P, Q = g.Q;
  bool padded_input = a.pads[0] || a.pads[1] || a.pads[2] || a.pads[3];
  te::Tensor padded =
      padded_input ? pad(data, {0, a.pads[0], a.pads[1], 0}, {0, a.pads[2], a.pads[3], 0}) : data;
  IterVar rr = te::reduce_axis(Range(0, int(R)), "rr");
  IterVar rs = te::reduce_axis(Range(0, int(S)), "rs");
  IterVar rc = te::reduce_axis(Range(0, int(CG)), "rc");
  const int64_t out_per_group = K / a.groups;
  return te::compute(
      {int(N), int(P), int(Q), int(K)},
      [&](Var n, Var p, Var q, Var k) {
        PrimExpr channel = a.groups == 1 ? PrimExpr(rc->var)
                                         : floordiv(k, int(out_per_group)) * int(CG) + rc->var;
        return te::sum(padded(n, p * int(a.strides[0]) + rr->var * int(a.dilations[0]),
                              q * int(a.strides[1]) + rs->var * int(a.dilations[1]), channel) *
                           weight(rr->var, rs->var, rc->var, k),
                       {rr, rs, rc});
      },
      op, "conv2d_nhwc");
}

te::Schedule schedule_conv2d_nhwc(const te::Tensor& out, int vector_lanes) {
  const std::string name = "schedule_conv2d_nhwc";
  te::Operation conv = detail::FindAnchor(
      out, [](const te::Operation& op) { return op->tag == "conv2d_nhwc"; }, name,
      "the output of conv2d_nhwc");
  detail::CheckEpilogueKeepsShape(out, conv, name);
  te::Schedule s = te::create_schedule({out.op()});
  // The zero-padded input is materialized once, so that the inner loop reads it without a
  // bounds check per multiply-add.
  te::Tensor input = conv->InputTensors()[0];
  bool materialize = dynamic_cast<const te::ComputeOpNode*>(input.op().get()) != nullptr;
  Array<te::Operation> kept{out.op()};
  if (materialize) kept.push_back(input.op());
  detail::InlineInjective(s, kept);
  if (materialize) {
    te::Stage pad_stage = s[input];
    Array<IterVar> axes = pad_stage->leaf_iter_vars;  // n, h, w, c
    IterVar rows = pad_stage.fuse(axes[0], axes[1]);
    // Whole vectors of channels share one padding test; fewer channels than a vector fill
    // vectors across columns.
    int64_t channels = 0;
    bool wide = IsConstInt(input.shape()[3], &channels) && channels >= vector_lanes;
    IterVar vectorized = wide ? axes[3] : pad_stage.fuse(axes[2], axes[3]);
    pad_stage.vectorize(pad_stage.split(vectorized, vector_lanes).second);
    pad_stage.parallel(rows);
  }
  te::Stage tile_stage = s[detail::RegisterTile(s, out, conv)];
  te::Stage c = s[out];
  Array<IterVar> axes = c->leaf_iter_vars;  // n, p, q, k
  auto [column_tiles, column] = c.split(axes[2], kNhwcTileColumns);
  auto [channel_vectors, lanes] = c.split(axes[3], vector_lanes);
  IterVar rows = c.fuse(axes[0], axes[1]);
  c.reorder({rows, column_tiles, channel_vectors, column, lanes});
  c.unroll(column);
  c.vectorize(lanes);
  c.parallel(rows);
  tile_stage.compute_at(c, channel_vectors);
  // The tile's loops: the reduction outside, then its columns (unrolled: every accumulator a
  // register) and the channel vector.
  Array<IterVar> tile_axes = tile_stage->leaf_iter_vars;  // n, p, q, k, rr, rs, rc
  tile_stage.reorder({tile_axes[0], tile_axes[1], tile_axes[4], tile_axes[5], tile_axes[6],
                      tile_axes[2], tile_axes[3]});
  tile_stage.unroll(tile_axes[2]);
  tile_stage.vectorize(tile_axes[3]);
  return s;
}

te::Tensor conv1d_ncw(const te::Tensor& data, const te::Tensor& weight, const Conv1DAttrs& a) {
  const std::string op = "conv1d_ncw";
  LOOM_CHECK_USER(data.ndim() == 3 && weight.ndim() == 3)
      << op << ": data '" << data.name() << "' and weight '" << weight.name()
      << "' must be 3-d (NCW and KCS), got " << data.ndim() << "-d and " << weight.ndim() << "-d";
  LOOM_CHECK_USER(data.dtype() == weight.dtype() && data.dtype().is_float())
      << op << ": data and weight must share one float type, got " << data.dtype().str()
      << " and " << weight.dtype().str();
  std::vector<int64_t> in = detail::ConstShape(data, op), w = detail::ConstShape(weight, op);
  const int64_t N = in[0], C = in[1], W = in[2], K = w[0], CG = w[1], S = w[2];
  LOOM_CHECK_USER(a.groups > 0 && C % a.groups == 0 && K % a.groups == 0 && CG == C / a.groups)
      << op << ": weight '" << weight.name() << "' has " << CG << " input channels per group; "
      << "data '" << data.name() << "' has " << C << " channels and the weight " << K
      << " filters in " << a.groups << " groups";
  LOOM_CHECK_USER(a.stride > 0 && a.dilation > 0 && a.pads[0] >= 0 && a.pads[1] >= 0)
      << op << ": stride and dilation must be positive and pads non-negative, got stride "
      << a.stride << " dilation " << a.dilation << " pads (" << a.pads[0] << ", " << a.pads[1] << ")";
  const int64_t span = W + a.pads[0] + a.pads[1] - a.dilation * (S - 1) - 1;
  LOOM_CHECK_USER(span >= 0) << op << ": the kernel of " << S << " (dilation " << a.dilation
                             << ") does not fit the padded input of " << W;
  const int64_t Q = span / a.stride + 1;
  te::Tensor padded = pad(data, {0, 0, a.pads[0]}, {0, 0, a.pads[1]});
  IterVar rc = te::reduce_axis(Range(0, int(CG)), "rc");
  IterVar rs = te::reduce_axis(Range(0, int(S)), "rs");
  const int64_t out_per_group = K / a.groups;
  return te::compute(
      {int(N), int(K), int(Q)},
      [&](Var n, Var k, Var q) {
        PrimExpr channel = floordiv(k, int(out_per_group)) * int(CG) + rc->var;
        return te::sum(padded(n, channel, q * int(a.stride) + rs->var * int(a.dilation)) *
                           weight(k, rc->var, rs->var),
                       {rc, rs});
      },
      op, "conv1d_ncw");
}

te::Schedule schedule_conv1d_ncw(const te::Tensor& out, int vector_lanes) {
  te::Operation conv =
      ConvolutionAnchor(out, {"conv1d_ncw"}, "schedule_conv1d_ncw", "the output of conv1d_ncw");
  return ScheduleConvolution(out, conv, vector_lanes);
}

}  // namespace loom::topi
