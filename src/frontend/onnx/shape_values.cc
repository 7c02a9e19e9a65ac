#include "frontend/onnx/shape_values.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <string>

#include "loom/arith/analyzer.h"
#include "loom/ir/printer.h"

namespace loom::frontend::onnx {
namespace {

const DataType kI64 = DataType::Int(64);

PrimExpr Int(int64_t value) { return IntImm(kI64, value); }

// Thrown when an operand is no shape value (a tensor of the model's data): the node is then
// no shape arithmetic, and its converter takes it.
struct NotShapeArithmetic {};

// Input i as a shape value.
ShapeValue Operand(const NodeContext& ctx, int i) {
  std::optional<ShapeValue> value = ctx.ShapeInput(i);
  if (!value) throw NotShapeArithmetic{};
  return *value;
}

// A constant index list (Gather's indices, Slice's starts ...).
std::vector<int64_t> Constants(const NodeContext& ctx, int i) {
  ShapeValue value = Operand(ctx, i);
  std::vector<int64_t> ints;
  for (const PrimExpr& e : value.elements) {
    int64_t v = 0;
    if (!IsConstInt(e, &v)) {
      ctx.Fail("input " + std::to_string(i) + " must be constant here, got " +
               ShapeValueText(value));
    }
    ints.push_back(v);
  }
  return ints;
}

// Element k of `value` appended to `result`, with its origin.
void Append(const ShapeValue& value, size_t k, ShapeValue* result) {
  result->elements.push_back(value.elements[k]);
  result->origins.push_back(k < value.origins.size() ? value.origins[k] : ShapeValue::Origin{});
}

ShapeValue Shape(const NodeContext& ctx) {
  if (std::optional<ShapeValue> value = ctx.ShapeInput(0)) {  // the shape of a shape value
    ShapeValue result;
    if (!value->scalar)
      result.elements.push_back(Int(static_cast<int64_t>(value->elements.size())));
    return result;
  }
  graph::Expr data = ctx.Input(0);
  const std::vector<PrimExpr>& dims = data.type().shape();
  const int64_t rank = static_cast<int64_t>(dims.size());
  auto clamp = [rank](int64_t i) { return std::clamp(i < 0 ? i + rank : i, int64_t{0}, rank); };
  int64_t start = clamp(ctx.AttrInt("start", 0));
  int64_t end = std::max(start, clamp(ctx.AttrInt("end", rank)));
  ShapeValue result;
  for (int64_t d = start; d < end; ++d) {
    result.elements.push_back(dims[static_cast<size_t>(d)]);
    result.origins.push_back({data, d});
  }
  return result;
}

ShapeValue Size(const NodeContext& ctx) {
  PrimExpr count = Int(1);
  for (const PrimExpr& dim : ctx.Input(0).type().shape()) count = count * cast(kI64, dim);
  ShapeValue result;
  result.elements = {count};
  result.scalar = true;
  return result;
}

ShapeValue Gather(const NodeContext& ctx) {
  ShapeValue data = Operand(ctx, 0);
  if (data.scalar || ctx.AttrInt("axis", 0) != 0) ctx.Fail("gathers from a 1-d shape value only");
  std::optional<ShapeValue> indices_value = ctx.ShapeInput(1);
  std::vector<int64_t> indices = Constants(ctx, 1);
  const int64_t n = static_cast<int64_t>(data.elements.size());
  ShapeValue result;
  result.scalar = indices_value->scalar;
  result.dtype = data.dtype;
  for (int64_t index : indices) {
    if (index < -n || index >= n) {
      ctx.Fail("index " + std::to_string(index) + " is out of range for the shape value " +
               ShapeValueText(data));
    }
    Append(data, static_cast<size_t>(index < 0 ? index + n : index), &result);
  }
  return result;
}

ShapeValue Unsqueeze(const NodeContext& ctx) {
  ShapeValue data = Operand(ctx, 0);
  std::vector<int64_t> axes = ctx.opset() >= 13 ? Constants(ctx, 1) : ctx.AttrInts("axes");
  if (!data.scalar || axes.size() != 1 || (axes[0] != 0 && axes[0] != -1)) {
    ctx.Fail("unsqueezes a scalar shape value into a 1-d one only");
  }
  data.scalar = false;
  return data;
}

ShapeValue Squeeze(const NodeContext& ctx) {
  ShapeValue data = Operand(ctx, 0);
  if (data.scalar || data.elements.size() != 1) {
    ctx.Fail("squeezes a shape value of one element only, got " + ShapeValueText(data));
  }
  data.scalar = true;
  return data;
}

ShapeValue Concat(const NodeContext& ctx) {
  ShapeValue result;
  for (int i = 0; i < ctx.NumInputs(); ++i) {
    ShapeValue part = Operand(ctx, i);
    if (part.scalar) ctx.Fail("concatenates 1-d shape values only");
    if (i == 0) result.dtype = part.dtype;
    for (size_t k = 0; k < part.elements.size(); ++k) Append(part, k, &result);
  }
  return result;
}

ShapeValue Slice(const NodeContext& ctx) {
  ShapeValue data = Operand(ctx, 0);
  if (data.scalar) ctx.Fail("slices a 1-d shape value only");
  std::vector<int64_t> starts, ends, steps;
  if (ctx.opset() >= 10) {
    starts = Constants(ctx, 1);
    ends = Constants(ctx, 2);
    if (ctx.HasInput(3) && Constants(ctx, 3) != std::vector<int64_t>{0}) {
      ctx.Fail("slices a shape value along axis 0 only");
    }
    steps = ctx.HasInput(4) ? Constants(ctx, 4) : std::vector<int64_t>{1};
  } else {
    starts = ctx.AttrInts("starts");
    ends = ctx.AttrInts("ends");
    steps = {1};
  }
  if (starts.size() != 1 || ends.size() != 1 || steps.size() != 1 || steps[0] == 0) {
    ctx.Fail("slices a shape value with one start, end and non-zero step");
  }
  const int64_t n = static_cast<int64_t>(data.elements.size()), step = steps[0];
  auto clamp = [&](int64_t i, int64_t low, int64_t high) {
    return std::clamp(i < 0 ? i + n : i, low, high);
  };
  ShapeValue result;
  result.dtype = data.dtype;
  if (step > 0) {
    for (int64_t i = clamp(starts[0], 0, n); i < clamp(ends[0], 0, n); i += step) {
      Append(data, static_cast<size_t>(i), &result);
    }
  } else {
    for (int64_t i = clamp(starts[0], -1, n - 1); i > clamp(ends[0], -1, n - 1); i += step) {
      Append(data, static_cast<size_t>(i), &result);
    }
  }
  return result;
}

// Add, Sub, Mul, Div, Min, Max: elementwise, a scalar or one element broadcast.
// The element count of operands broadcast together (each of one element or of the same
// count); an error naming them otherwise.
size_t BroadcastCount(const NodeContext& ctx, const std::vector<const ShapeValue*>& operands) {
  size_t n = 1;
  for (const ShapeValue* v : operands) n = std::max(n, v->elements.size());
  for (const ShapeValue* v : operands) {
    if (v->elements.size() != 1 && v->elements.size() != n) {
      std::string texts;
      for (const ShapeValue* w : operands)
        texts += (texts.empty() ? "" : ", ") + ShapeValueText(*w);
      ctx.Fail("operands " + texts + " do not broadcast");
    }
  }
  return n;
}

// Element k of a broadcast operand.
const PrimExpr& ElementAt(const ShapeValue& v, size_t k) {
  return v.elements[v.elements.size() == 1 ? 0 : k];
}

ShapeValue Arithmetic(const NodeContext& ctx) {
  ShapeValue a = Operand(ctx, 0), b = Operand(ctx, 1);
  const size_t n = BroadcastCount(ctx, {&a, &b});
  const std::string& op = ctx.op_type();
  ShapeValue result{{}, a.scalar && b.scalar, a.dtype};
  for (size_t k = 0; k < n; ++k) {
    const PrimExpr &x = ElementAt(a, k), &y = ElementAt(b, k);
    int64_t cx = 0, cy = 0;
    const bool constant = IsConstInt(x, &cx) && IsConstInt(y, &cy);
    if (op == "Add") {
      result.elements.push_back(x + y);
    } else if (op == "Sub") {
      result.elements.push_back(x - y);
    } else if (op == "Mul") {
      result.elements.push_back(x * y);
    } else if (op == "Div") {
      if (constant && cy == 0) ctx.Fail("divides a shape value by zero");
      // ONNX truncates; sizes are non-negative, where that is floor division.
      result.elements.push_back(constant ? Int(cx / cy) : floordiv(x, y));
    } else if (op == "Min") {
      result.elements.push_back(min(x, y));
    } else {
      result.elements.push_back(max(x, y));
    }
  }
  return result;
}

// Equal: elementwise, each decided at compile time (sizes are at least 0, so n == -1 is
// false); one that cannot be is an error.
ShapeValue Equal(const NodeContext& ctx) {
  ShapeValue a = Operand(ctx, 0), b = Operand(ctx, 1);
  const size_t n = BroadcastCount(ctx, {&a, &b});
  arith::Analyzer analyzer;
  ShapeValue result;
  result.scalar = a.scalar && b.scalar;
  result.dtype = DataType::Bool();
  for (size_t k = 0; k < n; ++k) {
    PrimExpr xe = cast(kI64, ElementAt(a, k)), ye = cast(kI64, ElementAt(b, k));
    bool equal = analyzer.CanProveEqual(xe, ye);
    bool differ = false;
    int64_t cy = 0, cx = 0;
    // A size (non-negative) against a negative constant differs.
    if (IsConstInt(ye, &cy) && cy < 0) differ = analyzer.CanProve(xe >= Int(0));
    if (IsConstInt(xe, &cx) && cx < 0) differ = differ || analyzer.CanProve(ye >= Int(0));
    if (!equal && !differ) differ = analyzer.CanProve(xe != ye);
    if (!equal && !differ) {
      ctx.Fail("cannot decide at compile time whether " + ShapeValueText(a) + " equals " +
               ShapeValueText(b) + "; bind the model's symbolic dimensions with --input-shape");
    }
    result.elements.push_back(Int(equal ? 1 : 0));
  }
  return result;
}

// Where(condition, a, b) on shape values, the condition decided (constant).
ShapeValue Where(const NodeContext& ctx) {
  ShapeValue condition = Operand(ctx, 0), a = Operand(ctx, 1), b = Operand(ctx, 2);
  std::vector<int64_t> decided = Constants(ctx, 0);
  const size_t n = BroadcastCount(ctx, {&condition, &a, &b});
  ShapeValue result;
  result.scalar = a.scalar && b.scalar && condition.scalar;
  result.dtype = a.dtype;
  for (size_t k = 0; k < n; ++k) {
    const ShapeValue& chosen = decided[decided.size() == 1 ? 0 : k] != 0 ? a : b;
    Append(chosen, chosen.elements.size() == 1 ? 0 : k, &result);
  }
  return result;
}

// The node's outputs evaluated over shape values (NotShapeArithmetic when an operand is no
// shape value); nullopt for an operator that is no shape arithmetic.
std::optional<std::vector<ShapeValue>> EvaluateShapeNode(const NodeContext& ctx) {
  const std::string& op = ctx.op_type();
  ShapeValue result;
  if (op == "Shape" || op == "Size") {
    result = op == "Shape" ? Shape(ctx) : Size(ctx);
  } else if (op == "Gather") {
    result = Gather(ctx);
  } else if (op == "Unsqueeze") {
    result = Unsqueeze(ctx);
  } else if (op == "Squeeze") {
    result = Squeeze(ctx);
  } else if (op == "Concat") {
    result = Concat(ctx);
  } else if (op == "Slice") {
    result = Slice(ctx);
  } else if (op == "Cast" || op == "Identity") {
    result = Operand(ctx, 0);
    if (op == "Cast") {
      result.dtype = DataTypeOfOnnx(static_cast<int32_t>(ctx.AttrInt("to")), ctx.Where());
      if (!result.dtype.is_int()) return std::nullopt;
    }
  } else if (op == "Reshape" && ctx.opset() >= 5) {
    // A shape value reshaped to 1-d ([-1], [n]) or to a scalar ([]).
    result = Operand(ctx, 0);
    std::vector<int64_t> target = Constants(ctx, 1);
    const int64_t n = static_cast<int64_t>(result.elements.size());
    if (target.size() > 1 || (target.size() == 1 && target[0] != -1 && target[0] != n) ||
        (target.empty() && n != 1)) {
      ctx.Fail("reshapes a shape value of " + std::to_string(n) +
               " element(s) to 1-d or to a "
               "scalar only, got the shape " +
               ShapeValueText(Operand(ctx, 1)));
    }
    result.scalar = target.empty();
  } else if (op == "Equal") {
    return std::vector<ShapeValue>{Equal(ctx)};
  } else if (op == "Where") {
    result = Where(ctx);
  } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Min" ||
             op == "Max") {
    if (ctx.NumInputs() != 2) return std::nullopt;
    result = Arithmetic(ctx);
  } else {
    return std::nullopt;
  }
  arith::Analyzer analyzer;
  for (PrimExpr& e : result.elements) e = analyzer.Simplify(cast(kI64, e));
  return std::vector<ShapeValue>{result};
}

}  // namespace

int64_t DimensionOfOrigin(const ShapeValue& value, size_t k, graph::Expr* like) {
  if (!like->defined() && k < value.origins.size() && value.origins[k].tensor.defined()) {
    *like = value.origins[k].tensor;
  }
  if (!like->defined()) return -1;
  arith::Analyzer analyzer;
  const std::vector<PrimExpr>& shape = like->type().shape();
  for (size_t d = 0; d < shape.size(); ++d) {
    if (analyzer.CanProveEqual(cast(kI64, value.elements[k]), cast(kI64, shape[d]))) {
      return static_cast<int64_t>(d);
    }
  }
  return -1;
}

std::string ShapeValueText(const ShapeValue& value) {
  std::ostringstream text;
  text << (value.scalar ? "" : "[");
  for (size_t k = 0; k < value.elements.size(); ++k) {
    int64_t constant = 0;
    text << (k ? ", " : "");
    if (IsConstInt(value.elements[k], &constant)) {
      text << constant;
    } else {
      text << value.elements[k];
    }
  }
  text << (value.scalar ? "" : "]");
  return text.str();
}

std::optional<std::vector<ShapeValue>> EvaluateShapeArithmetic(const NodeContext& ctx) {
  try {
    return EvaluateShapeNode(ctx);
  } catch (const NotShapeArithmetic&) {
    return std::nullopt;
  }
}

}  // namespace loom::frontend::onnx

namespace loom::frontend::onnx {
namespace {

// Builds the graph values of size expressions, one shape_of per tensor read.
class SizeTensors {
 public:
  SizeTensors(const FindSizeSource& find, const std::string& name) : find_(find), name_(name) {}

  // `size` as an int64 scalar tensor.
  graph::Expr Build(const PrimExpr& size) {
    int64_t value = 0;
    if (IsConstInt(size, &value)) return Constant(value);
    if (const auto* var = size.as<loom::VarNode>()) {
      std::optional<SizeSource> source = find_(var);
      LOOM_CHECK_USER(source) << "the size " << var->name_hint << " is no dimension of a tensor "
                              << "the node can read; bind the model's symbolic dimensions with "
                              << "--input-shape";
      auto [it, fresh] = shapes_.emplace(source->tensor.get(), graph::Expr());
      if (fresh) it->second = Call("shape_of", {source->tensor});
      return Call("take", {it->second, Constant(source->dim)}, {{"axis", int64_t{0}}});
    }
    if (const auto* c = size.as<CastNode>()) return Build(c->value);
    switch (size.kind()) {
#define LOOM_BINARY(Kind, build)                        \
  case NodeKind::Kind: {                                \
    const auto* node = size.as<Kind##Node>();           \
    graph::Expr a = Build(node->a), b = Build(node->b); \
    return build;                                       \
  }
      LOOM_BINARY(Add, Call("add", {a, b}))
      LOOM_BINARY(Sub, Call("subtract", {a, b}))
      LOOM_BINARY(Mul, Call("multiply", {a, b}))
      LOOM_BINARY(Min, Call("minimum", {a, b}))
      LOOM_BINARY(Max, Call("maximum", {a, b}))
      LOOM_BINARY(FloorMod, Call("mod", {a, b}))  // the divisor's sign: floor's remainder
      // floor(a / b) = (a - a mod b) / b, the division then exact.
      LOOM_BINARY(FloorDiv, Call("divide", {Call("subtract", {a, Call("mod", {a, b})}), b}))
#undef LOOM_BINARY
      default:
        LOOM_THROW << "the size " << size << " is computed in a way Loom does not compute at "
                   << "run time";
    }
  }

 private:
  graph::Expr Constant(int64_t value) {
    runtime::NDArray array = runtime::NDArray::Empty({}, kI64);
    *static_cast<int64_t*>(array.data()) = value;
    return graph::MakeConstant(array, name_ + ".const" + std::to_string(count_++));
  }
  graph::Expr Call(const std::string& op, std::vector<graph::Expr> args, graph::Attrs attrs = {}) {
    return graph::MakeCall(op, std::move(args), std::move(attrs),
                           name_ + "." + std::to_string(count_++));
  }

  const FindSizeSource& find_;
  const std::string& name_;
  std::map<const Object*, graph::Expr> shapes_;
  int count_ = 0;
};

}  // namespace

graph::Expr ShapeValueTensor(const ShapeValue& value, const FindSizeSource& find,
                             const std::string& name) {
  SizeTensors sizes(find, name);
  std::vector<graph::Expr> elements;
  for (const PrimExpr& element : value.elements) {
    graph::Expr scalar = sizes.Build(element);
    elements.push_back(value.scalar
                           ? scalar
                           : graph::MakeCall("reshape", {scalar}, {{"newshape", graph::Ints{1}}}));
  }
  LOOM_CHECK_USER(!elements.empty()) << "an empty shape value has no size to compute";
  graph::Expr tensor = elements.size() == 1
                           ? elements[0]
                           : graph::MakeCall("concatenate", elements, {{"axis", int64_t{0}}});
  return value.dtype == kI64 ? tensor : graph::MakeCast(tensor, value.dtype);
}

}  // namespace loom::frontend::onnx
