// 2-D pooling in NCHW or blocked NCHW<k>c: a reduction over the window of each output
// position, reading the input through bounds checks instead of a padded copy (padding must
// never win a max, and counts for an average only when asked).
#include <optional>
#include <string>

#include "loom/topi/nn.h"
#include "loom/topi/reduction.h"
#include "loom/topi/transform.h"
#include "topi/topi_util.h"

namespace loom::topi {

namespace {

struct PoolGeometry {
  int64_t N, C, H, W, P, Q;  // C: the channels, or the channel blocks of NCHW<k>c; N: -1
                             // where the batch is symbolic
  int64_t block;  // channels per block of NCHW<k>c, 0 for NCHW
};

// The tensor's channel block in `layout` (0 for NCHW), checking that its rank and last
// dimension match.
int64_t CheckLayout(const te::Tensor& data, const std::string& layout, const std::string& op) {
  int64_t block = ChannelBlock(layout, op);
  int64_t last = 0;
  LOOM_CHECK_USER(data.ndim() == (block ? 5 : 4) &&
                  (!block || (IsConstInt(data.shape()[4], &last) && last == block)))
      << op << ": '" << data.name() << "' of shape " << detail::ShapeText(data.shape())
      << " is not in layout " << layout << " (expected "
      << (block ? "[N, C / k, H, W, k] with k = " + std::to_string(block) : "[N, C, H, W]")
      << ")";
  return block;
}

int64_t OutputSize(int64_t in, int64_t pad_begin, int64_t pad_end, int64_t kernel,
                   int64_t stride, int64_t dilation, bool ceil_mode) {
  int64_t span = in + pad_begin + pad_end - dilation * (kernel - 1) - 1;
  int64_t size = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  // ONNX: with ceil_mode, a last window starting in the end padding is dropped.
  if (ceil_mode && (size - 1) * stride >= in + pad_begin) --size;
  return size;
}

PrimExpr Likely(PrimExpr test) {
  return call_intrin(DataType::Bool(), "likely", {std::move(test)});
}

// Max pooling takes integers too (8-bit quantized tensors); averaging takes floats.
PoolGeometry Geometry(const te::Tensor& data, const Pool2DAttrs& a, const std::string& layout,
                      const std::string& op, bool average) {
  int64_t block = CheckLayout(data, layout, op);
  if (average || !(data.dtype().is_int() || data.dtype().is_uint())) detail::CheckFloat(data, op);
  // The batch may be symbolic (the VM's models); the window's dimensions may not.
  std::vector<int64_t> in(static_cast<size_t>(data.ndim()), -1);
  for (size_t d = 0; d < in.size(); ++d) {
    LOOM_CHECK_USER(IsConstInt(data.shape()[d], &in[d]) || d == 0)
        << op << " of '" << data.name() << "': shape " << detail::ShapeText(data.shape())
        << " is symbolic; the operator needs constant sizes but for the batch";
  }
  for (int d = 0; d < 2; ++d) {
    LOOM_CHECK_USER(a.kernel[d] > 0 && a.strides[d] > 0 && a.dilations[d] > 0)
        << op << ": kernel, strides and dilations must be positive, got kernel (" << a.kernel[0]
        << ", " << a.kernel[1] << ") strides (" << a.strides[0] << ", " << a.strides[1]
        << ") dilations (" << a.dilations[0] << ", " << a.dilations[1] << ")";
    LOOM_CHECK_USER(a.pads[d] >= 0 && a.pads[d + 2] >= 0 &&
                    a.pads[d] < a.kernel[d] * a.dilations[d] &&
                    a.pads[d + 2] < a.kernel[d] * a.dilations[d])
        << op << ": pads (" << a.pads[0] << ", " << a.pads[1] << ", " << a.pads[2] << ", "
        << a.pads[3] << ") must be non-negative and smaller than the kernel's extent, so that "
        << "no window lies entirely in the padding";
  }
  PoolGeometry g{in[0], in[1], in[2], in[3],
                 OutputSize(in[2], a.pads[0], a.pads[2], a.kernel[0], a.strides[0],
                            a.dilations[0], a.ceil_mode),
                 OutputSize(in[3], a.pads[1], a.pads[3], a.kernel[1], a.strides[1],
                            a.dilations[1], a.ceil_mode),
                 block};
  LOOM_CHECK_USER(g.P > 0 && g.Q > 0)
      << op << ": the " << a.kernel[0] << "x" << a.kernel[1] << " window does not fit the padded "
      << g.H << "x" << g.W << " input";
  return g;
}

te::Tensor Pool(const te::Tensor& data, const Pool2DAttrs& a, const std::string& layout,
                bool average) {
  const std::string op = average ? "avg_pool2d" : "max_pool2d";
  PoolGeometry g = Geometry(data, a, layout, op, average);
  IterVar rr = te::reduce_axis(Range(0, int(a.kernel[0])), "rr");
  IterVar rs = te::reduce_axis(Range(0, int(a.kernel[1])), "rs");
  DataType t = data.dtype();
  // Output index (n, c, p, q) or (n, c_block, p, q, c_in_block): the input's index at input
  // row h and column w.
  auto input_at = [&](const Array<Var>& i, PrimExpr h, PrimExpr w) {
    Array<PrimExpr> index{i[0], i[1], std::move(h), std::move(w)};
    if (g.block) index.push_back(i[4]);
    return data(index);
  };
  // The input at the window tap (rr, rs) of output i, or `outside` where the tap lies in the
  // padding (or past the input, with ceil_mode). The read is guarded, not clamped: each bound
  // is likely(), so LoopPartition peels the border rows and columns off the loops and the
  // interior reads the input directly (clamped indices made every vector read a gather).
  auto window = [&](const Array<Var>& i, PrimExpr outside) {
    PrimExpr h = i[2] * int(a.strides[0]) + rr->var * int(a.dilations[0]) - int(a.pads[0]);
    PrimExpr w = i[3] * int(a.strides[1]) + rs->var * int(a.dilations[1]) - int(a.pads[1]);
    PrimExpr inside = Likely(h >= 0) && Likely(h < int(g.H)) && Likely(w >= 0) &&
                      Likely(w < int(g.W));
    return te::if_then_else(inside, input_at(i, h, w), std::move(outside));
  };
  Array<PrimExpr> out_shape{
      g.N < 0 ? data.shape()[0] : PrimExpr(make_const(DataType::Int(32), g.N)), int(g.C), int(g.P),
      int(g.Q)};
  if (g.block) out_shape.push_back(int(g.block));
  if (!average) {
    return te::compute(
        out_shape,
        [&](const Array<Var>& i) { return te::max(window(i, te::min_value(t)), {rr, rs}); },
        op, "pool2d");
  }
  te::Tensor total = te::compute(
      out_shape,
      [&](const Array<Var>& i) { return te::sum(window(i, make_zero(t)), {rr, rs}); },
      op + "_sum", "pool2d");
  return te::compute(
      out_shape,
      [&](const Array<Var>& i) {
        const Var &p = i[2], &q = i[3];
        PrimExpr count;
        if (a.count_include_pad) {
          // Positions in the input or its padding; with ceil_mode a window may overhang the
          // padding too, and those positions do not count.
          auto extent = [&](PrimExpr start, int64_t in, int64_t pad_end, int64_t kernel,
                            int64_t dilation) {
            PrimExpr end = min(start + int(dilation * (kernel - 1) + 1), int(in + pad_end));
            return floordiv(end - start + int(dilation - 1), int(dilation));
          };
          count = extent(p * int(a.strides[0]) - int(a.pads[0]), g.H, a.pads[2], a.kernel[0],
                         a.dilations[0]) *
                  extent(q * int(a.strides[1]) - int(a.pads[1]), g.W, a.pads[3], a.kernel[1],
                         a.dilations[1]);
        } else {
          // Window positions inside the input: for each axis, the taps k with
          // 0 <= start + k * dilation < in.
          auto inside = [&](PrimExpr start, int64_t in, int64_t kernel, int64_t dilation) {
            PrimExpr first = max(make_zero(start.dtype()),
                                 floordiv(int(dilation - 1) - start, int(dilation)));
            PrimExpr last = min(int(kernel - 1), floordiv(int(in - 1) - start, int(dilation)));
            return max(last - first + 1, make_zero(start.dtype()));
          };
          count = inside(p * int(a.strides[0]) - int(a.pads[0]), g.H, a.kernel[0], a.dilations[0]) *
                  inside(q * int(a.strides[1]) - int(a.pads[1]), g.W, a.kernel[1], a.dilations[1]);
        }
        return total(Array<PrimExpr>(i.begin(), i.end())) / loom::cast(t, count);
      },
      op, "elemwise");
}

}  // namespace

te::Tensor max_pool2d(const te::Tensor& data, const Pool2DAttrs& attrs, const std::string& layout) {
  return Pool(data, attrs, layout, false);
}

te::Tensor avg_pool2d(const te::Tensor& data, const Pool2DAttrs& attrs, const std::string& layout) {
  return Pool(data, attrs, layout, true);
}

te::Tensor global_max_pool2d(const te::Tensor& data, const std::string& layout) {
  CheckLayout(data, layout, "global_max_pool2d");
  return max(data, {2, 3}, /*keepdims=*/true);
}

te::Tensor global_avg_pool2d(const te::Tensor& data, const std::string& layout) {
  CheckLayout(data, layout, "global_avg_pool2d");
  return mean(data, {2, 3}, /*keepdims=*/true);
}

te::Schedule schedule_pool2d(const te::Tensor& out, int vector_lanes) {
  te::Schedule s = te::create_schedule({out.op()});
  te::Stage c = s[out];
  // n, c, p, q or n, c_block, p, q, c_in_block; then the window, for max.
  Array<IterVar> axes = c->leaf_iter_vars;
  LOOM_CHECK_USER(axes.size() >= 4 && (out.op()->tag == "pool2d" || out.op()->tag == "elemwise"))
      << "schedule_pool2d: '" << out.name() << "' is not the output of max_pool2d or avg_pool2d";
  const size_t spatial = out.ndim();
  IterVar rows = c.fuse(c.fuse(axes[0], axes[1]), axes[2]);
  c.parallel(rows);
  Array<IterVar> window(axes.begin() + spatial, axes.end());
  // Average pooling: the window sums, computed per output (NCHW) or output vector (blocked).
  std::optional<te::Stage> sum_stage;
  for (const te::Stage& stage : s.stages()) {
    if (stage->op != out.op() && stage->op->tag == "pool2d") sum_stage = stage;
  }
  if (spatial == 4) {
    // NCHW: one output at a time, the window unrolled. With 16 output columns as the vector
    // lanes, every tap read a gather (a strided window, or the guarded border columns):
    // 1.3x slower on 3x3/2 max pools of 64-256 channels, 4x on a 3x3/1 one (2026-11-25).
    for (const IterVar& tap : window) c.unroll(tap);
    if (sum_stage) {
      sum_stage->compute_at(c, axes[3]);
      Array<IterVar> sum_axes = (*sum_stage)->leaf_iter_vars;  // the output's axes, rr, rs
      for (size_t d = spatial; d < sum_axes.size(); ++d) sum_stage->unroll(sum_axes[d]);
    }
    return s;
  }
  // Blocked: the vector is the channel block, a vector width at a time.
  auto [outer, lanes] = c.split(axes[4], vector_lanes);
  Array<IterVar> order{rows, axes[3], outer};
  order.insert(order.end(), window.begin(), window.end());
  order.push_back(lanes);
  c.reorder(order);
  c.vectorize(lanes);
  if (sum_stage) {
    sum_stage->compute_at(c, outer);
    Array<IterVar> sum_axes = (*sum_stage)->leaf_iter_vars;  // the output's axes, rr, rs
    Array<IterVar> sum_order(sum_axes.begin() + spatial, sum_axes.end());
    sum_order.insert(sum_order.end(), sum_axes.begin(), sum_axes.begin() + spatial);
    sum_stage->reorder(sum_order);
    sum_stage->vectorize(sum_axes[spatial - 1]);
  }
  return s;
}

}  // namespace loom::topi
