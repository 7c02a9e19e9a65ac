#include "loom/graph/expr.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <unordered_set>

#include "loom/graph/functor.h"
#include "loom/runtime/float_codec.h"

namespace loom::graph {

const char* ExprKindName(ExprKind kind) {
  switch (kind) {
#define LOOM_GRAPH_EXPR(Name) \
  case ExprKind::k##Name:     \
    return #Name;
#include "loom/graph/expr_table.def"
  }
  return "?";
}

namespace {

// "nn.conv2d 'conv_3'", or "nn.conv2d call" for a call without a name.
std::string CallWhere(const std::string& callee, const std::string& name_hint) {
  return callee + (name_hint.empty() ? " call" : " '" + name_hint + "'");
}

}  // namespace

std::string CallNode::Where() const {
  return CallWhere(op ? op->name : "fused function", name_hint);
}

CallInfo CallNode::Info() const {
  LOOM_ICHECK(op) << "Info() of a call of a fused function";
  CallInfo info;
  info.op = op;
  info.attrs = attrs;
  for (const Expr& arg : args) info.input_types.push_back(arg.type());
  info.output_type = checked_type;
  info.where = Where();
  return info;
}

Var MakeVar(std::string name_hint, Type type) {
  LOOM_CHECK_USER(type.defined()) << "variable '" << name_hint << "' needs a type";
  return Var(new VarNode(std::move(name_hint), std::move(type)));
}

Constant MakeConstant(runtime::NDArray data, std::string name_hint) {
  LOOM_CHECK_USER(data.defined()) << "constant '" << name_hint << "' has no data";
  Type type = TensorType(data.Shape(), data.dtype());
  return Constant(new ConstantNode(std::move(data), std::move(name_hint), std::move(type)));
}

Constant MakeScalarConstant(double value, DataType dtype, std::string name_hint) {
  runtime::NDArray array = runtime::NDArray::Empty({}, dtype);
  void* data = array.data();
  if (dtype == DataType::Float(64)) {
    *static_cast<double*>(data) = value;
  } else if (dtype == DataType::Float(32)) {
    *static_cast<float*>(data) = static_cast<float>(value);
  } else if (dtype == DataType::Float(16)) {
    *static_cast<uint16_t*>(data) = FloatToHalfBits(static_cast<float>(value));
  } else if (dtype == DataType::BFloat16()) {
    *static_cast<uint16_t*>(data) = FloatToBFloat16Bits(static_cast<float>(value));
  } else {
    LOOM_ICHECK((dtype.is_int() || dtype.is_uint()) && dtype.lanes() == 1 &&
                value == std::nearbyint(value))
        << "MakeScalarConstant(" << value << ", " << dtype.str() << "): not a value of the type";
    const int64_t integer = static_cast<int64_t>(value);
    std::memcpy(data, &integer, static_cast<size_t>(dtype.bytes()));  // little-endian
  }
  return MakeConstant(array, std::move(name_hint));
}

bool IsConstantExpr(const Expr& e) {
  if (e.as<ConstantNode>()) return true;
  const auto* call = e.as<CallNode>();
  return call != nullptr && call->op != nullptr &&
         std::all_of(call->args.begin(), call->args.end(), IsConstantExpr);
}

std::optional<double> ScalarConstantValue(const Expr& e) {
  const auto* call = e.as<CallNode>();
  const bool cast = call != nullptr && call->op != nullptr && call->op->name == "cast";
  const auto* constant = (cast ? call->args[0] : e).as<ConstantNode>();
  if (constant == nullptr || constant->data.NumElements() != 1) return std::nullopt;
  const DataType t = constant->data.dtype();
  const void* data = constant->data.data();
  if (t == DataType::Float(32)) return *static_cast<const float*>(data);
  if (t == DataType::UInt(8)) return *static_cast<const uint8_t*>(data);
  if (t == DataType::Int(8)) return *static_cast<const int8_t*>(data);
  return std::nullopt;
}

namespace {

// The call's attributes checked against the schema, defaults filled in.
Attrs CheckedAttrs(const OpDef& op, const Attrs& given, const std::string& where) {
  std::map<std::string, AttrValue> values;
  for (const auto& [name, value] : given.values()) {
    const AttrField* field = op.FindAttr(name);
    if (field == nullptr) {
      std::string known;
      for (const AttrField& f : op.attrs) known += (known.empty() ? "" : ", ") + f.name;
      LOOM_THROW << where << ": " << op.name << " has no attribute '" << name << "' (it takes "
                 << (known.empty() ? "none" : known) << ")";
    }
    AttrValue converted = value;
    // An integer where a float is expected is that float (alpha=1).
    if (field->kind == AttrKind::kFloat && KindOf(value) == AttrKind::kInt) {
      converted = static_cast<double>(std::get<int64_t>(value));
    }
    LOOM_CHECK_USER(KindOf(converted) == field->kind)
        << where << ": attribute '" << name << "' must be " << AttrKindName(field->kind)
        << ", got " << AttrKindName(KindOf(value)) << " " << AttrValueText(value);
    values[name] = converted;
  }
  for (const AttrField& field : op.attrs) {
    if (values.count(field.name)) continue;
    LOOM_CHECK_USER(field.default_value.has_value())
        << where << ": the required attribute '" << field.name << "' ("
        << AttrKindName(field.kind) << ": " << field.doc << ") is missing";
    values[field.name] = *field.default_value;
  }
  return Attrs(std::move(values));
}

}  // namespace

Call MakeCall(const OpDef* op, std::vector<Expr> args, Attrs attrs, std::string name_hint) {
  LOOM_ICHECK(op != nullptr) << "MakeCall without an operator";
  CallInfo info;
  info.op = op;
  info.where = CallWhere(op->name, name_hint);
  if (op->variadic()) {
    LOOM_CHECK_USER(!args.empty()) << info.where << ": takes at least one input, got none";
  } else {
    LOOM_CHECK_USER(args.size() == op->inputs.size())
        << info.where << ": takes " << op->inputs.size() << " input"
        << (op->inputs.size() == 1 ? "" : "s") << ", got " << args.size();
  }
  for (size_t i = 0; i < args.size(); ++i) {
    LOOM_CHECK_USER(args[i].defined()) << info.where << ": input " << i << " is missing";
    info.input_types.push_back(args[i].type());
  }
  info.attrs = CheckedAttrs(*op, attrs, info.where);
  LOOM_ICHECK(op->type_relation) << op->name << " has no type relation";
  Type type = op->type_relation(info);
  LOOM_ICHECK(type.defined()) << op->name << "'s type relation returned no type";
  return Call(new CallNode(op, Expr(), std::move(args), std::move(info.attrs),
                           std::move(name_hint), std::move(type)));
}

Call MakeCall(Function callee, std::vector<Expr> args, std::string name_hint) {
  LOOM_ICHECK(callee.defined()) << "MakeCall without a function";
  const std::vector<Var>& params = callee->params;
  LOOM_CHECK_USER(args.size() == params.size())
      << "a call of a function of " << params.size() << " parameters has " << args.size()
      << " arguments";
  for (size_t i = 0; i < args.size(); ++i) {
    LOOM_CHECK_USER(args[i].defined() && Equal(args[i].type(), params[i].type()))
        << "argument " << i << " of a function call is "
        << (args[i].defined() ? args[i].type().str() : "missing") << ", its parameter '"
        << params[i]->name_hint << "' is " << params[i].type().str();
  }
  Type type = callee.type();
  return Call(new CallNode(nullptr, std::move(callee), std::move(args), Attrs(),
                           std::move(name_hint), std::move(type)));
}

Call MakeCall(const std::string& op, std::vector<Expr> args, Attrs attrs, std::string name_hint) {
  return MakeCall(&OpRegistry::Get(op), std::move(args), std::move(attrs), std::move(name_hint));
}

Call MakeCast(Expr value, DataType dtype) {
  return MakeCall("cast", {std::move(value)}, {{"dtype", dtype.str()}});
}

Call MakeIntegerProduct(const CallNode& product, Expr data, Expr weight, int64_t data_zero_point,
                        int64_t weight_zero_point) {
  std::map<std::string, AttrValue> values = product.attrs.values();
  values.erase("out_dtype");
  Attrs attrs = Attrs(values)
                    .With("data_zero_point", data_zero_point)
                    .With("weight_zero_point", weight_zero_point);
  const std::string op = product.op->name == "nn.conv2d" ? "qnn.conv2d" : "qnn.dense";
  return MakeCall(op, {std::move(data), std::move(weight)}, attrs, product.name_hint);
}

Tuple MakeTuple(std::vector<Expr> fields) {
  std::vector<Type> types;
  for (const Expr& field : fields) {
    LOOM_CHECK_USER(field.defined()) << "a tuple field is missing";
    types.push_back(field.type());
  }
  return Tuple(new TupleNode(std::move(fields), TupleType(std::move(types))));
}

TupleGetItem MakeTupleGetItem(Expr tuple, int index) {
  LOOM_CHECK_USER(tuple.defined() && tuple.type().is_tuple())
      << "TupleGetItem(" << index << ") of a non-tuple "
      << (tuple.defined() ? tuple.type().str() : "nothing");
  const std::vector<Type>& fields = tuple.type().fields();
  LOOM_CHECK_USER(index >= 0 && index < static_cast<int>(fields.size()))
      << "TupleGetItem(" << index << ") of a tuple of " << fields.size() << " fields";
  Type type = fields[index];
  return TupleGetItem(new TupleGetItemNode(std::move(tuple), index, std::move(type)));
}

Function MakeFunction(std::vector<Var> params, Expr body, Attrs attrs) {
  LOOM_CHECK_USER(body.defined()) << "a function needs a body";
  std::unordered_set<const Object*> bound;
  for (const Var& param : params) {
    LOOM_CHECK_USER(bound.insert(param.get()).second)
        << "parameter '" << param->name_hint << "' is listed twice";
  }
  // Functions called in the body bind their own parameters.
  PostOrderVisit(body, [&](const Expr& e) {
    if (const auto* inner = e.as<FunctionNode>()) {
      for (const Var& param : inner->params) bound.insert(param.get());
    }
  });
  PostOrderVisit(body, [&](const Expr& e) {
    if (const auto* var = e.as<VarNode>()) {
      LOOM_CHECK_USER(bound.count(var))
          << "variable '" << var->name_hint << "' is used in the function but is not one of "
          << "its parameters";
    }
  });
  Type type = body.type();
  return Function(
      new FunctionNode(std::move(params), std::move(body), std::move(attrs), std::move(type)));
}

}  // namespace loom::graph
