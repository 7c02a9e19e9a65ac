// Quantization operators: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
// MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv, with ONNX's semantics.
//
//   quantize:   q = saturate(round_half_to_even(x / scale) + zero_point)
//   dequantize: x = (q - zero_point) * scale
//   integer products: (a - a_zero_point) . (b - b_zero_point) in int32
//   QLinear*: the integer product requantized: saturate(round(acc * (a_scale * b_scale /
//   y_scale)) + y_zero_point), the multiplier and the rounding in float32
//
// Scales and zero points are per tensor (scalars), per axis (1-D, one per slice along `axis`)
// or, for QuantizeLinear and DequantizeLinear, per block (opset 21's block_size). They are checked
// where they are constants: a scale must be positive and finite, a zero point must have the
// quantized tensor's type, a per-axis parameter as many values as the axis has slices. Everything
// computes with graph operators (cast, round, clip, conv2d, matmul in int32), so the quantized
// model runs wherever those run.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "frontend/onnx/converter.h"

namespace loom::frontend::onnx {
namespace {

using graph::Expr;

const DataType kF32 = DataType::Float(32);
const DataType kI32 = DataType::Int(32);

bool IsQuantizedType(DataType t) {
  return (t.is_int() || t.is_uint()) && t.lanes() == 1 &&
         (t.bits() == 8 || t.bits() == 16 || (t.is_int() && t.bits() == 32));
}

double TypeMin(DataType t) { return t.is_uint() ? 0.0 : -std::ldexp(1.0, t.bits() - 1); }
double TypeMax(DataType t) {
  return t.is_uint() ? std::ldexp(1.0, t.bits()) - 1 : std::ldexp(1.0, t.bits() - 1) - 1;
}

std::string InputName(const NodeContext& ctx, int i) {
  return "input " + std::to_string(i) + " ('" + ctx.node().input(i) + "')";
}

// A constant scale's values must be positive and finite.
void CheckScaleValues(NodeContext& ctx, int param) {
  if (!ctx.ConstantInput(param)) return;
  for (double s : ctx.ConstantFloats(param)) {
    if (!(s > 0) || !std::isfinite(s)) {
      ctx.Fail(InputName(ctx, param) + ", a scale, holds " + std::to_string(s) +
               "; scales must be positive and finite");
    }
  }
}

// A scale or zero point of `x` (input `param`): a scalar (or one value), or a 1-D tensor of one
// value per slice of `x` along `axis` (negative counts from the end; only checked for a
// per-axis parameter): as a 0-d tensor, or as the 1-d one with `axis` normalized. Checks the
// shape, and for a constant scale that every value is positive and finite.
Expr AxisParam(NodeContext& ctx, int param, const std::vector<int64_t>& x_shape, int64_t* axis,
               bool is_scale) {
  const std::vector<int64_t> shape = ctx.InputShape(param);
  if (shape.size() > 1) {
    ctx.Fail(InputName(ctx, param) + " has rank " + std::to_string(shape.size()) +
             "; a per-tensor parameter is a scalar, a per-axis one 1-D (a blocked one needs "
             "block_size)");
  }
  if (is_scale) CheckScaleValues(ctx, param);
  Expr value = ctx.Input(param);
  if (shape.empty()) return value;
  const int64_t count = shape[0];
  if (count == 1) return ctx.Call("reshape", {value}, {{"newshape", std::vector<int64_t>{}}});
  const int64_t rank = static_cast<int64_t>(x_shape.size());
  if (rank > 0) *axis = NormalizeAxis(ctx, *axis, rank);
  if (rank == 0 || x_shape[static_cast<size_t>(*axis)] != count) {
    ctx.Fail(InputName(ctx, param) + " has " + std::to_string(count) + " values, but axis " +
             std::to_string(*axis) + " of the tensor it applies to has " +
             (rank == 0 ? std::string("no slices (a scalar)")
                        : std::to_string(x_shape[static_cast<size_t>(*axis)]) + " slices") +
             "; a per-axis parameter has one value per slice");
  }
  return value;
}

// AxisParam's value reshaped to broadcast against `x`.
Expr QuantParam(NodeContext& ctx, int param, const std::vector<int64_t>& x_shape, int64_t axis,
                bool is_scale) {
  Expr value = AxisParam(ctx, param, x_shape, &axis, is_scale);
  if (value.type().ndim() == 0) return value;
  std::vector<int64_t> broadcast(x_shape.size(), 1);
  broadcast[static_cast<size_t>(axis)] = x_shape[static_cast<size_t>(axis)];
  return ctx.Call("reshape", {value}, {{"newshape", broadcast}});
}

// The zero point's input, which must have `expected` type (the quantized tensor's).
void CheckZeroPointType(NodeContext& ctx, int param, DataType expected, const std::string& of) {
  if (ctx.InputDtype(param) != expected) {
    ctx.Fail(InputName(ctx, param) + ", the zero point of " + of + ", is " +
             ctx.InputDtype(param).str() + "; it must have " + of + "'s type, " + expected.str());
  }
}

Expr Cast(NodeContext& ctx, Expr x, DataType t) {
  return ctx.Call("cast", {std::move(x)}, {{"dtype", t.str()}});
}

// x as float32: the arithmetic of quantization runs in float32 whatever the float type of
// the data or the scales (float16 and double models).
Expr AsFloat32(NodeContext& ctx, Expr x) {
  return x.type().dtype() == kF32 ? x : Cast(ctx, std::move(x), kF32);
}

// round_half_to_even(v) + zero_point, saturated to `t` and cast to it (v float32).
Expr Saturate(NodeContext& ctx, Expr v, std::optional<Expr> zero_point, DataType t) {
  Expr q = ctx.Call("round", {std::move(v)});
  if (zero_point) q = ctx.Call("add", {q, Cast(ctx, *zero_point, kF32)});
  q = ctx.Call("clip", {q}, {{"a_min", TypeMin(t)}, {"a_max", TypeMax(t)}});
  return Cast(ctx, q, t);
}

// x - zero_point in int32 (the zero point, if any, broadcast as QuantParam makes it).
Expr Centered(NodeContext& ctx, Expr x, std::optional<Expr> zero_point) {
  Expr wide = Cast(ctx, std::move(x), kI32);
  if (!zero_point) return wide;
  return ctx.Call("subtract", {wide, Cast(ctx, *zero_point, kI32)});
}

// A parameter of blocked quantization (opset 21's block_size): the shape of `x` but for
// ceil(D / block_size) values along `axis`, each for block_size consecutive slices; repeated
// block_size times along the axis (and cut to D) to match `x` element for element.
Expr BlockParam(NodeContext& ctx, int param, const std::vector<int64_t>& x_shape, int64_t axis,
                int64_t block_size, bool is_scale) {
  const int64_t rank = static_cast<int64_t>(x_shape.size());
  if (rank == 0) ctx.Fail("block_size needs a tensor to quantize, not a scalar");
  axis = NormalizeAxis(ctx, axis, rank);
  const size_t a = static_cast<size_t>(axis);
  const int64_t blocks = (x_shape[a] + block_size - 1) / block_size;
  std::vector<int64_t> expected = x_shape;
  expected[a] = blocks;
  if (block_size < 0 || ctx.InputShape(param) != expected) {
    std::string want;
    for (int64_t d : expected) want += (want.empty() ? "" : "x") + std::to_string(d);
    ctx.Fail(InputName(ctx, param) + " must have shape " + want + " for block_size " +
             std::to_string(block_size) + " along axis " + std::to_string(axis));
  }
  if (is_scale) CheckScaleValues(ctx, param);
  std::vector<int64_t> split = x_shape, repeated = x_shape;
  split[a] = blocks;
  split.insert(split.begin() + axis + 1, 1);
  repeated[a] = blocks;
  repeated.insert(repeated.begin() + axis + 1, block_size);
  std::vector<int64_t> merged = x_shape;
  merged[a] = blocks * block_size;
  Expr value = ctx.Call("reshape", {ctx.Input(param)}, {{"newshape", split}});
  value = ctx.Call("broadcast_to", {value}, {{"shape", repeated}});
  value = ctx.Call("reshape", {value}, {{"newshape", merged}});
  if (merged[a] == x_shape[a]) return value;
  return ctx.Call("strided_slice", {value},
                  {{"begin", std::vector<int64_t>{0}},
                   {"end", std::vector<int64_t>{x_shape[a]}},
                   {"axes", std::vector<int64_t>{axis}},
                   {"strides", std::vector<int64_t>{1}}});
}

// A scale or zero point of the quantized tensor, per tensor, per axis or per block.
Expr ScaleOrZeroPoint(NodeContext& ctx, int param, const std::vector<int64_t>& x_shape,
                      bool is_scale) {
  const int64_t axis = ctx.AttrInt("axis", 1), block_size = ctx.AttrInt("block_size", 0);
  if (block_size != 0) return BlockParam(ctx, param, x_shape, axis, block_size, is_scale);
  return QuantParam(ctx, param, x_shape, axis, is_scale);
}

Outputs QuantizeLinear(NodeContext& ctx) {
  const std::vector<int64_t> x_shape = ctx.InputShape(0);
  DataType t = DataType::UInt(8);
  if (ctx.HasInput(2)) {
    t = ctx.InputDtype(2);
  } else if (ctx.HasAttr("output_dtype")) {
    t = DataTypeOfOnnx(static_cast<int32_t>(ctx.AttrInt("output_dtype")), ctx.Where());
  }
  if (!IsQuantizedType(t)) {
    ctx.Fail("quantizes to " + t.str() + "; Loom quantizes to int8, uint8, int16 and uint16");
  }
  if (ctx.AttrInt("saturate", 1) != 1 && !t.is_int() && !t.is_uint()) {
    ctx.Fail("saturate = 0 applies to float8 types, which Loom does not have");
  }
  Expr x = AsFloat32(ctx, ctx.Input(0));
  Expr scale = AsFloat32(ctx, ScaleOrZeroPoint(ctx, 1, x_shape, true));
  std::optional<Expr> zero_point;
  if (ctx.HasInput(2)) zero_point = ScaleOrZeroPoint(ctx, 2, x_shape, false);
  return {Saturate(ctx, ctx.Call("divide", {x, scale}), zero_point, t)};
}

Outputs DequantizeLinear(NodeContext& ctx) {
  const std::vector<int64_t> x_shape = ctx.InputShape(0);
  const DataType t = ctx.InputDtype(0);
  if (!IsQuantizedType(t)) {
    ctx.Fail("dequantizes " + t.str() + "; Loom dequantizes int8, uint8, int16, uint16 and int32");
  }
  if (ctx.HasInput(2)) CheckZeroPointType(ctx, 2, t, "input 0");
  const DataType out = ctx.InputDtype(1);
  Expr y;
  if (ctx.AttrInt("block_size", 0) != 0) {
    Expr scale = AsFloat32(ctx, ScaleOrZeroPoint(ctx, 1, x_shape, true));
    Expr x = Cast(ctx, ctx.Input(0), kF32);
    if (ctx.HasInput(2)) {
      x = ctx.Call("subtract", {x, Cast(ctx, ScaleOrZeroPoint(ctx, 2, x_shape, false), kF32)});
    }
    y = ctx.Call("multiply", {x, scale});
  } else {
    // One operator, which FoldQuantizedProducts recognizes.
    int64_t axis = ctx.AttrInt("axis", 1);
    Expr scale = AsFloat32(ctx, AxisParam(ctx, 1, x_shape, &axis, true));
    Expr zero_point;
    if (ctx.HasInput(2)) {
      int64_t zero_point_axis = ctx.AttrInt("axis", 1);
      zero_point = AxisParam(ctx, 2, x_shape, &zero_point_axis, false);
    } else {
      zero_point = ctx.Scalar(0, t);
    }
    if (zero_point.type().ndim() != scale.type().ndim()) {
      // One per axis, the other per tensor: both per axis.
      std::vector<int64_t> slices = {x_shape[static_cast<size_t>(axis)]};
      auto widen = [&](Expr v) {
        return v.type().ndim() == 1 ? v : ctx.Call("broadcast_to", {v}, {{"shape", slices}});
      };
      scale = widen(scale);
      zero_point = widen(zero_point);
    }
    y = ctx.Call("qnn.dequantize", {ctx.Input(0), scale, zero_point}, {{"axis", axis}});
  }
  return {out == kF32 ? y : Cast(ctx, y, out)};
}

// ONNX DynamicQuantizeLinear: uint8 with the scale and zero point that map [min(x, 0),
// max(x, 0)] onto [0, 255].
Outputs DynamicQuantizeLinear(NodeContext& ctx) {
  if (ctx.InputDtype(0) != kF32)
    ctx.Fail("quantizes " + ctx.InputDtype(0).str() + "; it takes float32");
  Expr x = ctx.Input(0);
  const int64_t rank = ctx.InputRank(0);
  std::vector<int64_t> all(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) all[static_cast<size_t>(d)] = d;
  graph::Attrs reduce = {{"axis", all}, {"keepdims", int64_t{0}}};
  Expr zero = ctx.Scalar(0, kF32);
  Expr high = ctx.Call("maximum", {ctx.Call("max", {x}, reduce), zero});
  Expr low = ctx.Call("minimum", {ctx.Call("min", {x}, reduce), zero});
  Expr scale = ctx.Call("divide", {ctx.Call("subtract", {high, low}), ctx.Scalar(255, kF32)});
  const DataType u8 = DataType::UInt(8);
  Expr zero_point = Saturate(ctx, ctx.Call("subtract", {zero, ctx.Call("divide", {low, scale})}),
                             std::nullopt, u8);
  Expr y = Saturate(ctx, ctx.Call("divide", {x, scale}), zero_point, u8);
  return {y, scale, zero_point};
}

// The zero point of an integer product's operand `input` (its input `param`), broadcast: for
// the left operand a scalar or one per row (axis -2), for the right one a scalar or one per
// column (axis -1), for a convolution's weight one per output channel (axis 0).
std::optional<Expr> ProductZeroPoint(NodeContext& ctx, int param, int input, int64_t axis) {
  if (!ctx.HasInput(param)) return std::nullopt;
  CheckZeroPointType(ctx, param, ctx.InputDtype(input), "input " + std::to_string(input));
  return QuantParam(ctx, param, ctx.InputShape(input), axis, false);
}

void CheckInteger8(NodeContext& ctx, std::initializer_list<int> inputs) {
  for (int i : inputs) {
    const DataType t = ctx.InputDtype(i);
    if (t != DataType::Int(8) && t != DataType::UInt(8)) {
      ctx.Fail(InputName(ctx, i) + " is " + t.str() + "; it must be int8 or uint8");
    }
  }
}

Expr IntegerMatMul(NodeContext& ctx, int a, int a_zp, int b, int b_zp) {
  CheckInteger8(ctx, {a, b});
  Expr lhs = Centered(ctx, ctx.Input(a), ProductZeroPoint(ctx, a_zp, a, -2));
  Expr rhs = Centered(ctx, ctx.Input(b), ProductZeroPoint(ctx, b_zp, b, -1));
  return ctx.Call("nn.matmul", {lhs, rhs});
}

Expr IntegerConv(NodeContext& ctx, int x, int x_zp, int w, int w_zp, std::optional<int> bias) {
  CheckInteger8(ctx, {x, w});
  if (ctx.InputRank(x) != 4) {
    ctx.Fail("takes a 4-d input (N, C, H, W); got rank " + std::to_string(ctx.InputRank(x)));
  }
  if (ctx.HasAttr("auto_pad") && ctx.AttrString("auto_pad") != "NOTSET") {
    ctx.Fail("auto_pad " + ctx.AttrString("auto_pad") + " is not supported; give pads");
  }
  std::optional<Expr> x_zero_point;
  if (ctx.HasInput(x_zp)) {
    CheckZeroPointType(ctx, x_zp, ctx.InputDtype(x), "input " + std::to_string(x));
    if (!ctx.InputShape(x_zp).empty() && ctx.InputShape(x_zp) != std::vector<int64_t>{1}) {
      ctx.Fail(InputName(ctx, x_zp) + ": the input's zero point must be a scalar");
    }
    x_zero_point = ctx.Call("reshape", {ctx.Input(x_zp)}, {{"newshape", std::vector<int64_t>{}}});
  }
  std::optional<Expr> w_zero_point = ProductZeroPoint(ctx, w_zp, w, 0);
  const std::vector<int64_t> kernel = ctx.InputShape(w);
  const std::vector<int64_t> pads = ctx.AttrInts("pads", {0, 0, 0, 0});
  graph::Attrs attrs = {{"strides", ctx.AttrInts("strides", {1, 1})},
                        {"padding", pads},
                        {"dilation", ctx.AttrInts("dilations", {1, 1})},
                        {"groups", ctx.AttrInt("group", 1)}};
  // Constant zero points, one per tensor: the integer convolution operator (which the target's
  // int8 kernels take); otherwise an int32 convolution of the centered operands.
  auto constant_zero_point = [&](int param) -> std::optional<int64_t> {
    if (!ctx.HasInput(param)) return 0;
    if (!ctx.ConstantInput(param)) return std::nullopt;
    std::vector<int64_t> values = ctx.ConstantInts(param);
    for (int64_t v : values) {
      if (v != values.front()) return std::nullopt;
    }
    return values.front();
  };
  std::optional<int64_t> data_zero = constant_zero_point(x_zp);
  std::optional<int64_t> weight_zero = constant_zero_point(w_zp);
  Expr acc;
  if (data_zero && weight_zero) {
    acc = ctx.Call("qnn.conv2d", {ctx.Input(x), ctx.Input(w)},
                   attrs.With("data_zero_point", *data_zero).With("weight_zero_point", *weight_zero));
  } else {
    Expr data = Centered(ctx, ctx.Input(x), x_zero_point);
    Expr weight = Centered(ctx, ctx.Input(w), w_zero_point);
    acc = ctx.Call("nn.conv2d", {data, weight}, attrs);
  }
  if (bias && ctx.HasInput(*bias)) {
    if (ctx.InputDtype(*bias) != kI32) {
      ctx.Fail(InputName(ctx, *bias) + ", the bias, is " + ctx.InputDtype(*bias).str() +
               "; it must be int32");
    }
    Expr b = ctx.Call("reshape", {ctx.Input(*bias)},
                      {{"newshape", std::vector<int64_t>{1, kernel[0], 1, 1}}});
    acc = ctx.Call("add", {acc, b});
  }
  return acc;
}

// acc (int32) requantized: round(acc * (a_scale * b_scale / y_scale)) + y_zero_point,
// saturated to the zero point's type. The scales are per tensor, or (b_scale) per output
// channel, along `out_axis` of the result (of shape `out_shape`).
Expr Requantize(NodeContext& ctx, Expr acc, int a_scale, int b_scale, int y_scale, int y_zp,
                const std::vector<int64_t>& out_shape, int64_t out_axis) {
  Expr sa = AsFloat32(ctx, QuantParam(ctx, a_scale, {}, 0, true));
  // b's scale is per tensor or per output channel: broadcast against the result.
  Expr sb = AsFloat32(ctx, QuantParam(ctx, b_scale, out_shape, out_axis, true));
  Expr sy = AsFloat32(ctx, QuantParam(ctx, y_scale, {}, 0, true));
  Expr multiplier = ctx.Call("divide", {ctx.Call("multiply", {sa, sb}), sy});
  const DataType t = ctx.InputDtype(y_zp);
  if (t != DataType::Int(8) && t != DataType::UInt(8)) {
    ctx.Fail(InputName(ctx, y_zp) + ", the output's zero point, is " + t.str() +
             "; it must be int8 or uint8");
  }
  Expr zero_point = QuantParam(ctx, y_zp, {}, 0, false);
  return Saturate(ctx, ctx.Call("multiply", {Cast(ctx, acc, kF32), multiplier}), zero_point, t);
}

Outputs MatMulInteger(NodeContext& ctx) { return {IntegerMatMul(ctx, 0, 2, 1, 3)}; }

Outputs ConvInteger(NodeContext& ctx) { return {IntegerConv(ctx, 0, 2, 1, 3, std::nullopt)}; }

Outputs QLinearMatMul(NodeContext& ctx) {
  Expr acc = IntegerMatMul(ctx, 0, 2, 3, 5);
  std::vector<int64_t> a = ctx.InputShape(0), b = ctx.InputShape(3);
  std::vector<int64_t> out = a.size() >= b.size() ? a : b;
  out.back() = b.back();
  out[out.size() - 2] = a[a.size() - 2];
  return {Requantize(ctx, acc, 1, 4, 6, 7, out, static_cast<int64_t>(out.size()) - 1)};
}

Outputs QLinearConv(NodeContext& ctx) {
  Expr acc = IntegerConv(ctx, 0, 2, 3, 5, 8);
  std::vector<int64_t> out = ctx.InputShape(0);
  out[1] = ctx.InputShape(3)[0];
  return {Requantize(ctx, acc, 1, 4, 6, 7, out, 1)};
}

LOOM_REGISTER_ONNX_CONVERTER("QuantizeLinear", QuantizeLinear);
LOOM_REGISTER_ONNX_CONVERTER("DequantizeLinear", DequantizeLinear);
LOOM_REGISTER_ONNX_CONVERTER("DynamicQuantizeLinear", DynamicQuantizeLinear);
LOOM_REGISTER_ONNX_CONVERTER("MatMulInteger", MatMulInteger);
LOOM_REGISTER_ONNX_CONVERTER("ConvInteger", ConvInteger);
LOOM_REGISTER_ONNX_CONVERTER("QLinearMatMul", QLinearMatMul);
LOOM_REGISTER_ONNX_CONVERTER("QLinearConv", QLinearConv);

}  // namespace
}  // namespace loom::frontend::onnx
