// Converters of the ONNX operators of convolutional networks: convolutions, pooling,
// normalizations, Gemm, activations, padding, resizing and the channel/space shuffles.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>

#include "frontend/onnx/activations.h"
#include "frontend/onnx/converter.h"
#include "loom/support/error.h"

namespace loom::frontend::onnx {
namespace {

using graph::Ints;

// "[1, 3, 4]"
std::string IntsText(const std::vector<int64_t>& values) { return runtime::ShapeString(values); }

// Per spatial dimension of a convolution or pooling window.
struct Window {
  std::vector<int64_t> kernel, strides, dilations;
  std::vector<int64_t> pads;  // begins, then ends (ONNX order)
};

// The window of a Conv / pool node over `spatial` input sizes: strides and dilations default
// to 1, and the pads follow auto_pad (SAME_* pads so that output = ceil(input / stride), the
// odd pixel at the end for SAME_UPPER, at the beginning for SAME_LOWER).
Window WindowOf(const NodeContext& ctx, const std::vector<int64_t>& spatial,
                std::vector<int64_t> kernel) {
  size_t n = spatial.size();
  Window w;
  w.kernel = std::move(kernel);
  w.strides = ctx.AttrInts("strides", std::vector<int64_t>(n, 1));
  w.dilations = ctx.AttrInts("dilations", std::vector<int64_t>(n, 1));
  if (w.kernel.size() != n || w.strides.size() != n || w.dilations.size() != n) {
    ctx.Fail("kernel_shape " + IntsText(w.kernel) + ", strides " + IntsText(w.strides) +
             " and dilations " + IntsText(w.dilations) + " must each have " + std::to_string(n) +
             " values, one per spatial dimension");
  }
  for (size_t d = 0; d < n; ++d) {
    if (w.kernel[d] < 1 || w.strides[d] < 1 || w.dilations[d] < 1) {
      ctx.Fail("kernel_shape " + IntsText(w.kernel) + ", strides " + IntsText(w.strides) +
               " and dilations " + IntsText(w.dilations) + " must be positive");
    }
  }
  std::string auto_pad = ctx.AttrString("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    w.pads = ctx.AttrInts("pads", std::vector<int64_t>(2 * n, 0));
    if (w.pads.size() != 2 * n) {
      ctx.Fail("pads " + IntsText(w.pads) + " must have " + std::to_string(2 * n) +
               " values (every spatial dimension's begin, then every end)");
    }
  } else if (auto_pad == "VALID") {
    w.pads.assign(2 * n, 0);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    w.pads.assign(2 * n, 0);
    for (size_t d = 0; d < n; ++d) {
      int64_t out = (spatial[d] + w.strides[d] - 1) / w.strides[d];
      int64_t extent = (w.kernel[d] - 1) * w.dilations[d] + 1;
      int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[d] + extent - spatial[d]);
      int64_t small = total / 2;
      w.pads[d] = auto_pad == "SAME_UPPER" ? small : total - small;
      w.pads[d + n] = total - w.pads[d];
    }
  } else {
    ctx.Fail("auto_pad '" + auto_pad + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
  }
  return w;
}

// The dimensions after batch and channel; callers check the rank first.
std::vector<int64_t> SpatialDims(const std::vector<int64_t>& shape) {
  LOOM_ICHECK(shape.size() >= 2) << "SpatialDims of rank " << shape.size();
  return std::vector<int64_t>(shape.begin() + 2, shape.end());
}

// The kernel's spatial size from the weight, checked against kernel_shape when given.
std::vector<int64_t> KernelOfWeight(const NodeContext& ctx) {
  if (ctx.InputRank(1) != ctx.InputRank(0)) {
    ctx.Fail("the weight (input 1) of shape " + IntsText(ctx.InputShape(1)) +
             " must have the rank of input 0, " + IntsText(ctx.InputShape(0)));
  }
  std::vector<int64_t> kernel = SpatialDims(ctx.InputShape(1));
  if (ctx.HasAttr("kernel_shape") && ctx.AttrInts("kernel_shape") != kernel) {
    ctx.Fail("kernel_shape " + IntsText(ctx.AttrInts("kernel_shape")) +
             " differs from the weight's spatial shape " + IntsText(kernel));
  }
  return kernel;
}

// Inputs of 1 or 2 spatial dimensions (3-d or 4-d), the forms the graph operators take.
void RequireSpatialRank(const NodeContext& ctx, const std::vector<int> ranks) {
  int rank = ctx.InputRank(0);
  for (int r : ranks) {
    if (r == rank) return;
  }
  std::string allowed;
  for (int r : ranks) allowed += (allowed.empty() ? "" : " or ") + std::to_string(r - 2) + "-d";
  ctx.Fail("only " + allowed + " spatial inputs are supported, got input 0 of shape " +
           IntsText(ctx.InputShape(0)));
}

graph::Expr WithBias(NodeContext& ctx, graph::Expr out) {
  if (!ctx.HasInput(2)) return out;
  return ctx.Call("nn.bias_add", {out, ctx.Input(2)}, {{"axis", int64_t{1}}});
}

Outputs Conv(NodeContext& ctx) {
  RequireSpatialRank(ctx, {3, 4});
  Window w = WindowOf(ctx, ctx.InputSpatialShape(0), KernelOfWeight(ctx));
  graph::Attrs attrs = {{"strides", w.strides},
                        {"padding", w.pads},
                        {"dilation", w.dilations},
                        {"groups", ctx.AttrInt("group", 1)}};
  const char* op = ctx.InputRank(0) == 4 ? "nn.conv2d" : "nn.conv1d";
  return {WithBias(ctx, ctx.Call(op, {ctx.Input(0), ctx.Input(1)}, attrs))};
}

// A 1-d window as the 2-d one over an image of height 1.
Window Lift1d(Window w) {
  w.kernel.insert(w.kernel.begin(), 1);
  w.strides.insert(w.strides.begin(), 1);
  w.dilations.insert(w.dilations.begin(), 1);
  w.pads = {0, w.pads[0], 0, w.pads[1]};
  return w;
}

// x [N, C, W] as [N, C, 1, W], and back.
graph::Expr AddHeight(NodeContext& ctx, graph::Expr x) {
  return ctx.Call("expand_dims", {std::move(x)}, {{"axis", int64_t{2}}});
}
graph::Expr DropHeight(NodeContext& ctx, graph::Expr x) {
  return ctx.Call("squeeze", {std::move(x)}, {{"axes", Ints{2}}});
}

// ONNX ConvTranspose: the output size is stride * (in - 1) + output_padding + dilated kernel
// - pads; output_shape (or SAME auto_pad, which asks for in * stride) fixes the pads instead,
// split as the ONNX reference splits them (floor halves), a negative end pad growing the
// output_padding. A 1-d one is the 2-d one over an image of height 1.
Outputs ConvTranspose(NodeContext& ctx) {
  RequireSpatialRank(ctx, {3, 4});
  std::vector<int64_t> spatial = ctx.InputSpatialShape(0);
  size_t n = spatial.size();
  Window w;
  w.kernel = KernelOfWeight(ctx);
  w.strides = ctx.AttrInts("strides", std::vector<int64_t>(n, 1));
  w.dilations = ctx.AttrInts("dilations", std::vector<int64_t>(n, 1));
  std::vector<int64_t> output_padding = ctx.AttrInts("output_padding", std::vector<int64_t>(n, 0));
  if (w.strides.size() != n || w.dilations.size() != n || output_padding.size() != n) {
    ctx.Fail("strides, dilations and output_padding must each have " + std::to_string(n) +
             " values");
  }
  std::string auto_pad = ctx.AttrString("auto_pad", "NOTSET");
  w.pads.assign(2 * n, 0);
  std::vector<int64_t> target;
  if (ctx.HasAttr("output_shape")) {
    target = ctx.AttrInts("output_shape");
    if (target.size() == n + 2) target = SpatialDims(target);
    if (target.size() != n) ctx.Fail("output_shape must have " + std::to_string(n) + " values");
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t d = 0; d < n; ++d) target.push_back(spatial[d] * w.strides[d]);
  } else if (auto_pad == "NOTSET") {
    w.pads = ctx.AttrInts("pads", w.pads);
    if (w.pads.size() != 2 * n) ctx.Fail("pads must have " + std::to_string(2 * n) + " values");
  } else if (auto_pad != "VALID") {
    ctx.Fail("auto_pad '" + auto_pad + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
  }
  for (size_t d = 0; d < target.size(); ++d) {
    int64_t full = w.strides[d] * (spatial[d] - 1) + output_padding[d] +
                   (w.kernel[d] - 1) * w.dilations[d] + 1;
    int64_t total = full - target[d];
    int64_t floor_half = total >= 0 ? total / 2 : -((-total + 1) / 2);
    int64_t begin = auto_pad == "SAME_UPPER" ? floor_half : total - floor_half;
    int64_t end = total - begin;
    if (begin < 0) {
      ctx.Fail("output size " + std::to_string(target[d]) + " of spatial dimension " +
               std::to_string(d) + " needs a negative pad (" + std::to_string(begin) +
               ") before the data, which Loom does not support");
    }
    w.pads[d] = begin;
    w.pads[d + n] = std::max<int64_t>(end, 0);
    output_padding[d] -= std::min<int64_t>(end, 0);
  }
  graph::Expr x = ctx.Input(0), weight = ctx.Input(1);
  if (n == 1) {
    w = Lift1d(w);
    output_padding.insert(output_padding.begin(), 0);
    x = AddHeight(ctx, x);
    weight = AddHeight(ctx, weight);
  }
  graph::Attrs attrs = {{"strides", w.strides},
                        {"padding", w.pads},
                        {"dilation", w.dilations},
                        {"groups", ctx.AttrInt("group", 1)},
                        {"output_padding", output_padding}};
  graph::Expr y = ctx.Call("nn.conv2d_transpose", {x, weight}, attrs);
  return {WithBias(ctx, n == 1 ? DropHeight(ctx, y) : y)};
}

Outputs BatchNormalization(NodeContext& ctx) {
  if (ctx.AttrInt("training_mode", 0) != 0) {
    ctx.Fail("training_mode = 1 is not supported (Loom imports models for inference)");
  }
  if (ctx.opset() < 9 && ctx.AttrInt("spatial", 1) != 1) {
    ctx.Fail("spatial = 0 (statistics per element) is not supported");
  }
  return {ctx.Call("nn.batch_norm",
                   {ctx.Input(0), ctx.Input(1), ctx.Input(2), ctx.Input(3), ctx.Input(4)},
                   {{"epsilon", static_cast<double>(ctx.AttrFloat("epsilon", 1e-5f))}})};
}

// A 3-d pool as two 2-d pools: (h, w) over [N, C*D, H, W], then d over [N, C, D, H'*W'] with
// a window of width 1. A box window's max, sum and element count (with or without the pads,
// ceil_mode windows clipped) are each a product or nesting of per-axis ones, so this is
// the 3-d pool exactly, up to the rounding of averaging twice.
graph::Expr Pool3d(NodeContext& ctx, const std::string& op, graph::Expr x, const Window& w,
                   const std::function<graph::Attrs(const Window&)>& attrs_of) {
  std::vector<int64_t> shape = ctx.InputShape(0);
  Window hw{{w.kernel[1], w.kernel[2]},
            {w.strides[1], w.strides[2]},
            {w.dilations[1], w.dilations[2]},
            {w.pads[1], w.pads[2], w.pads[4], w.pads[5]}};
  Window d{{w.kernel[0], 1}, {w.strides[0], 1}, {w.dilations[0], 1}, {w.pads[0], 0, w.pads[3], 0}};
  graph::Expr planes =
      ctx.Call("reshape", {std::move(x)},
               {{"newshape", Ints{shape[0], shape[1] * shape[2], shape[3], shape[4]}}});
  graph::Expr pooled_hw = ctx.Call(op, {planes}, attrs_of(hw));
  std::vector<int64_t> hw_shape = *pooled_hw.type().ConstShape();
  graph::Expr columns =
      ctx.Call("reshape", {pooled_hw},
               {{"newshape", Ints{shape[0], shape[1], shape[2], hw_shape[2] * hw_shape[3]}}});
  graph::Expr pooled = ctx.Call(op, {columns}, attrs_of(d));
  int64_t depth = (*pooled.type().ConstShape())[2];
  return ctx.Call("reshape", {pooled},
                  {{"newshape", Ints{shape[0], shape[1], depth, hw_shape[2], hw_shape[3]}}});
}

// MaxPool and AveragePool of 1-d (as 2-d of height 1), 2-d and 3-d (Pool3d) inputs. Max
// pooling of 8- and 16-bit integers runs in float32, which holds them exactly.
Outputs Pool(NodeContext& ctx, const std::string& op) {
  RequireSpatialRank(ctx, {3, 4, 5});
  Window w = WindowOf(ctx, ctx.InputSpatialShape(0), ctx.AttrInts("kernel_shape"));
  bool one_d = ctx.InputRank(0) == 3;
  graph::Expr x = ctx.Input(0);
  if (one_d) {
    w = Lift1d(w);
    x = AddHeight(ctx, x);
  }
  DataType dtype = ctx.InputDtype(0);
  bool integer = !dtype.is_float();
  if (integer) {
    if (op != "nn.max_pool2d" || dtype.bits() > 16) {
      ctx.Fail("input of type " + dtype.str() + " is not supported (float types" +
               std::string(op == "nn.max_pool2d" ? ", and integers of up to 16 bits" : "") + ")");
    }
    x = ctx.Call("cast", {x}, {{"dtype", std::string("float32")}});
  }
  auto attrs_of = [&](const Window& window) {
    graph::Attrs attrs = {{"pool_size", window.kernel},
                          {"strides", window.strides},
                          {"padding", window.pads},
                          {"dilation", window.dilations},
                          {"ceil_mode", ctx.AttrInt("ceil_mode", 0)}};
    if (op == "nn.avg_pool2d") {
      attrs = attrs.With("count_include_pad", ctx.AttrInt("count_include_pad", 0));
    }
    return attrs;
  };
  graph::Expr y =
      ctx.InputRank(0) == 5 ? Pool3d(ctx, op, x, w, attrs_of) : ctx.Call(op, {x}, attrs_of(w));
  if (integer) y = ctx.Call("cast", {y}, {{"dtype", dtype.str()}});
  return {one_d ? DropHeight(ctx, y) : y};
}

Outputs MaxPool(NodeContext& ctx) {
  if (ctx.node().output_size() > 1 && !ctx.node().output(1).empty()) {
    ctx.Fail("the Indices output is not supported (only the pooled values)");
  }
  // storage_order orders the Indices output only: the values do not depend on it.
  return Pool(ctx, "nn.max_pool2d");
}

// GlobalAveragePool / GlobalMaxPool: the 2-d pooling operator for NCHW, a reduction over
// the spatial dimensions (kept as 1) for other ranks.
Outputs GlobalPool(NodeContext& ctx, const std::string& op2d, const std::string& reduce) {
  int rank = ctx.InputRank(0);
  if (rank < 3)
    ctx.Fail("input 0 must have spatial dimensions, got shape " + IntsText(ctx.InputShape(0)));
  if (rank == 4) return {ctx.Call(op2d, {ctx.Input(0)})};
  Ints axes;
  for (int d = 2; d < rank; ++d) axes.push_back(d);
  return {ctx.Call(reduce, {ctx.Input(0)}, {{"axis", axes}, {"keepdims", int64_t{1}}})};
}

// Y = alpha * A' B' + beta * C with A' = transA ? A^T : A and B' alike. nn.dense takes the
// weight as [N, K], which B is when transB = 1; otherwise B is transposed (folded when it
// is a constant).
Outputs Gemm(NodeContext& ctx) {
  if (ctx.InputRank(0) != 2 || ctx.InputRank(1) != 2) {
    ctx.Fail("A and B must be 2-d, got " + IntsText(ctx.InputShape(0)) + " and " +
             IntsText(ctx.InputShape(1)));
  }
  graph::Attrs transposed = {{"axes", Ints{1, 0}}};
  graph::Expr a = ctx.Input(0);
  if (ctx.AttrInt("transA", 0) != 0) a = ctx.Call("transpose", {a}, transposed);
  graph::Expr b = ctx.Input(1);
  if (ctx.AttrInt("transB", 0) == 0) b = ctx.Call("transpose", {b}, transposed);
  graph::Expr y = ctx.Call("nn.dense", {a, b});
  DataType dtype = ctx.InputDtype(0);
  float alpha = ctx.AttrFloat("alpha", 1.0f);
  if (alpha != 1.0f) y = ctx.Call("multiply", {y, ctx.Scalar(alpha, dtype)});
  if (ctx.HasInput(2)) {
    graph::Expr c = ctx.Input(2);
    float beta = ctx.AttrFloat("beta", 1.0f);
    if (beta != 1.0f) c = ctx.Call("multiply", {c, ctx.Scalar(beta, dtype)});
    y = ctx.Call("add", {y, c});
  }
  return {y};
}

Outputs Flatten(NodeContext& ctx) {
  int rank = ctx.InputRank(0);
  int64_t axis = ctx.AttrInt("axis", 1);
  if (axis < -rank || axis > rank) {
    ctx.Fail("axis " + std::to_string(axis) + " is out of range for input of rank " +
             std::to_string(rank));
  }
  if (axis < 0) axis += rank;
  return {ctx.Call("flatten", {ctx.Input(0)}, {{"axis", axis}})};
}

// Clip: bounds are attributes before opset 11, optional inputs from it on; an absent bound
// does not clip. Integer tensors are clipped with maximum / minimum against constants of
// their own type, which keeps 64-bit bounds exact. A bound computed at run time is a kernel
// input: maximum then minimum, which also gives every element max where min > max, as ONNX
// says.
Outputs Clip(NodeContext& ctx) {
  std::optional<double> lo, hi;
  if (ctx.opset() < 11) {
    if (ctx.HasAttr("min")) lo = ctx.AttrFloat("min");
    if (ctx.HasAttr("max")) hi = ctx.AttrFloat("max");
  } else {
    bool runtime_bound = false;
    for (int i : {1, 2}) {
      if (!ctx.HasInput(i)) continue;
      if (ctx.InputShape(i) != std::vector<int64_t>{} &&
          ctx.InputShape(i) != std::vector<int64_t>{1}) {
        ctx.Fail("input " + std::to_string(i) + " (" + (i == 1 ? "min" : "max") +
                 ") must be a scalar, got shape " + IntsText(ctx.InputShape(i)));
      }
      runtime_bound |= !ctx.ConstantInput(i).has_value();
    }
    if (runtime_bound) {
      graph::Expr x = ctx.Input(0);
      if (ctx.HasInput(1)) x = ctx.Call("maximum", {x, ctx.Input(1)});
      if (ctx.HasInput(2)) x = ctx.Call("minimum", {x, ctx.Input(2)});
      return {x};
    }
    if (ctx.HasInput(1)) lo = ctx.ConstantFloats(1).at(0);
    if (ctx.HasInput(2)) hi = ctx.ConstantFloats(2).at(0);
  }
  if (lo && hi && *lo > *hi) lo = hi;  // ONNX: every element becomes max then
  DataType dtype = ctx.InputDtype(0);
  graph::Expr x = ctx.Input(0);
  if (dtype.is_float()) {
    double inf = std::numeric_limits<double>::infinity();
    return {ctx.Call("clip", {x}, {{"a_min", lo.value_or(-inf)}, {"a_max", hi.value_or(inf)}})};
  }
  if (lo) x = ctx.Call("maximum", {x, ctx.Scalar(*lo, dtype)});
  if (hi) x = ctx.Call("minimum", {x, ctx.Scalar(*hi, dtype)});
  return {x};
}

Outputs Dropout(NodeContext& ctx) {
  if (ctx.HasInput(2) && (!ctx.ConstantInput(2) || ctx.ConstantInts(2).at(0) != 0)) {
    ctx.Fail("training_mode must be a constant false (Loom imports models for inference)");
  }
  if (ctx.node().output_size() < 2 || ctx.node().output(1).empty()) return {ctx.Input(0)};
  // Inference keeps every element: the mask is all true (of X's type before opset 10).
  DataType mask_type = ctx.opset() < 10 ? ctx.InputDtype(0) : DataType::Bool();
  graph::Expr mask =
      ctx.Call("broadcast_to", {ctx.Scalar(1, mask_type)}, {{"shape", ctx.InputShape(0)}});
  return {ctx.Input(0), mask};
}

// alpha * elu(x / alpha).
Outputs Celu(NodeContext& ctx) {
  DataType dtype = ctx.InputDtype(0);
  graph::Expr alpha = ctx.Scalar(ctx.AttrFloat("alpha", 1.0f), dtype);
  graph::Expr scaled = ctx.Call("divide", {ctx.Input(0), alpha});
  return {ctx.Call("multiply", {ctx.Call("nn.elu", {scaled}, {{"alpha", 1.0}}), alpha})};
}

// x where x > alpha, else 0.
Outputs ThresholdedRelu(NodeContext& ctx) {
  return {Activate(ctx, {"thresholdedrelu", ctx.AttrFloat("alpha", 1.0f)}, ctx.Input(0))};
}

// Pad (opset 11 on) whose pads, constant_value or axes only a run knows: pad_dims computes
// the output's dimensions then (checking the pads against the data and the mode), pad_to
// reads there.
graph::Expr PadAtRunTime(NodeContext& ctx, const std::string& mode) {
  std::vector<int64_t> pads_shape = ctx.InputShape(1);
  if (pads_shape.size() != 1 || pads_shape[0] % 2 != 0) {
    ctx.Fail("pads must be a 1-d tensor of an even length, got shape " + IntsText(pads_shape));
  }
  const int64_t k = pads_shape[0] / 2, rank = ctx.InputRank(0);
  graph::Expr axes;
  if (ctx.HasInput(3)) {
    axes = ctx.Input(3);
  } else if (k != rank) {
    ctx.Fail("pads has " + std::to_string(2 * k) + " values; without axes it needs " +
             std::to_string(2 * rank) + " (a begin and an end for each dimension)");
  } else {
    runtime::NDArray every = runtime::NDArray::Empty({k}, DataType::Int(64));
    for (int64_t d = 0; d < k; ++d) static_cast<int64_t*>(every.data())[d] = d;
    axes = ctx.Const(every);
  }
  graph::Expr value = ctx.HasInput(2) ? ctx.Input(2) : ctx.Scalar(0, ctx.InputDtype(0));
  graph::Expr dims = ctx.Call("pad_dims", {ctx.Input(0), ctx.Input(1), axes}, {{"pad_mode", mode}});
  return ctx.Call(
      "pad_to",
      {ctx.Input(0), ctx.Input(1), axes, value, SizesOfValue(ctx, dims, dims, kUnbounded, "sizes")},
      {{"pad_mode", mode}});
}

// Pad: pads (every dimension's begin, then every end) as an attribute before opset 11, as a
// constant input from it on (with constant_value, and axes from opset 18).
Outputs Pad(NodeContext& ctx) {
  const std::string mode = ctx.AttrString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap") {
    ctx.Fail("mode '" + mode + "' is not supported; supported: constant, reflect, edge, wrap");
  }
  int rank = ctx.InputRank(0);
  std::vector<int64_t> pads;
  double value = 0;
  std::vector<int64_t> axes;
  if (ctx.opset() < 11) {
    pads = ctx.AttrInts(ctx.opset() < 2 ? "paddings" : "pads");
    value = ctx.AttrFloat("value", 0.0f);
  } else {
    for (int i = 1; i <= 3; ++i) {
      if (ctx.HasInput(i) && !ctx.ConstantInput(i)) return {PadAtRunTime(ctx, mode)};
    }
    pads = ctx.ConstantInts(1);
    if (ctx.HasInput(2)) value = ctx.ConstantFloats(2).at(0);
    if (ctx.HasInput(3)) axes = ctx.ConstantInts(3);
  }
  if (axes.empty()) {
    for (int d = 0; d < rank; ++d) axes.push_back(d);
  }
  if (pads.size() != 2 * axes.size()) {
    ctx.Fail("pads " + IntsText(pads) + " must have " + std::to_string(2 * axes.size()) +
             " values (a begin and an end for each of " + std::to_string(axes.size()) +
             " dimensions)");
  }
  std::vector<int64_t> width(2 * static_cast<size_t>(rank), 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t axis = axes[k] < 0 ? axes[k] + rank : axes[k];
    if (axis < 0 || axis >= rank) ctx.Fail("axis " + std::to_string(axes[k]) + " is out of range");
    width[axis] = pads[k];
    width[axis + rank] = pads[k + axes.size()];
  }
  return {ctx.Call("nn.pad", {ctx.Input(0)},
                   {{"pad_width", width}, {"pad_value", value}, {"pad_mode", mode}})};
}

// The parts of a resize the graph operators image.resize2d and image.resize_to take: the
// two trailing dimensions resized.
struct ResizeSpec {
  std::string mode = "nearest";
  std::string coordinates = "half_pixel";
  std::string rounding = "round_prefer_floor";
  double cubic_coeff_a = -0.75;
  int64_t exclude_outside = 0;
  double extrapolation_value = 0;
};

// An operand of a resize, with its values when they are constants.
struct KnownOperand {
  graph::Expr value;
  std::optional<std::vector<double>> known;
};
KnownOperand OperandOf(const NodeContext& ctx, int i) {
  KnownOperand operand{ctx.Input(i), std::nullopt};
  if (ctx.ConstantInput(i)) operand.known = ctx.ConstantFloats(i);
  return operand;
}

// How the node resizes: by scales or sizes, of which dimensions (ONNX axes), under which
// keep_aspect_ratio_policy; and the roi for tf_crop_and_resize (none: undefined value).
struct ResizeOperand {
  KnownOperand operand;
  bool sizes = false;
  std::vector<int64_t> axes;
  std::string policy = "stretch";
  KnownOperand roi;
};

// The spec's attributes, checked to be ones Loom supports.
graph::Attrs ResizeSpecAttrs(const NodeContext& ctx, const ResizeSpec& spec) {
  auto supported = [&](const std::string& value, const std::vector<std::string>& choices,
                       const char* what) {
    for (const std::string& choice : choices) {
      if (value == choice) return;
    }
    std::string list;
    for (const std::string& choice : choices) list += (list.empty() ? "" : ", ") + choice;
    ctx.Fail(std::string(what) + " '" + value + "' is not supported; supported: " + list);
  };
  supported(spec.mode, {"nearest", "linear", "cubic"}, "mode");
  supported(spec.coordinates,
            {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
             "tf_crop_and_resize", "half_pixel_symmetric"},
            "coordinate_transformation_mode");
  supported(spec.rounding, {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"},
            "nearest_mode");
  return {{"mode", spec.mode},
          {"coordinate_transformation_mode", spec.coordinates},
          {"nearest_mode", spec.rounding},
          {"cubic_coeff_a", spec.cubic_coeff_a},
          {"exclude_outside", spec.exclude_outside},
          {"extrapolation_value", spec.extrapolation_value}};
}

// A resize whose operand (or roi) only a run knows, or whose input has symbolic dimensions:
// resize_dims computes (and checks) the output's dimensions then, image.resize_to resizes.
graph::Expr ResizeAtRunTime(NodeContext& ctx, const ResizeSpec& spec, const ResizeOperand& by) {
  graph::Attrs attrs = ResizeSpecAttrs(ctx, spec);
  if (ctx.InputRank(0) < 2) ctx.Fail("the input needs two spatial (trailing) dimensions to resize");
  graph::Attrs operand = {{"operand", std::string(by.sizes ? "sizes" : "scales")},
                          {"axes", graph::Ints(by.axes)},
                          {"keep_aspect_ratio_policy", by.policy}};
  for (const auto& [name, value] : operand.values()) attrs = attrs.With(name, value);
  graph::Expr roi = by.roi.value.defined()
                        ? by.roi.value
                        : ctx.Const(runtime::NDArray::Empty({0}, DataType::Float(32)));
  graph::Expr dims = ctx.Call("resize_dims", {ctx.Input(0), by.operand.value}, operand);
  return ctx.Call(
      "image.resize_to",
      {ctx.Input(0), by.operand.value, roi, SizesOfValue(ctx, dims, dims, kUnbounded, "sizes")},
      attrs);
}

// A resize whose operand and roi are constants, of an input of constant shape: the output
// size and the scales mapping coordinates computed now (as resize_dims would), for
// image.resize2d.
graph::Expr ResizeNow(NodeContext& ctx, const ResizeSpec& spec, const ResizeOperand& by) {
  graph::Attrs attrs = ResizeSpecAttrs(ctx, spec);
  const std::vector<int64_t> in = ctx.InputShape(0);
  const size_t rank = in.size(), k = by.axes.size();
  if (rank < 2) ctx.Fail("the input needs two spatial (trailing) dimensions to resize");
  const std::vector<double>& operand = *by.operand.known;
  if (operand.size() != k) {
    ctx.Fail(std::string(by.sizes ? "sizes" : "scales") + " must have " + std::to_string(k) +
             " values (one per axis), got " + std::to_string(operand.size()));
  }
  // Each dimension's scale (1 where not listed), as topi::ResizeScales computes it.
  std::vector<double> scales(rank, 1.0);
  std::vector<int64_t> out = in;
  std::optional<double> common;
  for (size_t j = 0; j < k; ++j) {
    const size_t d = static_cast<size_t>(by.axes[j]);
    if (by.sizes && operand[j] < 0) {
      ctx.Fail("size " + std::to_string(static_cast<int64_t>(operand[j])) + " of dimension " +
               std::to_string(d) + " is negative");
    }
    if (by.sizes && in[d] == 0) {
      ctx.Fail("dimension " + std::to_string(d) +
               " of the input is empty: it has nothing to "
               "resize to size " +
               std::to_string(static_cast<int64_t>(operand[j])));
    }
    if (!by.sizes && !(operand[j] > 0 && operand[j] * static_cast<double>(in[d]) < 0x1p62)) {
      ctx.Fail("scale " + std::to_string(operand[j]) + " of dimension " + std::to_string(d) +
               " must be positive (and the scaled size fit int64)");
    }
    scales[d] = by.sizes ? operand[j] / static_cast<double>(in[d]) : operand[j];
    out[d] = by.sizes ? static_cast<int64_t>(operand[j])
                      : static_cast<int64_t>(std::floor(scales[d] * static_cast<double>(in[d])));
    if (by.policy != "stretch") {
      common = !common                     ? scales[d]
               : by.policy == "not_larger" ? std::min(*common, scales[d])
                                           : std::max(*common, scales[d]);
    }
  }
  for (size_t j = 0; common && j < k; ++j) {
    const size_t d = static_cast<size_t>(by.axes[j]);
    scales[d] = *common;
    out[d] = static_cast<int64_t>(*common * static_cast<double>(in[d]) + 0.5);
  }
  for (size_t d = 0; d + 2 < rank; ++d) {
    if (scales[d] != 1.0) {
      ctx.Fail("only the two trailing (spatial) dimensions can be resized, got " + IntsText(in) +
               " -> " + IntsText(out));
    }
  }
  graph::Floats roi = {0, 0, 1, 1};
  if (by.roi.value.defined()) {
    const std::vector<double>& given = *by.roi.known;
    if (given.size() != 2 * k) ctx.Fail("roi must have " + std::to_string(2 * k) + " values");
    for (size_t j = 0; j < k; ++j) {
      const size_t d = static_cast<size_t>(by.axes[j]);
      if (d + 2 >= rank) {
        roi[d + 2 - rank] = given[j];
        roi[d + 4 - rank] = given[j + k];
      }
    }
  }
  // A scale that is the sizes' ratio exactly (a whole upsampling, sizes stretched) maps
  // coordinates by that ratio, in float32; any other by itself, in float64.
  graph::Floats given_scales;
  for (size_t d = rank - 2; (!by.sizes || common) && d < rank; ++d) {
    if (scales[d] * static_cast<double>(in[d]) != static_cast<double>(out[d])) {
      given_scales = {scales[rank - 2], scales[rank - 1]};
    }
  }
  return ctx.Call("image.resize2d", {ctx.Input(0)},
                  attrs.With("size", graph::Ints{out[rank - 2], out[rank - 1]})
                      .With("roi", roi)
                      .With("scales", given_scales));
}

graph::Expr ResizeBy(NodeContext& ctx, const ResizeSpec& spec, const ResizeOperand& by) {
  const bool now = ctx.Input(0).type().ConstShape().has_value() && by.operand.known &&
                   (!by.roi.value.defined() || by.roi.known);
  return now ? ResizeNow(ctx, spec, by) : ResizeAtRunTime(ctx, spec, by);
}

// Every dimension of input 0, as ONNX axes.
std::vector<int64_t> EveryAxis(const NodeContext& ctx) {
  std::vector<int64_t> axes(static_cast<size_t>(ctx.InputRank(0)));
  for (size_t d = 0; d < axes.size(); ++d) axes[d] = static_cast<int64_t>(d);
  return axes;
}

// Upsample (opsets 7-9; scales an attribute, then an input) and Resize-10: asymmetric
// coordinates, nearest rounding down (numpy.repeat for whole scales).
Outputs Upsample(NodeContext& ctx) {
  ResizeSpec spec;
  spec.mode = ctx.AttrString("mode", "nearest");
  if (spec.mode == "bilinear") spec.mode = "linear";
  spec.coordinates = "asymmetric";
  spec.rounding = "floor";
  ResizeOperand by;
  by.axes = EveryAxis(ctx);
  if (ctx.op_type() == "Upsample" && ctx.opset() < 9) {
    std::vector<float> attr = ctx.AttrFloats("scales");
    runtime::NDArray scales =
        runtime::NDArray::Empty({static_cast<int64_t>(attr.size())}, DataType::Float(32));
    std::copy(attr.begin(), attr.end(), static_cast<float*>(scales.data()));
    by.operand = {ctx.Const(scales), std::vector<double>(attr.begin(), attr.end())};
  } else {
    by.operand = OperandOf(ctx, 1);
  }
  return {ResizeBy(ctx, spec, by)};
}

// Resize from opset 11: inputs X, roi, scales, sizes (sizes win when given), with axes and
// keep_aspect_ratio_policy from opset 18.
Outputs Resize(NodeContext& ctx) {
  if (ctx.opset() < 11) return Upsample(ctx);
  ResizeSpec spec;
  spec.mode = ctx.AttrString("mode", "nearest");
  spec.coordinates = ctx.AttrString("coordinate_transformation_mode", "half_pixel");
  spec.rounding = ctx.AttrString("nearest_mode", "round_prefer_floor");
  spec.cubic_coeff_a = ctx.AttrFloat("cubic_coeff_a", -0.75f);
  spec.exclude_outside = ctx.AttrInt("exclude_outside", 0);
  spec.extrapolation_value = ctx.AttrFloat("extrapolation_value", 0.0f);
  if (ctx.AttrInt("antialias", 0) != 0) ctx.Fail("antialias = 1 is not supported");
  ResizeOperand by;
  by.policy = ctx.AttrString("keep_aspect_ratio_policy", "stretch");
  if (by.policy != "stretch" && by.policy != "not_larger" && by.policy != "not_smaller") {
    ctx.Fail("keep_aspect_ratio_policy '" + by.policy +
             "' is not supported; supported: stretch, not_larger, not_smaller");
  }
  const int64_t rank = ctx.InputRank(0);
  by.axes = ctx.AttrInts("axes", std::vector<int64_t>{});
  if (by.axes.empty()) by.axes = EveryAxis(ctx);
  const std::vector<int64_t> listed = by.axes;
  for (size_t j = 0; j < by.axes.size(); ++j) {
    int64_t& axis = by.axes[j];
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) ctx.Fail("axes " + IntsText(listed) + " are out of range");
    // A repeated axis would take two scales (the constant path would keep the last).
    if (std::find(by.axes.begin(), by.axes.begin() + j, axis) != by.axes.begin() + j) {
      ctx.Fail("axes " + IntsText(listed) + " name dimension " + std::to_string(axis) + " twice");
    }
  }
  // An absent or empty operand is not the one given.
  auto given = [&](int i) {
    if (!ctx.HasInput(i)) return false;
    const std::vector<PrimExpr>& shape = ctx.Input(i).type().shape();
    int64_t length = -1;
    return !(shape.size() == 1 && IsConstInt(shape[0], &length) && length == 0);
  };
  by.sizes = given(3);
  if (!by.sizes && !given(2)) ctx.Fail("one of the inputs scales and sizes must be given");
  by.operand = OperandOf(ctx, by.sizes ? 3 : 2);
  if (!by.sizes) by.policy = "stretch";  // ONNX: the policy applies to sizes only
  if (spec.coordinates == "tf_crop_and_resize") by.roi = OperandOf(ctx, 1);
  return {ResizeBy(ctx, spec, by)};
}

// A converter calling the unary graph operator `op` with float attributes read from the node
// (each ONNX attribute under the graph attribute's name, with the ONNX default).
struct FloatAttrMap {
  const char* onnx;
  const char* graph;
  float fallback;
};

Converter Unary(std::string op, std::vector<FloatAttrMap> attrs = {}) {
  return [op = std::move(op), attrs = std::move(attrs)](NodeContext& ctx) -> Outputs {
    graph::Attrs values;
    for (const FloatAttrMap& attr : attrs) {
      values =
          values.With(attr.graph, static_cast<double>(ctx.AttrFloat(attr.onnx, attr.fallback)));
    }
    return {ctx.Call(op, {ctx.Input(0)}, values)};
  };
}

LOOM_REGISTER_ONNX_CONVERTER("Conv", Conv);
LOOM_REGISTER_ONNX_CONVERTER("ConvTranspose", ConvTranspose);
LOOM_REGISTER_ONNX_CONVERTER("BatchNormalization", BatchNormalization);
LOOM_REGISTER_ONNX_CONVERTER("MaxPool", MaxPool);
LOOM_REGISTER_ONNX_CONVERTER("AveragePool",
                             [](NodeContext& ctx) { return Pool(ctx, "nn.avg_pool2d"); });
LOOM_REGISTER_ONNX_CONVERTER("GlobalAveragePool", [](NodeContext& ctx) {
  return GlobalPool(ctx, "nn.global_avg_pool2d", "mean");
});
LOOM_REGISTER_ONNX_CONVERTER("GlobalMaxPool", [](NodeContext& ctx) {
  return GlobalPool(ctx, "nn.global_max_pool2d", "max");
});
LOOM_REGISTER_ONNX_CONVERTER("Gemm", Gemm);
LOOM_REGISTER_ONNX_CONVERTER("Flatten", Flatten);
LOOM_REGISTER_ONNX_CONVERTER("Relu", Unary("nn.relu"));
LOOM_REGISTER_ONNX_CONVERTER("Sigmoid", Unary("sigmoid"));
LOOM_REGISTER_ONNX_CONVERTER("LeakyRelu", Unary("nn.leaky_relu", {{"alpha", "alpha", 0.01f}}));
LOOM_REGISTER_ONNX_CONVERTER("Elu", Unary("nn.elu", {{"alpha", "alpha", 1.0f}}));
LOOM_REGISTER_ONNX_CONVERTER("Selu",
                             Unary("nn.selu", {{"alpha", "alpha", 1.67326319217681884765625f},
                                               {"gamma", "gamma", 1.05070102214813232421875f}}));
LOOM_REGISTER_ONNX_CONVERTER("HardSigmoid", Unary("nn.hard_sigmoid", {{"alpha", "alpha", 0.2f},
                                                                      {"beta", "beta", 0.5f}}));
LOOM_REGISTER_ONNX_CONVERTER("HardSwish", Unary("nn.hard_swish"));
LOOM_REGISTER_ONNX_CONVERTER("Softplus", Unary("nn.softplus"));
LOOM_REGISTER_ONNX_CONVERTER("PRelu", [](NodeContext& ctx) -> Outputs {
  return {ctx.Call("nn.prelu", {ctx.Input(0), ctx.Input(1)})};
});
LOOM_REGISTER_ONNX_CONVERTER("Celu", Celu);
LOOM_REGISTER_ONNX_CONVERTER("ThresholdedRelu", ThresholdedRelu);
LOOM_REGISTER_ONNX_CONVERTER("Softsign", [](NodeContext& ctx) -> Outputs {
  return {Activate(ctx, {"softsign"}, ctx.Input(0))};
});
LOOM_REGISTER_ONNX_CONVERTER("Clip", Clip);
LOOM_REGISTER_ONNX_CONVERTER("Dropout", Dropout);
LOOM_REGISTER_ONNX_CONVERTER("Identity",
                             [](NodeContext& ctx) -> Outputs { return {ctx.Input(0)}; });
LOOM_REGISTER_ONNX_CONVERTER("Pad", Pad);
LOOM_REGISTER_ONNX_CONVERTER("LRN", [](NodeContext& ctx) -> Outputs {
  return {ctx.Call("nn.lrn", {ctx.Input(0)},
                   {{"size", ctx.AttrInt("size")},
                    {"alpha", static_cast<double>(ctx.AttrFloat("alpha", 1e-4f))},
                    {"beta", static_cast<double>(ctx.AttrFloat("beta", 0.75f))},
                    {"bias", static_cast<double>(ctx.AttrFloat("bias", 1.0f))}})};
});
LOOM_REGISTER_ONNX_CONVERTER("InstanceNormalization", [](NodeContext& ctx) -> Outputs {
  return {ctx.Call("nn.instance_norm", {ctx.Input(0), ctx.Input(1), ctx.Input(2)},
                   {{"epsilon", static_cast<double>(ctx.AttrFloat("epsilon", 1e-5f))}})};
});
LOOM_REGISTER_ONNX_CONVERTER("DepthToSpace", [](NodeContext& ctx) -> Outputs {
  std::string mode = ctx.AttrString("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") ctx.Fail("mode '" + mode + "' is not DCR or CRD");
  return {ctx.Call("depth_to_space", {ctx.Input(0)},
                   {{"blocksize", ctx.AttrInt("blocksize")}, {"mode", mode}})};
});
LOOM_REGISTER_ONNX_CONVERTER("SpaceToDepth", [](NodeContext& ctx) -> Outputs {
  return {ctx.Call("space_to_depth", {ctx.Input(0)}, {{"blocksize", ctx.AttrInt("blocksize")}})};
});
LOOM_REGISTER_ONNX_CONVERTER("Upsample", Upsample);
LOOM_REGISTER_ONNX_CONVERTER("Resize", Resize);

}  // namespace
}  // namespace loom::frontend::onnx
