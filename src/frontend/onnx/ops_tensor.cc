// Converters of the ONNX tensor operators: constants and shapes (folded at import), shape
// changes, joining, splitting, slicing, gathering, expanding and tiling.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "frontend/onnx/converter.h"
#include "frontend/onnx/shape_values.h"
#include "loom/arith/analyzer.h"

namespace loom::frontend::onnx {
namespace {

using graph::Expr;
using graph::Ints;
using runtime::NDArray;

std::string Text(const std::vector<int64_t>& values) { return runtime::ShapeString(values); }

int64_t NumElements(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  return count;
}

NDArray Int64Array(const std::vector<int64_t>& values, bool scalar = false) {
  std::vector<int64_t> shape;
  if (!scalar) shape.push_back(static_cast<int64_t>(values.size()));
  NDArray array = NDArray::Empty(shape, DataType::Int(64));
  if (!values.empty()) array.CopyFromBytes(values.data(), values.size() * sizeof(int64_t));
  return array;
}

NDArray Float32Array(const std::vector<float>& values, bool scalar = false) {
  std::vector<int64_t> shape;
  if (!scalar) shape.push_back(static_cast<int64_t>(values.size()));
  NDArray array = NDArray::Empty(shape, DataType::Float(32));
  if (!values.empty()) array.CopyFromBytes(values.data(), values.size() * sizeof(float));
  return array;
}

// x with the fully resolved `shape` (no 0 or -1 entries to interpret). A tensor without
// elements is a constant: reshape would read a 0 in the shape as "copy this dimension".
Expr ReshapeTo(NodeContext& ctx, Expr x, const std::vector<int64_t>& shape) {
  if (NumElements(shape) == 0) return ctx.Const(NDArray::Empty(shape, x.type().dtype()));
  return ctx.Call("reshape", {std::move(x)}, {{"newshape", Ints(shape)}});
}

// Constant: exactly one of value (a tensor), value_float(s) or value_int(s).
Outputs ConvertConstant(NodeContext& ctx) {
  if (ctx.HasAttr("value")) return {ctx.Const(ctx.AttrTensor("value"))};
  if (ctx.HasAttr("value_float")) {
    return {ctx.Const(Float32Array({ctx.AttrFloat("value_float")}, /*scalar=*/true))};
  }
  if (ctx.HasAttr("value_floats")) return {ctx.Const(Float32Array(ctx.AttrFloats("value_floats")))};
  if (ctx.HasAttr("value_int")) {
    return {ctx.Const(Int64Array({ctx.AttrInt("value_int")}, /*scalar=*/true))};
  }
  if (ctx.HasAttr("value_ints")) return {ctx.Const(Int64Array(ctx.AttrInts("value_ints")))};
  ctx.Fail(
      "only tensor, float and integer values are supported (value, value_float(s), "
      "value_int(s)); string and sparse constants are not");
}

// Shape: the input's dimensions start..end (opset 15; negative values count from the end,
// both clamped into [0, rank]).
Outputs ConvertShape(NodeContext& ctx) {
  std::vector<int64_t> shape = ctx.InputShape(0);
  int64_t rank = static_cast<int64_t>(shape.size());
  auto clamp = [rank](int64_t i) { return std::clamp(i < 0 ? i + rank : i, int64_t{0}, rank); };
  int64_t start = clamp(ctx.AttrInt("start", 0));
  int64_t end = std::max(start, clamp(ctx.AttrInt("end", rank)));
  return {ctx.Const(Int64Array({shape.begin() + start, shape.begin() + end}))};
}

Outputs ConvertSize(NodeContext& ctx) {
  return {ctx.Const(Int64Array({NumElements(ctx.InputShape(0))}, /*scalar=*/true))};
}

// Reshape: a 0 copies the input's dimension at that position (unless allowzero = 1, opset
// 14), one -1 is inferred from the element count.
// Whether some element of `value` is not constant.
bool IsSymbolic(const ShapeValue& value) {
  return std::any_of(value.elements.begin(), value.elements.end(),
                     [](const PrimExpr& e) { return !IsConstInt(e); });
}

// Sizes computed from symbolic ones (shape_values.h) as an operator's integers: constants as
// themselves, the others as dimensions of the tensor they came from (*like; like_dims[k]
// names the dimension, else -1 and sizes[k] is the constant). One that is neither is an
// error naming `what`.
void SymbolicSizes(NodeContext& ctx, const ShapeValue& value, const std::string& what, Ints* sizes,
                   Ints* like_dims, graph::Expr* like) {
  for (size_t k = 0; k < value.elements.size(); ++k) {
    int64_t constant = 0;
    const bool is_constant = IsConstInt(value.elements[k], &constant);
    like_dims->push_back(is_constant ? -1 : DimensionOfOrigin(value, k, like));
    sizes->push_back(is_constant ? constant : 1);
    if (!is_constant && like_dims->back() < 0) {
      ctx.Fail("its " + what + " " + ShapeValueText(value) +
               " holds a size that is neither "
               "constant nor a dimension of the tensor it was computed from; bind the model's "
               "symbolic dimensions with --input-shape");
    }
  }
}

// Reshape to a target computed from symbolic sizes (shape_values.h): an entry equal to the
// input's dimension at its position copies it (0); entries that are dimensions of another
// tensor (x.view(y.size(0), y.size(1), -1)) take them from there (reshape_like); one other
// is inferred (-1).
Outputs SymbolicReshape(NodeContext& ctx, const ShapeValue& target) {
  graph::Expr data = ctx.Input(0);
  const std::vector<PrimExpr>& dims = data.type().shape();
  arith::Analyzer analyzer;
  std::vector<int64_t> shape, like_dims;
  graph::Expr like;
  for (size_t i = 0; i < target.elements.size(); ++i) {
    const PrimExpr& e = target.elements[i];
    int64_t value = 0;
    like_dims.push_back(-1);
    if (IsConstInt(e, &value)) {
      shape.push_back(value);
      continue;
    }
    if (i < dims.size() && analyzer.CanProveEqual(e, cast(DataType::Int(64), dims[i]))) {
      shape.push_back(0);
      continue;
    }
    // A dimension of the tensor it came from (the first such tensor serves every entry).
    like_dims.back() = DimensionOfOrigin(target, i, &like);
    shape.push_back(like_dims.back() >= 0 ? 1 : -1);  // 1: unused, like's dimension is taken
  }
  if (std::count(shape.begin(), shape.end(), -1) > 1) {
    ctx.Fail("the shape " + ShapeValueText(target) +
             " has more than one entry that is neither "
             "constant, nor the input's dimension at its position, nor a dimension of the "
             "tensor it was computed from; bind the model's symbolic dimensions with "
             "--input-shape");
  }
  if (ctx.AttrInt("allowzero", 0) != 0 && std::count(shape.begin(), shape.end(), 0) > 0) {
    ctx.Fail("allowzero with a symbolic shape " + ShapeValueText(target) +
             "; bind the model's symbolic dimensions with --input-shape");
  }
  if (!like.defined() ||
      std::all_of(like_dims.begin(), like_dims.end(), [](int64_t d) { return d < 0; })) {
    return {ctx.Call("reshape", {data}, {{"newshape", graph::Ints(shape.begin(), shape.end())}})};
  }
  return {ctx.Call("reshape_like", {data, like},
                   {{"newshape", graph::Ints(shape.begin(), shape.end())},
                    {"like_dims", graph::Ints(like_dims.begin(), like_dims.end())}})};
}

Outputs ConvertReshape(NodeContext& ctx) {
  // Opset 5 on, the shape is an input: constant, or computed from symbolic sizes.
  std::optional<ShapeValue> target = ctx.opset() < 5 ? std::nullopt : ctx.ShapeInput(1);
  if (target && IsSymbolic(*target)) {
    return SymbolicReshape(ctx, *target);
  }
  bool allow_zero = ctx.AttrInt("allowzero", 0) != 0;
  if (ctx.opset() >= 5 && !target) {
    // A shape only a run knows: reshape_dims resolves its 0s and -1 then, and checks it.
    return {ShapedAtRunTime(ctx, ctx.Input(0), "reshape_dims", {{"allowzero", int64_t{allow_zero}}},
                            "reshape_to", {}, "shape")};
  }
  std::vector<int64_t> shape = ctx.opset() < 5 ? ctx.AttrInts("shape") : ctx.ConstantInts(1);
  if (!ctx.Input(0).type().ConstShape()) {
    // Symbolic sizes (the VM's models): the graph operator resolves 0 and -1 in terms of
    // them, and says so when it cannot.
    if (allow_zero && std::find(shape.begin(), shape.end(), 0) != shape.end()) {
      ctx.Fail("allowzero with a 0 in shape " + Text(shape) +
               " makes an empty tensor of an "
               "input of symbolic size; bind the model's symbolic dimensions with --input-shape");
    }
    return {ctx.Call("reshape", {ctx.Input(0)}, {{"newshape", Ints(shape.begin(), shape.end())}})};
  }
  std::vector<int64_t> input = ctx.InputShape(0);
  int inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allow_zero) {
      if (i >= input.size()) {
        ctx.Fail("shape " + Text(shape) + " copies dimension " + std::to_string(i) +
                 " (a 0) that the input " + Text(input) + " does not have");
      }
      shape[i] = input[i];
    }
    if (shape[i] == -1) {
      if (inferred >= 0) ctx.Fail("shape " + Text(shape) + " has more than one -1");
      inferred = static_cast<int>(i);
    } else if (shape[i] < 0) {
      ctx.Fail("shape " + Text(shape) + " holds a negative dimension other than -1");
    } else if (__builtin_mul_overflow(known, shape[i], &known)) {
      ctx.Fail("shape " + Text(shape) + " has more elements than int64 can count");
    }
  }
  int64_t count = NumElements(input);
  if (inferred >= 0) {
    if (known == 0 || count % known != 0) {
      ctx.Fail("cannot infer the -1 of shape " + Text(shape) + " for an input of shape " +
               Text(input));
    }
    shape[static_cast<size_t>(inferred)] = count / known;
  }
  if (NumElements(shape) != count) {
    ctx.Fail("shape " + Text(shape) + " has " + std::to_string(NumElements(shape)) +
             " elements, the input " + Text(input) + " has " + std::to_string(count));
  }
  return {ReshapeTo(ctx, ctx.Input(0), shape)};
}

Outputs ConvertTranspose(NodeContext& ctx) {
  int64_t rank = ctx.InputRank(0);
  Ints perm = ctx.AttrInts("perm", Ints{});
  if (perm.empty()) {
    for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
  }
  return {ctx.Call("transpose", {ctx.Input(0)}, {{"axes", perm}})};
}

// Whether Squeeze's / Unsqueeze's axes are input 1 (opset 13 on), a tensor only a run knows.
bool AxesAtRunTime(NodeContext& ctx) {
  return ctx.opset() >= 13 && ctx.HasInput(1) && !ctx.ConstantInput(1);
}

// The axes of Squeeze / Unsqueeze: an attribute before opset 13, input 1 from then on.
Ints AxesOperand(NodeContext& ctx) {
  if (ctx.opset() < 13) return ctx.AttrInts("axes", Ints{});
  return ctx.HasInput(1) ? ctx.ConstantInts(1) : Ints{};
}

// Squeeze: the listed dimensions (which must be 1) removed; no axes removes every 1.
Outputs ConvertSqueeze(NodeContext& ctx) {
  if (AxesAtRunTime(ctx)) {
    Expr y = ShapedAtRunTime(ctx, ctx.Input(0), "squeeze_dims", {}, "reshape_to", {}, "axes");
    // Every dimension squeezed: squeeze_dims kept one of 1 (to refuse axes that do not fit).
    std::vector<int64_t> axes_shape = ctx.InputShape(1);
    if (axes_shape.size() == 1 && axes_shape[0] == ctx.InputRank(0)) y = ScalarOfOne(ctx, y);
    return {y};
  }
  if (!ctx.Input(0).type().ConstShape() && !AxesOperand(ctx).empty()) {
    const std::vector<PrimExpr>& dims = ctx.Input(0).type().shape();
    Ints axes = AxesOperand(ctx);
    bool ones = true;
    for (int64_t& axis : axes) {
      axis = NormalizeAxis(ctx, axis, static_cast<int64_t>(dims.size()));
      int64_t size = 0;
      ones = ones && IsConstInt(dims[static_cast<size_t>(axis)], &size) && size == 1;
    }
    // Squeezed dimensions of constant size 1 among others only a run knows.
    if (ones) return {ctx.Call("squeeze", {ctx.Input(0)}, {{"axes", axes}})};
    // Squeezed sizes only a run knows: squeeze_dims checks then that each is 1.
    runtime::NDArray operand =
        runtime::NDArray::Empty({static_cast<int64_t>(axes.size())}, DataType::Int(64));
    std::copy(axes.begin(), axes.end(), static_cast<int64_t*>(operand.data()));
    Expr y = ShapedAtRunTime(ctx, ctx.Input(0), "squeeze_dims", {}, "reshape_to", {}, "axes",
                             ctx.Const(operand));
    if (static_cast<int>(axes.size()) == ctx.InputRank(0)) y = ScalarOfOne(ctx, y);
    return {y};
  }
  std::vector<int64_t> shape = ctx.InputShape(0);
  int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<bool> removed(shape.size(), false);
  Ints axes = AxesOperand(ctx);
  for (int64_t axis : axes) {
    int64_t d = NormalizeAxis(ctx, axis, rank);
    if (shape[d] != 1) {
      ctx.Fail("cannot squeeze dimension " + std::to_string(axis) + " of size " +
               std::to_string(shape[d]) + " (input " + Text(shape) + ")");
    }
    removed[d] = true;
  }
  std::vector<int64_t> result;
  for (size_t d = 0; d < shape.size(); ++d) {
    bool remove = axes.empty() ? shape[d] == 1 : removed[d];
    if (!remove) result.push_back(shape[d]);
  }
  return {ReshapeTo(ctx, ctx.Input(0), result)};
}

// Unsqueeze: dimensions of size 1 inserted at `axes`, positions in the output's rank.
Outputs ConvertUnsqueeze(NodeContext& ctx) {
  if (AxesAtRunTime(ctx)) {
    return {ShapedAtRunTime(ctx, ctx.Input(0), "unsqueeze_dims", {}, "reshape_to", {}, "axes")};
  }
  Ints axes = AxesOperand(ctx);
  if (axes.empty()) ctx.Fail("needs at least one axis");
  int64_t out_rank = ctx.InputRank(0) + static_cast<int64_t>(axes.size());
  if (!ctx.Input(0).type().ConstShape()) {
    // Symbolic sizes: one new dimension after another, in increasing output position.
    Ints positions;
    for (int64_t axis : axes) positions.push_back(NormalizeAxis(ctx, axis, out_rank));
    std::sort(positions.begin(), positions.end());
    if (std::adjacent_find(positions.begin(), positions.end()) != positions.end()) {
      ctx.Fail("axes " + Text(axes) + " repeat a dimension");
    }
    Expr x = ctx.Input(0);
    for (int64_t d : positions) x = ctx.Call("expand_dims", {x}, {{"axis", d}});
    return {x};
  }
  std::vector<int64_t> shape = ctx.InputShape(0);
  std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
  for (int64_t axis : axes) {
    int64_t d = NormalizeAxis(ctx, axis, out_rank);
    if (inserted[d]) ctx.Fail("axes " + Text(axes) + " repeat dimension " + std::to_string(d));
    inserted[d] = true;
  }
  std::vector<int64_t> result;
  size_t next = 0;
  for (int64_t d = 0; d < out_rank; ++d) result.push_back(inserted[d] ? 1 : shape[next++]);
  return {ReshapeTo(ctx, ctx.Input(0), result)};
}

Outputs ConvertConcat(NodeContext& ctx) {
  std::vector<Expr> inputs;
  for (int i = 0; i < ctx.NumInputs(); ++i) {
    if (ctx.HasInput(i)) inputs.push_back(ctx.Input(i));
  }
  if (inputs.empty()) ctx.Fail("needs at least one input");
  int64_t axis = NormalizeAxis(ctx, ctx.AttrInt("axis", 1), ctx.InputRank(0));
  return {ctx.Call("concatenate", inputs, {{"axis", axis}})};
}

// Split: explicit sizes (attribute `split` before opset 13, input 1 from then on), else
// opset 18's num_outputs (pieces of ceil(d / n), the last smaller), else equal pieces, one
// per node output.
// Split (opset 13 on) whose sizes only a run knows: split_dims checks them then, and each
// output is one piece at those sizes.
Outputs SplitAtRunTime(NodeContext& ctx, int64_t axis, int outputs, const Expr& split) {
  const graph::Type& type = split.type();
  if (type.ndim() != 1 || type.NumElements() != std::optional<int64_t>(outputs)) {
    ctx.Fail("split must be a 1-d tensor of " + std::to_string(outputs) +
             " sizes (one per output), got " + type.str());
  }
  Expr dims = ctx.Call("split_dims", {ctx.Input(0), split}, {{"axis", axis}});
  Expr sizes = SizesOfValue(ctx, dims, dims, kUnbounded, "sizes");
  Outputs pieces;
  for (int64_t i = 0; i < outputs; ++i) {
    pieces.push_back(
        ctx.Call("split_piece_to", {ctx.Input(0), sizes}, {{"axis", axis}, {"index", i}}));
  }
  return pieces;
}

Outputs ConvertSplit(NodeContext& ctx) {
  const graph::Type& type = ctx.Input(0).type();
  int64_t axis = NormalizeAxis(ctx, ctx.AttrInt("axis", 0), type.ndim());
  int64_t dim = -1;
  const bool dim_known = IsConstInt(type.shape()[static_cast<size_t>(axis)], &dim);
  const std::string shape = type.ConstShape() ? Text(*type.ConstShape()) : type.str();
  int outputs = ctx.node().output_size();
  if (outputs < 1) ctx.Fail("needs at least one output");
  if (ctx.opset() >= 13 && ctx.HasInput(1) && !ctx.ConstantInput(1)) {
    return SplitAtRunTime(ctx, axis, outputs, ctx.Input(1));
  }
  Ints sizes;
  if (ctx.opset() < 13) {
    sizes = ctx.AttrInts("split", Ints{});
  } else if (ctx.HasInput(1)) {
    sizes = ctx.ConstantInts(1);
  }
  if (!dim_known) {
    // A dimension only a run knows: the sizes checked against it then (split_dims); equal
    // pieces are its quotient by the output count, which must divide it.
    if (sizes.empty()) {
      Expr dims = ctx.Call("shape_of", {ctx.Input(0)});
      Expr length =
          ctx.Call("take", {dims, ctx.Scalar(static_cast<double>(axis), DataType::Int(64))},
                   {{"axis", int64_t{0}}});
      Expr piece = ctx.Call("divide", {length, ctx.Scalar(outputs, DataType::Int(64))});
      piece = ctx.Call("reshape", {piece}, {{"newshape", Ints{1}}});
      std::vector<Expr> pieces(static_cast<size_t>(outputs), piece);
      return SplitAtRunTime(ctx, axis, outputs,
                            ctx.Call("concatenate", pieces, {{"axis", int64_t{0}}}));
    }
    runtime::NDArray split =
        runtime::NDArray::Empty({static_cast<int64_t>(sizes.size())}, DataType::Int(64));
    std::copy(sizes.begin(), sizes.end(), static_cast<int64_t*>(split.data()));
    return SplitAtRunTime(ctx, axis, outputs, ctx.Const(split));
  }
  Ints parts;  // the split operator's indices_or_sections
  if (!sizes.empty()) {
    if (static_cast<int>(sizes.size()) != outputs) {
      ctx.Fail("split " + Text(sizes) + " has " + std::to_string(sizes.size()) + " sizes for " +
               std::to_string(outputs) + " outputs");
    }
    int64_t total = 0;
    for (int64_t size : sizes) {
      if (size < 0 || __builtin_add_overflow(total, size, &total)) {
        ctx.Fail("split " + Text(sizes) + " must hold non-negative sizes that sum to dimension " +
                 std::to_string(axis) + " of the input " + shape);
      }
    }
    if (total != dim) {
      ctx.Fail("split " + Text(sizes) + " sums to " + std::to_string(total) + ", dimension " +
               std::to_string(axis) + " of the input " + shape + " is " + std::to_string(dim));
    }
    // One entry would mean a piece count.
    parts = sizes.size() == 1 ? Ints{1} : sizes;
  } else if (ctx.opset() >= 18 && ctx.HasAttr("num_outputs")) {
    int64_t count = ctx.AttrInt("num_outputs");
    if (count != outputs) {
      ctx.Fail("num_outputs " + std::to_string(count) + " differs from the node's " +
               std::to_string(outputs) + " outputs");
    }
    parts = {count};
  } else {
    if (dim % outputs != 0) {
      ctx.Fail("dimension " + std::to_string(axis) + " of the input " + shape +
               " does not split into " + std::to_string(outputs) + " equal pieces");
    }
    parts = {outputs};
  }
  Expr tuple = ctx.Call("split", {ctx.Input(0)}, {{"indices_or_sections", parts}, {"axis", axis}});
  Outputs result;
  for (int i = 0; i < outputs; ++i) result.push_back(graph::MakeTupleGetItem(tuple, i));
  return result;
}

// Slice: starts / ends / axes as attributes before opset 10; from then on the inputs
// starts, ends, axes and steps. Negative values count from the end, and out-of-range ones
// are clamped (INT64_MAX: to the end).
// Slice whose ends are symbolic sizes (an exporter's position_ids[:, :seq]): slice_like
// takes each such end from the tensor it came from.
Outputs SymbolicSlice(NodeContext& ctx, const ShapeValue& ends_value) {
  Ints starts = ctx.ConstantInts(1), ends, like_dims;
  graph::Expr like;
  SymbolicSizes(ctx, ends_value, "ends", &ends, &like_dims, &like);
  Ints axes = ctx.HasInput(3) ? ctx.ConstantInts(3) : Ints{};
  if (axes.empty()) {
    for (size_t d = 0; d < starts.size(); ++d) axes.push_back(static_cast<int64_t>(d));
  }
  if (ctx.HasInput(4)) {
    for (int64_t step : ctx.ConstantInts(4)) {
      if (step != 1) ctx.Fail("slices to symbolic ends with steps of 1 only");
    }
  }
  if (starts.size() != ends.size() || axes.size() != ends.size()) {
    ctx.Fail("starts " + Text(starts) + ", ends " + ShapeValueText(ends_value) + " and axes " +
             Text(axes) + " must have one entry per sliced axis");
  }
  for (int64_t& axis : axes) axis = NormalizeAxis(ctx, axis, ctx.InputRank(0));
  for (int64_t start : starts) {
    if (start < 0) ctx.Fail("slices to symbolic ends from starts of 0 or more only");
  }
  return {ctx.Call("slice_like", {ctx.Input(0), like},
                   {{"begin", starts}, {"end", ends}, {"axes", axes}, {"like_dims", like_dims}})};
}

// Slice (opset 10 on) whose starts, ends, axes or steps only a run knows: slice_dims computes
// the output's dimensions then (checking the axes and steps), strided_slice_to reads there.
Outputs SliceAtRunTime(NodeContext& ctx) {
  std::vector<int64_t> shape = ctx.InputShape(1);
  if (shape.size() != 1) ctx.Fail("starts must be a 1-d tensor, got shape " + Text(shape));
  const int64_t k = shape[0];
  std::vector<int64_t> first_axes, ones(static_cast<size_t>(k), 1);
  for (int64_t j = 0; j < k; ++j) first_axes.push_back(j);
  std::vector<Expr> operands = {ctx.Input(0), ctx.Input(1), ctx.Input(2),
                                ctx.HasInput(3) ? ctx.Input(3) : ctx.Const(Int64Array(first_axes)),
                                ctx.HasInput(4) ? ctx.Input(4) : ctx.Const(Int64Array(ones))};
  Expr dims = ctx.Call("slice_dims", operands);
  operands.push_back(SizesOfValue(ctx, dims, dims, kUnbounded, "sizes"));
  return {ctx.Call("strided_slice_to", operands)};
}

Outputs ConvertSlice(NodeContext& ctx) {
  int64_t rank = ctx.InputRank(0);
  Ints starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    starts = ctx.AttrInts("starts");
    ends = ctx.AttrInts("ends");
    axes = ctx.AttrInts("axes", Ints{});
  } else {
    // Ends computed from symbolic sizes (a sequence length) with constant starts, axes and
    // steps stay sizes; any other operand only a run knows is read then.
    const bool others_constant = ctx.ConstantInput(1) &&
                                 (!ctx.HasInput(3) || ctx.ConstantInput(3)) &&
                                 (!ctx.HasInput(4) || ctx.ConstantInput(4));
    if (std::optional<ShapeValue> symbolic = ctx.ShapeInput(2);
        others_constant && symbolic && IsSymbolic(*symbolic)) {
      return SymbolicSlice(ctx, *symbolic);
    }
    for (int i = 1; i <= 4; ++i) {
      if (ctx.HasInput(i) && !ctx.ConstantInput(i)) return SliceAtRunTime(ctx);
    }
    starts = ctx.ConstantInts(1);
    ends = ctx.ConstantInts(2);
    if (ctx.HasInput(3)) axes = ctx.ConstantInts(3);
    if (ctx.HasInput(4)) steps = ctx.ConstantInts(4);
  }
  if (axes.empty()) {
    for (size_t d = 0; d < starts.size(); ++d) axes.push_back(static_cast<int64_t>(d));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    ctx.Fail("starts " + Text(starts) + ", ends " + Text(ends) + ", axes " + Text(axes) +
             " and steps " + Text(steps) + " must have one entry per sliced axis");
  }
  for (int64_t& axis : axes) axis = NormalizeAxis(ctx, axis, rank);
  for (int64_t step : steps) {
    if (step == 0) ctx.Fail("steps " + Text(steps) + " must not hold 0");
  }
  return {ctx.Call("strided_slice", {ctx.Input(0)},
                   {{"begin", starts}, {"end", ends}, {"axes", axes}, {"strides", steps}})};
}

// "[2, 4]" for a constant shape, the type's text ("Tensor[(n, 4), float32]") otherwise.
std::string ShapeOrType(const graph::Type& type) {
  std::optional<std::vector<int64_t>> shape = type.ConstShape();
  return shape ? Text(*shape) : type.str();
}

Converter Gather(const std::string& op) {
  return [op](NodeContext& ctx) -> Outputs {
    int64_t axis = NormalizeAxis(ctx, ctx.AttrInt("axis", 0), ctx.InputRank(0));
    // Constant indices must lie in [-extent, extent): ONNX leaves anything else undefined,
    // and a kernel would clamp them silently.
    int64_t extent = 0;
    if (ctx.ConstantInput(1).has_value() &&
        IsConstInt(ctx.Input(0).type().shape()[static_cast<size_t>(axis)], &extent)) {
      for (int64_t index : ctx.ConstantInts(1)) {
        if (index < -extent || index >= extent) {
          ctx.Fail("index " + std::to_string(index) + " is outside [" + std::to_string(-extent) +
                   ", " + std::to_string(extent - 1) + "], the range of axis " +
                   std::to_string(axis) + " of data " + ShapeOrType(ctx.Input(0).type()));
        }
      }
    }
    return {ctx.Call(op, {ctx.Input(0), ctx.Input(1)}, {{"axis", axis}})};
  };
}

Outputs ConvertExpand(NodeContext& ctx) {
  if (std::optional<ShapeValue> symbolic = ctx.ShapeInput(1); symbolic && IsSymbolic(*symbolic)) {
    // Sizes computed from symbolic ones: expand_like takes them from the tensor they came from.
    Ints shape, like_dims;
    graph::Expr like;
    SymbolicSizes(ctx, *symbolic, "shape", &shape, &like_dims, &like);
    return {ctx.Call("expand_like", {ctx.Input(0), like},
                     {{"shape", shape}, {"like_dims", like_dims}})};
  }
  if (!ctx.ConstantInput(1)) {
    return {ShapedAtRunTime(ctx, ctx.Input(0), "broadcast_dims", {}, "expand_to", {}, "shape")};
  }
  return {ctx.Call("expand", {ctx.Input(0)}, {{"shape", ctx.ConstantInts(1)}})};
}

Outputs ConvertTile(NodeContext& ctx) {
  if (ctx.opset() < 6) ctx.Fail("the opset 1 form (tiles and axis inputs) is not supported");
  if (!ctx.ConstantInput(1)) {
    return {ShapedAtRunTime(ctx, ctx.Input(0), "tile_dims", {}, "tile_to", {}, "repeats")};
  }
  Ints repeats = ctx.ConstantInts(1);
  if (static_cast<int64_t>(repeats.size()) != ctx.InputRank(0)) {
    ctx.Fail("repeats " + Text(repeats) + " must have one entry per input dimension (input " +
             Text(ctx.InputShape(0)) + ")");
  }
  return {ctx.Call("tile", {ctx.Input(0)}, {{"reps", repeats}})};
}

// ConstantOfShape: a constant of the given shape filled with `value` (one element; float32
// 0 by default).
Outputs ConvertConstantOfShape(NodeContext& ctx) {
  std::optional<ShapeValue> symbolic = ctx.ShapeInput(0);
  if ((symbolic && IsSymbolic(*symbolic)) || !ctx.ConstantInput(0)) {
    NDArray value = ctx.HasAttr("value") ? ctx.AttrTensor("value") : Float32Array({0.0f}, true);
    if (value.NumElements() != 1) {
      ctx.Fail("attribute 'value' must hold one element, got " + Text(value.Shape()));
    }
    Ints shape, like_dims;
    graph::Expr like;
    if (symbolic) {
      // Sizes computed from symbolic ones: full_like takes them from the tensor they came from.
      SymbolicSizes(ctx, *symbolic, "shape", &shape, &like_dims, &like);
    } else {
      // A shape only a run knows: its values become sizes then.
      like = SizesOfValue(ctx, ctx.Input(0), ctx.Input(0), kUnbounded, "shape");
      const int64_t rank = like.type().ndim() - 1;
      shape.assign(static_cast<size_t>(rank), 0);
      for (int64_t d = 0; d < rank; ++d) like_dims.push_back(d);
    }
    double fill = 0;
    const void* data = value.data();
    if (value.dtype() == DataType::Float(32)) {
      fill = *static_cast<const float*>(data);
    } else if (value.dtype() == DataType::Int(64)) {
      fill = static_cast<double>(*static_cast<const int64_t*>(data));
    } else if (value.dtype() == DataType::Int(32)) {
      fill = *static_cast<const int32_t*>(data);
    } else if (value.dtype().bits() == 8 || value.dtype().is_bool()) {
      fill = *static_cast<const uint8_t*>(data);
    } else {
      ctx.Fail("fills " + value.dtype().str() +
               " to a symbolic shape; float32, int64, int32 "
               "and 8-bit values are supported");
    }
    return {ctx.Call("full_like", {like},
                     {{"shape", shape},
                      {"like_dims", like_dims},
                      {"value", fill},
                      {"dtype", value.dtype().str()}})};
  }
  Ints shape = ctx.ConstantInts(0);
  for (int64_t d : shape) {
    if (d < 0) ctx.Fail("shape " + Text(shape) + " holds a negative dimension");
  }
  NDArray value = ctx.HasAttr("value") ? ctx.AttrTensor("value") : Float32Array({0.0f}, true);
  if (value.NumElements() != 1) {
    ctx.Fail("attribute 'value' must hold one element, got " + Text(value.Shape()));
  }
  CheckedTensorBytes(shape, value.dtype(), ctx.Where() + ": its output",
                     kMaxComputedConstantBytes);
  NDArray result = NDArray::Empty(shape, value.dtype());
  size_t bytes = runtime::ElementBytes(value.dtype());
  auto* out = static_cast<uint8_t*>(result.data());
  for (int64_t k = 0; k < result.NumElements(); ++k)
    std::memcpy(out + k * bytes, value.data(), bytes);
  return {ctx.Const(result)};
}

// Range: start, start + delta, ... before limit: computed at import from constant scalars,
// else at run time (its length a size read then).
Outputs ConvertRange(NodeContext& ctx) {
  if (std::optional<ShapeValue> limit = ctx.ShapeInput(1); limit && IsSymbolic(*limit)) {
    // A limit computed from a symbolic size (torch.arange(seq)): arange_like takes it from
    // the tensor it came from.
    Ints starts = ctx.ConstantInts(0), deltas = ctx.ConstantInts(2);
    graph::Expr like;
    int64_t dim = limit->elements.size() == 1 ? DimensionOfOrigin(*limit, 0, &like) : -1;
    if (starts.size() != 1 || deltas.size() != 1 || dim < 0) {
      ctx.Fail("its limit " + ShapeValueText(*limit) +
               " is symbolic and not a dimension of "
               "the tensor it was computed from, or start and delta are not one constant "
               "each; bind the model's symbolic dimensions with --input-shape");
    }
    return {ctx.Call("arange_like", {like},
                     {{"start", starts[0]},
                      {"delta", deltas[0]},
                      {"like_dim", dim},
                      {"dtype", ctx.InputDtype(0).str()}})};
  }
  if (!ctx.ConstantInput(0) || !ctx.ConstantInput(1) || !ctx.ConstantInput(2)) {
    // Bounds only a run knows: range_length computes the length then.
    Expr length = ctx.Call("range_length", {ctx.Input(0), ctx.Input(1), ctx.Input(2)});
    return {ctx.Call("arange_to", {ctx.Input(0), ctx.Input(2),
                                   SizesOfValue(ctx, length, length, kUnbounded, "length")})};
  }
  auto scalar = [&ctx](int i, const auto& values) {
    if (values.size() != 1) {
      ctx.Fail("input " + std::to_string(i) + " must be a scalar, got " +
               std::to_string(values.size()) + " elements");
    }
    return values[0];
  };
  DataType dtype = ctx.InputDtype(0);
  NDArray result;
  if (dtype.is_float()) {
    double start = scalar(0, ctx.ConstantFloats(0)), limit = scalar(1, ctx.ConstantFloats(1));
    double delta = scalar(2, ctx.ConstantFloats(2));
    if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta)) {
      ctx.Fail("start, limit and delta must be finite and delta must not be 0");
    }
    double length = std::max(std::ceil((limit - start) / delta), 0.0);
    auto count = static_cast<int64_t>(std::min(length, 9.0e18));
    CheckedTensorBytes({count}, dtype, ctx.Where() + ": its output", kMaxComputedConstantBytes);
    result = NDArray::Empty({count}, dtype);
    for (int64_t k = 0; k < count; ++k) {
      SetElement(result, k, start + static_cast<double>(k) * delta);
    }
  } else {
    int64_t start = scalar(0, ctx.ConstantInts(0)), limit = scalar(1, ctx.ConstantInts(1));
    int64_t delta = scalar(2, ctx.ConstantInts(2));
    if (delta == 0) ctx.Fail("delta must not be 0");
    // ceil((limit - start) / delta), in 128 bits so that the difference cannot overflow.
    __int128 span = static_cast<__int128>(limit) - start;
    __int128 length = span / delta + (span % delta != 0 && (span > 0) == (delta > 0) ? 1 : 0);
    auto count = static_cast<int64_t>(std::clamp<__int128>(length, 0, INT64_MAX));
    CheckedTensorBytes({count}, dtype, ctx.Where() + ": its output", kMaxComputedConstantBytes);
    result = NDArray::Empty({count}, dtype);
    // Every element lies in [start, limit), so only a step past the last could overflow.
    for (int64_t k = 0, value = start; k < count; ++k) {
      SetIntElement(result, k, value);
      if (k + 1 < count) value += delta;
    }
  }
  return {ctx.Const(result)};
}

[[maybe_unused]] const bool kRegistered = [] {
  LOOM_REGISTER_ONNX_CONVERTER("Constant", ConvertConstant);
  LOOM_REGISTER_ONNX_CONVERTER("Shape", ConvertShape);
  LOOM_REGISTER_ONNX_CONVERTER("Size", ConvertSize);
  LOOM_REGISTER_ONNX_CONVERTER("Reshape", ConvertReshape);
  LOOM_REGISTER_ONNX_CONVERTER("Transpose", ConvertTranspose);
  LOOM_REGISTER_ONNX_CONVERTER("Squeeze", ConvertSqueeze);
  LOOM_REGISTER_ONNX_CONVERTER("Unsqueeze", ConvertUnsqueeze);
  LOOM_REGISTER_ONNX_CONVERTER("Concat", ConvertConcat);
  LOOM_REGISTER_ONNX_CONVERTER("Split", ConvertSplit);
  LOOM_REGISTER_ONNX_CONVERTER("Slice", ConvertSlice);
  LOOM_REGISTER_ONNX_CONVERTER("Gather", Gather("take"));
  LOOM_REGISTER_ONNX_CONVERTER("GatherElements", Gather("gather_elements"));
  LOOM_REGISTER_ONNX_CONVERTER("Expand", ConvertExpand);
  LOOM_REGISTER_ONNX_CONVERTER("Tile", ConvertTile);
  LOOM_REGISTER_ONNX_CONVERTER("ConstantOfShape", ConvertConstantOfShape);
  LOOM_REGISTER_ONNX_CONVERTER("Range", ConvertRange);
  return true;
}();

}  // namespace
}  // namespace loom::frontend::onnx
