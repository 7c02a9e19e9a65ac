#include <algorithm>
#include <limits>

#include "loom/graph/expr.h"
#include "loom/graph/op_util.h"
#include "loom/support/error.h"

namespace loom::graph::ops {

Array<PrimExpr> PlaceholderShape(const Type& type) {
  Array<PrimExpr> shape;
  for (const PrimExpr& dim : type.shape()) {
    int64_t value = 0;
    bool small = IsConstInt(dim, &value) && value <= std::numeric_limits<int32_t>::max();
    shape.push_back(small ? IntImm(DataType::Int(32), value) : dim);
  }
  return shape;
}

std::vector<te::Tensor> InputPlaceholders(const CallInfo& info) {
  std::vector<te::Tensor> placeholders;
  for (size_t i = 0; i < info.input_types.size(); ++i) {
    const Type& type = info.input_types[i];
    LOOM_CHECK_USER(type.is_tensor())
        << info.where << ": input " << i << " must be a tensor, got " << type.str();
    placeholders.push_back(
        te::placeholder(PlaceholderShape(type), type.dtype(), InputName(info, i)));
  }
  return placeholders;
}

namespace {

std::string InputTypesText(const CallInfo& info) {
  std::string text;
  for (size_t i = 0; i < info.input_types.size(); ++i) {
    text += (i == 0 ? "" : ", ") + InputName(info, i) + " " + info.input_types[i].str();
  }
  return text;
}

Type TypeOf(const te::Tensor& tensor) {
  std::vector<PrimExpr> shape;
  for (const PrimExpr& dim : tensor.shape()) {
    int64_t value = 0;
    shape.push_back(IsConstInt(dim, &value) ? IntImm(DataType::Int(64), value) : dim);
  }
  return TensorType(std::move(shape), tensor.dtype());
}

}  // namespace

TypeRelationFn TypeFromCompute(ComputeFn compute, bool tuple_output) {
  return [compute = std::move(compute), tuple_output](const CallInfo& info) {
    std::vector<te::Tensor> outputs;
    try {
      outputs = compute(info, InputPlaceholders(info));
    } catch (const Error& e) {
      std::string message = e.what();
      if (message.rfind(info.where, 0) == 0) throw;
      LOOM_THROW << info.where << ": " << message << " (inputs: " << InputTypesText(info) << ")";
    }
    LOOM_ICHECK(tuple_output || outputs.size() == 1)
        << info.op->name << "'s compute returned " << outputs.size() << " tensors, not one";
    if (!tuple_output) return TypeOf(outputs[0]);
    std::vector<Type> fields;
    for (const te::Tensor& out : outputs) fields.push_back(TypeOf(out));
    return TupleType(std::move(fields));
  };
}

OpBuilder RegisterComputedOp(const std::string& name, ComputeFn compute, bool tuple_output) {
  OpBuilder builder(OpRegistry::Register(name));
  builder.TypeRelation(TypeFromCompute(compute, tuple_output)).Compute(std::move(compute));
  return builder;
}

template <size_t N>
std::array<int64_t, N> FixedInts(const CallInfo& info, const std::string& attr) {
  const Ints& values = info.attrs.GetInts(attr);
  LOOM_CHECK_USER(values.size() == N)
      << info.where << ": attribute '" << attr << "' must hold " << N << " integer"
      << (N == 1 ? "" : "s") << ", got " << AttrValueText(values);
  std::array<int64_t, N> result{};
  std::copy(values.begin(), values.end(), result.begin());
  return result;
}
template std::array<int64_t, 1> FixedInts<1>(const CallInfo&, const std::string&);
template std::array<int64_t, 2> FixedInts<2>(const CallInfo&, const std::string&);
template std::array<int64_t, 4> FixedInts<4>(const CallInfo&, const std::string&);

namespace {

int CheckedInt(const CallInfo& info, const std::string& attr, int64_t value) {
  LOOM_CHECK_USER(value >= std::numeric_limits<int>::min() &&
                  value <= std::numeric_limits<int>::max())
      << info.where << ": attribute '" << attr << "' is out of range: " << value;
  return static_cast<int>(value);
}

}  // namespace

int IntAttr(const CallInfo& info, const std::string& attr) {
  return CheckedInt(info, attr, info.attrs.GetInt(attr));
}

std::vector<int> IntsAttr(const CallInfo& info, const std::string& attr) {
  std::vector<int> result;
  for (int64_t value : info.attrs.GetInts(attr)) result.push_back(CheckedInt(info, attr, value));
  return result;
}

OpBuilder& ConvAttrFields(OpBuilder& op) {
  return op.Attr("strides", AttrKind::kInts, Ints{1, 1}, "step between windows (h, w)")
      .Attr("padding", AttrKind::kInts, Ints{0, 0, 0, 0}, "zeros: top, left, bottom, right")
      .Attr("dilation", AttrKind::kInts, Ints{1, 1}, "step between kernel taps (h, w)");
}

Attrs WindowAttrs(const CallNode& call) {
  return {{"strides", call.attrs.GetInts("strides")},
          {"padding", call.attrs.GetInts("padding")},
          {"dilation", call.attrs.GetInts("dilation")}};
}

topi::ResizeAttrs ResizeAttrsOf(const CallInfo& info) {
  topi::ResizeAttrs attrs;
  attrs.method =
      static_cast<topi::ResizeMethod>(ChoiceAttr(info, "mode", {"nearest", "linear", "cubic"}));
  attrs.coordinates = static_cast<topi::ResizeCoordinates>(
      ChoiceAttr(info, "coordinate_transformation_mode",
                 {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                  "tf_crop_and_resize", "half_pixel_symmetric"}));
  attrs.rounding = static_cast<topi::ResizeRounding>(ChoiceAttr(
      info, "nearest_mode", {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}));
  attrs.cubic_coeff_a = info.attrs.GetFloat("cubic_coeff_a");
  attrs.exclude_outside = info.attrs.GetInt("exclude_outside") != 0;
  attrs.extrapolation_value = info.attrs.GetFloat("extrapolation_value");
  return attrs;
}

OpBuilder& ResizeAttrFields(OpBuilder& op) {
  return op
      .Attr("mode", AttrKind::kString, std::string("nearest"), "\"nearest\", \"linear\", \"cubic\"")
      .Attr("coordinate_transformation_mode", AttrKind::kString, std::string("half_pixel"),
            "\"half_pixel\", \"pytorch_half_pixel\", \"align_corners\", \"asymmetric\", "
            "\"tf_crop_and_resize\", \"half_pixel_symmetric\"")
      .Attr("nearest_mode", AttrKind::kString, std::string("round_prefer_floor"),
            "\"round_prefer_floor\", \"round_prefer_ceil\", \"floor\", \"ceil\"")
      .Attr("cubic_coeff_a", AttrKind::kFloat, -0.75, "the cubic kernel's parameter")
      .Attr("exclude_outside", AttrKind::kInt, int64_t{0},
            "1: cubic taps outside the image get weight 0")
      .Attr("extrapolation_value", AttrKind::kFloat, 0.0,
            "tf_crop_and_resize value outside the input");
}

topi::ResizeBy ResizeByOf(const CallInfo& info) {
  topi::ResizeBy by;
  by.operand = static_cast<topi::ResizeOperand>(ChoiceAttr(info, "operand", {"scales", "sizes"}));
  by.policy = static_cast<topi::AspectPolicy>(
      ChoiceAttr(info, "keep_aspect_ratio_policy", {"stretch", "not_larger", "not_smaller"}));
  const int64_t rank = static_cast<int64_t>(info.input_types.at(0).shape().size());
  for (int64_t axis : info.attrs.GetInts("axes")) {
    LOOM_CHECK_USER(axis >= 0 && axis < rank &&
                    std::find(by.axes.begin(), by.axes.end(), axis) == by.axes.end())
        << info.where << ": axes " << AttrValueText(info.attrs.GetInts("axes"))
        << " must be distinct dimensions of " << InputName(info, 0) << " (rank " << rank << ")";
    by.axes.push_back(axis);
  }
  return by;
}

OpBuilder& ResizeByFields(OpBuilder& op) {
  return op.Attr("operand", AttrKind::kString, std::nullopt, "\"scales\" or \"sizes\"")
      .Attr("axes", AttrKind::kInts, std::nullopt, "the dimensions the operand lists, in order")
      .Attr("keep_aspect_ratio_policy", AttrKind::kString, std::string("stretch"),
            "sizes: \"stretch\", \"not_larger\" or \"not_smaller\"");
}

Array<PrimExpr> SizesOf(const CallInfo& info, const te::Tensor& sizes) {
  LOOM_CHECK_USER(sizes.ndim() >= 1 && sizes.dtype() == DataType::Int(64))
      << info.where << ": sizes must be the output of dims_of_value, got "
      << info.input_types.back().str();
  Array<PrimExpr> shape = sizes.shape();
  shape.pop_back();
  return shape;
}

topi::Conv2DAttrs Conv2DAttrsOf(const CallInfo& info, int64_t groups) {
  topi::Conv2DAttrs attrs;
  attrs.strides = FixedInts<2>(info, "strides");
  attrs.pads = FixedInts<4>(info, "padding");
  attrs.dilations = FixedInts<2>(info, "dilation");
  attrs.groups = groups;
  return attrs;
}

size_t ChoiceAttr(const CallInfo& info, const std::string& attr,
                  const std::vector<std::string>& choices) {
  const std::string& value = info.attrs.GetString(attr);
  for (size_t i = 0; i < choices.size(); ++i) {
    if (choices[i] == value) return i;
  }
  std::string known;
  for (const std::string& choice : choices)
    known += (known.empty() ? "\"" : ", \"") + choice + "\"";
  LOOM_THROW << info.where << ": attribute '" << attr << "' must be one of " << known << ", got \""
             << value << "\"";
}

}  // namespace loom::graph::ops
