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
