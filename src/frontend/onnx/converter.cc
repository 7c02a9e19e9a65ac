// The converter registry, NodeContext's shared members, ONNX tensors as host arrays, and
// the importer's small public helpers.
#include "frontend/onnx/converter.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "loom/frontend/onnx.h"
#include "loom/graph/functor.h"
#include "loom/graph/op_util.h"
#include "loom/runtime/float_codec.h"
#include "loom/support/error.h"

namespace loom::frontend::onnx {
namespace {

// A loop body's values rewritten to read the values around the loop through parameters of
// their own: each largest part of the body that depends on none of the body's parameters
// (a model input, a value computed before the loop, or work the body repeats on them) is
// captured, computed once before the loop and passed in. Constants, and what is computed
// from constants only, stay in the body.
class CaptureOuterValues : public graph::ExprMutator {
 public:
  CaptureOuterValues(const std::vector<graph::Var>& params,
                     const std::vector<graph::Expr>& outputs) {
    for (const graph::Var& param : params) varies_.insert(param.get());
    for (const graph::Expr& output : outputs) {
      graph::PostOrderVisit(output, [&](const graph::Expr& e) {
        for (const graph::Expr& operand : graph::DataflowOperands(e)) {
          if (varies_.count(operand.get())) varies_.insert(e.get());
        }
      });
    }
  }

  graph::Expr VisitExpr(const graph::Expr& e) override {
    // What folds to a constant stays: the body's own constant folding makes it a weight
    // (a product's, which the target's layout then packs).
    if (varies_.count(e.get()) || graph::IsConstantExpr(e) || !e.type().is_tensor()) {
      return ExprMutator::VisitExpr(e);
    }
    auto [it, fresh] = index_.emplace(e.get(), values_.size());
    if (fresh) {
      params_.push_back(graph::MakeVar("captured" + std::to_string(values_.size()), e.type()));
      values_.push_back(e);
    }
    return params_[it->second];
  }

  const std::vector<graph::Var>& params() const { return params_; }
  const std::vector<graph::Expr>& values() const { return values_; }

 private:
  std::unordered_set<const Object*> varies_;  // the parameters and what depends on them
  std::unordered_map<const Object*, size_t> index_;
  std::vector<graph::Var> params_;
  std::vector<graph::Expr> values_;
};

// Whether a carried value of type `before` may have type `after` after an iteration: the
// same dtype and rank, each dimension equal or known only at run time (the VM checks those
// at the end of each iteration).
bool MayKeepType(const graph::Type& before, const graph::Type& after) {
  if (!before.is_tensor() || !after.is_tensor() || before.dtype() != after.dtype() ||
      before.ndim() != after.ndim()) {
    return false;
  }
  for (int d = 0; d < before.ndim(); ++d) {
    int64_t a = 0, b = 0;
    const PrimExpr &x = before.shape()[static_cast<size_t>(d)],
                   &y = after.shape()[static_cast<size_t>(d)];
    if (IsConstInt(x, &a) && IsConstInt(y, &b) && a != b) return false;
  }
  return true;
}

std::map<std::string, Converter>& Registry() {
  static std::map<std::string, Converter> registry;
  return registry;
}

// Element i of a host array of a float dtype, as a double.
double FloatTypeElement(const runtime::NDArray& array, int64_t i) {
  DataType t = array.dtype();
  const void* p = array.data();
  if (t == DataType::Float(32)) return static_cast<const float*>(p)[i];
  if (t == DataType::Float(64)) return static_cast<const double*>(p)[i];
  if (t == DataType::Float(16)) return HalfBitsToFloat(static_cast<const uint16_t*>(p)[i]);
  LOOM_ICHECK(t.is_bfloat16()) << "the importer never makes arrays of " << t.str();
  return BFloat16BitsToFloat(static_cast<const uint16_t*>(p)[i]);
}

// Element i of a host array of any supported dtype, as an integer / a double.
int64_t IntElement(const runtime::NDArray& array, int64_t i) {
  DataType t = array.dtype();
  const void* p = array.data();
  if (t == DataType::Int(64)) return static_cast<const int64_t*>(p)[i];
  if (t == DataType::Int(32)) return static_cast<const int32_t*>(p)[i];
  if (t == DataType::Int(16)) return static_cast<const int16_t*>(p)[i];
  if (t == DataType::Int(8)) return static_cast<const int8_t*>(p)[i];
  if (t == DataType::UInt(64)) return static_cast<int64_t>(static_cast<const uint64_t*>(p)[i]);
  if (t == DataType::UInt(32)) return static_cast<const uint32_t*>(p)[i];
  if (t == DataType::UInt(16)) return static_cast<const uint16_t*>(p)[i];
  if (t == DataType::UInt(8) || t.is_bool()) return static_cast<const uint8_t*>(p)[i];
  double value = FloatTypeElement(array, i);
  // Casting a float outside int64 (or NaN) is undefined behaviour: saturate instead.
  if (std::isnan(value)) return 0;
  if (value <= -9.2e18) return INT64_MIN;
  return value < 9.2e18 ? static_cast<int64_t>(value) : INT64_MAX;
}

double FloatElement(const runtime::NDArray& array, int64_t i) {
  DataType t = array.dtype();
  if (t.is_float()) return FloatTypeElement(array, i);
  if (t == DataType::UInt(64)) {
    return static_cast<double>(static_cast<const uint64_t*>(array.data())[i]);
  }
  return static_cast<double>(IntElement(array, i));
}

// "input 1 (shape)": the input's index and its name in the operator's ONNX schema when ONNX
// knows the operator, else the value's name in the model.
std::string InputLabel(const NodeContext& ctx, int i) {
  std::string domain = ctx.node().domain() == "ai.onnx" ? "" : ctx.node().domain();
  const ::onnx::OpSchema* schema =
      ::onnx::OpSchemaRegistry::Schema(ctx.op_type(), static_cast<int>(ctx.opset()), domain);
  std::string name;
  if (schema != nullptr && i < static_cast<int>(schema->inputs().size())) {
    name = schema->inputs()[i].GetName();
  } else if (i < ctx.node().input_size()) {
    name = "'" + ctx.node().input(i) + "'";
  }
  return "input " + std::to_string(i) + (name.empty() ? "" : " (" + name + ")");
}

const char* AttrTypeName(int type) {
  return ::onnx::AttributeProto_AttributeType_Name(
             static_cast<::onnx::AttributeProto_AttributeType>(type))
      .c_str();
}

}  // namespace

int NodeContext::InputRank(int i) const {
  graph::Expr input = Input(i);
  if (!input.type().is_tensor()) Fail(InputLabel(*this, i) + " is not a tensor");
  return input.type().ndim();
}

std::vector<int64_t> NodeContext::InputSpatialShape(int i) const {
  const std::vector<PrimExpr>& dims = Input(i).type().shape();
  std::vector<int64_t> spatial;
  for (size_t d = 2; d < dims.size(); ++d) {
    int64_t value = 0;
    if (!IsConstInt(dims[d], &value)) InputShape(i);  // an error naming the symbols
    spatial.push_back(value);
  }
  return spatial;
}

std::vector<int64_t> NodeContext::InputShape(int i) const {
  graph::Expr input = Input(i);
  if (!input.type().is_tensor()) Fail(InputLabel(*this, i) + " is not a tensor");
  std::optional<std::vector<int64_t>> shape = input.type().ConstShape();
  if (!shape) {
    std::string symbols;
    for (const PrimExpr& dim : input.type().shape()) {
      if (const auto* var = dim.as<loom::VarNode>()) {
        symbols += (symbols.empty() ? "" : ", ") + var->name_hint;
      }
    }
    Fail(InputLabel(*this, i) + " has the symbolic shape " + input.type().str() + "; Loom " +
         "imports " + op_type() + " for inputs of constant shape only: bind the model's " +
         "symbolic dimensions" + (symbols.empty() ? "" : " (" + symbols + ")") +
         " with --input-shape");
  }
  return *shape;
}

DataType NodeContext::InputDtype(int i) const {
  graph::Expr input = Input(i);
  if (!input.type().is_tensor()) Fail(InputLabel(*this, i) + " is not a tensor");
  return input.type().dtype();
}

std::optional<runtime::NDArray> NodeContext::ConstantInput(int i) const {
  if (!HasInput(i)) return std::nullopt;
  if (const auto* constant = Input(i).as<graph::ConstantNode>()) return constant->data;
  return std::nullopt;
}

std::vector<int64_t> NodeContext::ConstantInts(int i) const {
  std::optional<runtime::NDArray> value = ConstantInput(i);
  if (!value) {
    Fail(InputLabel(*this, i) +
         " must be a constant (an initializer, a Constant node, or computed from constants "
         "only), but it depends on the model's inputs");
  }
  if (value->dtype().is_float()) {
    Fail(InputLabel(*this, i) + " must hold integers, got " + value->dtype().str());
  }
  std::vector<int64_t> ints(static_cast<size_t>(value->NumElements()));
  for (size_t k = 0; k < ints.size(); ++k) ints[k] = IntElement(*value, static_cast<int64_t>(k));
  return ints;
}

std::vector<double> NodeContext::ConstantFloats(int i) const {
  std::optional<runtime::NDArray> value = ConstantInput(i);
  if (!value) {
    Fail(InputLabel(*this, i) +
         " must be a constant (an initializer, a Constant node, or computed from constants "
         "only), but it depends on the model's inputs");
  }
  std::vector<double> floats(static_cast<size_t>(value->NumElements()));
  for (size_t k = 0; k < floats.size(); ++k) {
    floats[k] = FloatElement(*value, static_cast<int64_t>(k));
  }
  return floats;
}

const ::onnx::AttributeProto* NodeContext::FindAttr(const std::string& name) const {
  for (const ::onnx::AttributeProto& attr : node().attribute()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

bool NodeContext::HasAttr(const std::string& name) const { return FindAttr(name) != nullptr; }

namespace {

// The attribute `name` of `ctx`'s node checked to be of `type`; null when it is absent and
// there is a fallback, an error when it is absent without one.
const ::onnx::AttributeProto* TypedAttr(const NodeContext& ctx, const ::onnx::AttributeProto* attr,
                                        const std::string& name,
                                        ::onnx::AttributeProto_AttributeType type,
                                        bool has_fallback) {
  if (attr == nullptr) {
    if (has_fallback) return nullptr;
    ctx.Fail("the required attribute '" + name + "' is missing");
  }
  if (attr->type() != type) {
    ctx.Fail("attribute '" + name + "' must be " + AttrTypeName(type) + ", got " +
             AttrTypeName(attr->type()));
  }
  return attr;
}

}  // namespace

int64_t NodeContext::AttrInt(const std::string& name, std::optional<int64_t> fallback) const {
  const auto* attr =
      TypedAttr(*this, FindAttr(name), name, ::onnx::AttributeProto::INT, fallback.has_value());
  return attr ? attr->i() : *fallback;
}

float NodeContext::AttrFloat(const std::string& name, std::optional<float> fallback) const {
  const auto* attr =
      TypedAttr(*this, FindAttr(name), name, ::onnx::AttributeProto::FLOAT, fallback.has_value());
  return attr ? attr->f() : *fallback;
}

std::string NodeContext::AttrString(const std::string& name,
                                    std::optional<std::string> fallback) const {
  const auto* attr =
      TypedAttr(*this, FindAttr(name), name, ::onnx::AttributeProto::STRING, fallback.has_value());
  return attr ? attr->s() : *fallback;
}

std::vector<int64_t> NodeContext::AttrInts(const std::string& name,
                                           std::optional<std::vector<int64_t>> fallback) const {
  const auto* attr =
      TypedAttr(*this, FindAttr(name), name, ::onnx::AttributeProto::INTS, fallback.has_value());
  if (attr == nullptr) return *fallback;
  return {attr->ints().begin(), attr->ints().end()};
}

std::vector<float> NodeContext::AttrFloats(const std::string& name,
                                           std::optional<std::vector<float>> fallback) const {
  const auto* attr =
      TypedAttr(*this, FindAttr(name), name, ::onnx::AttributeProto::FLOATS, fallback.has_value());
  if (attr == nullptr) return *fallback;
  return {attr->floats().begin(), attr->floats().end()};
}

std::vector<std::string> NodeContext::AttrStrings(
    const std::string& name, std::optional<std::vector<std::string>> fallback) const {
  const auto* attr =
      TypedAttr(*this, FindAttr(name), name, ::onnx::AttributeProto::STRINGS, fallback.has_value());
  if (attr == nullptr) return *fallback;
  return {attr->strings().begin(), attr->strings().end()};
}

runtime::NDArray NodeContext::AttrTensor(const std::string& name) const {
  const auto* attr = TypedAttr(*this, FindAttr(name), name, ::onnx::AttributeProto::TENSOR, false);
  return ArrayOfTensorProto(attr->t(), Where() + " attribute '" + name + "'");
}

graph::Expr SizesOfValue(NodeContext& ctx, const graph::Expr& value, const graph::Expr& like,
                         int64_t like_dim, const std::string& what) {
  return ctx.Call("dims_of_value", {value, like},
                  {{"size", ctx.CallName() + "." + what}, {"like_dim", like_dim}});
}

graph::Expr ShapedAtRunTime(NodeContext& ctx, const graph::Expr& data, const std::string& dims_op,
                            graph::Attrs dims_attrs, const std::string& to_op,
                            graph::Attrs to_attrs, const std::string& what, graph::Expr operand) {
  if (!operand.defined()) operand = ctx.Input(1);
  graph::Expr dims = ctx.Call(dims_op, {ctx.Input(0), operand}, std::move(dims_attrs));
  return ctx.Call(to_op, {data, SizesOfValue(ctx, dims, dims, kUnbounded, what)},
                  std::move(to_attrs));
}

graph::Expr ScalarOfOne(NodeContext& ctx, const graph::Expr& x) {
  return ctx.Call("reshape_to", {x, ctx.Const(runtime::NDArray::Empty({0}, DataType::Int(64)))});
}

graph::Expr Stack(NodeContext& ctx, const std::vector<graph::Expr>& pieces, int64_t axis) {
  LOOM_ICHECK(!pieces.empty()) << ctx.Where() << ": Stack of no pieces";
  std::vector<graph::Expr> expanded;
  for (const graph::Expr& piece : pieces) {
    expanded.push_back(ctx.Call("expand_dims", {piece}, {{"axis", axis}}));
  }
  return ctx.Call("concatenate", expanded, {{"axis", axis}});
}

const ::onnx::GraphProto& NodeContext::AttrGraph(const std::string& name) const {
  return TypedAttr(*this, FindAttr(name), name, ::onnx::AttributeProto::GRAPH, false)->g();
}

graph::Expr NodeContext::Scalar(double value, DataType dtype) {
  if (!dtype.is_integer_like() && dtype != DataType::Float(32) && dtype != DataType::Float(64)) {
    Fail("a scalar of dtype " + dtype.str() + " is not supported");
  }
  runtime::NDArray array = runtime::NDArray::Empty({}, dtype);
  SetElement(array, 0, value);
  return Const(array);
}

namespace {

// Element k of `array` set to `value`, converted to the array's dtype.
template <typename Value>
void StoreElement(const runtime::NDArray& array, int64_t k, Value value) {
  DataType t = array.dtype();
  void* p = array.data();
  if (t == DataType::Float(32)) {
    static_cast<float*>(p)[k] = static_cast<float>(value);
  } else if (t == DataType::Float(64)) {
    static_cast<double*>(p)[k] = static_cast<double>(value);
  } else if (t == DataType::Int(64)) {
    static_cast<int64_t*>(p)[k] = static_cast<int64_t>(value);
  } else if (t == DataType::Int(32)) {
    static_cast<int32_t*>(p)[k] = static_cast<int32_t>(value);
  } else if (t == DataType::Int(16)) {
    static_cast<int16_t*>(p)[k] = static_cast<int16_t>(value);
  } else if (t == DataType::Int(8)) {
    static_cast<int8_t*>(p)[k] = static_cast<int8_t>(value);
  } else if (t == DataType::UInt(64)) {
    static_cast<uint64_t*>(p)[k] = static_cast<uint64_t>(value);
  } else if (t == DataType::UInt(32)) {
    static_cast<uint32_t*>(p)[k] = static_cast<uint32_t>(value);
  } else if (t == DataType::UInt(16)) {
    static_cast<uint16_t*>(p)[k] = static_cast<uint16_t>(value);
  } else {
    LOOM_ICHECK(t == DataType::UInt(8) || t.is_bool()) << "SetElement of " << t.str();
    static_cast<uint8_t*>(p)[k] = static_cast<uint8_t>(value);
  }
}

}  // namespace

void SetElement(const runtime::NDArray& array, int64_t k, double value) {
  StoreElement(array, k, value);
}

void SetIntElement(const runtime::NDArray& array, int64_t k, int64_t value) {
  StoreElement(array, k, value);
}

int64_t NormalizeAxis(const NodeContext& ctx, int64_t axis, int64_t rank, const std::string& what) {
  if (axis < -rank || axis >= rank) {
    ctx.Fail(what + " " + std::to_string(axis) + " is out of range for an input of rank " +
             std::to_string(rank) + " (expected [" + std::to_string(-rank) + ", " +
             std::to_string(rank - 1) + "])");
  }
  return axis < 0 ? axis + rank : axis;
}

void NodeContext::Fail(const std::string& message) const {
  LOOM_THROW << Where() << ": " << message;
}

bool RegisterConverter(const std::string& op_type, Converter converter) {
  bool fresh = Registry().emplace(op_type, std::move(converter)).second;
  LOOM_ICHECK(fresh) << "two ONNX converters for " << op_type;
  return true;
}

const Converter* FindConverter(const std::string& op_type) {
  auto it = Registry().find(op_type);
  return it == Registry().end() ? nullptr : &it->second;
}

std::vector<std::string> ConverterNames() {
  std::vector<std::string> names;
  for (const auto& [name, converter] : Registry()) names.push_back(name);
  return names;
}

std::vector<std::string> SupportedOperators() { return ConverterNames(); }

DataType DataTypeOfOnnx(int32_t elem_type, const std::string& where) {
  switch (elem_type) {
    case ::onnx::TensorProto::FLOAT:
      return DataType::Float(32);
    case ::onnx::TensorProto::DOUBLE:
      return DataType::Float(64);
    case ::onnx::TensorProto::FLOAT16:
      return DataType::Float(16);
    case ::onnx::TensorProto::BFLOAT16:
      return DataType::BFloat16();
    case ::onnx::TensorProto::INT8:
      return DataType::Int(8);
    case ::onnx::TensorProto::INT16:
      return DataType::Int(16);
    case ::onnx::TensorProto::INT32:
      return DataType::Int(32);
    case ::onnx::TensorProto::INT64:
      return DataType::Int(64);
    case ::onnx::TensorProto::UINT8:
      return DataType::UInt(8);
    case ::onnx::TensorProto::UINT16:
      return DataType::UInt(16);
    case ::onnx::TensorProto::UINT32:
      return DataType::UInt(32);
    case ::onnx::TensorProto::UINT64:
      return DataType::UInt(64);
    case ::onnx::TensorProto::BOOL:
      return DataType::Bool();
    default:
      break;
  }
  std::string name =
      ::onnx::TensorProto_DataType_IsValid(elem_type)
          ? ::onnx::TensorProto_DataType_Name(static_cast<::onnx::TensorProto_DataType>(elem_type))
          : "unknown type " + std::to_string(elem_type);
  LOOM_THROW << where << ": element type " << name
             << " is not supported; Loom imports FLOAT, FLOAT16, BFLOAT16, DOUBLE, INT8, INT16, "
                "INT32, INT64, UINT8, UINT16, UINT32, UINT64 and BOOL tensors";
}

int64_t CheckedTensorBytes(const std::vector<int64_t>& shape, DataType dtype,
                           const std::string& where, int64_t limit) {
  int64_t bytes = static_cast<int64_t>(runtime::ElementBytes(dtype));
  for (int64_t dim : shape) {
    LOOM_CHECK_USER(dim >= 0) << where << ": negative dimension in shape "
                              << runtime::ShapeString(shape);
  }
  for (int64_t dim : shape) {
    LOOM_CHECK_USER(!__builtin_mul_overflow(bytes, dim, &bytes) && bytes <= limit)
        << where << ": " << dtype.str() << " of shape " << runtime::ShapeString(shape)
        << " needs more than " << limit << " bytes; the model is corrupt, or the tensor is "
        << "too large to hold in memory";
  }
  return bytes;
}

runtime::NDArray ArrayOfTensorProto(const ::onnx::TensorProto& tensor, const std::string& where) {
  DataType dtype = DataTypeOfOnnx(tensor.data_type(), where);
  std::vector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  LOOM_CHECK_USER(tensor.data_location() != ::onnx::TensorProto::EXTERNAL)
      << where << ": the tensor's data is in an external file that was not loaded";
  // Sizes are checked against the data the proto holds before allocating, so a corrupt
  // shape cannot ask for more memory than the model file has bytes.
  int64_t bytes = CheckedTensorBytes(shape, dtype, where);
  if (tensor.has_raw_data()) {
    LOOM_CHECK_USER(static_cast<int64_t>(tensor.raw_data().size()) == bytes)
        << where << ": raw_data holds " << tensor.raw_data().size() << " bytes, but " << dtype.str()
        << " of shape " << runtime::ShapeString(shape) << " needs " << bytes;
    runtime::NDArray array = runtime::NDArray::Empty(shape, dtype);
    array.CopyFromBytes(tensor.raw_data().data(), static_cast<size_t>(bytes));
    return array;
  }
  auto copy = [&](const auto& field, const char* field_name, auto element) {
    int64_t elements = bytes / static_cast<int64_t>(runtime::ElementBytes(dtype));
    LOOM_CHECK_USER(field.size() == elements)
        << where << ": " << field_name << " holds " << field.size() << " values, but the shape "
        << runtime::ShapeString(shape) << " needs " << elements;
    runtime::NDArray array = runtime::NDArray::Empty(shape, dtype);
    auto* out = static_cast<decltype(element)*>(array.data());
    for (int i = 0; i < field.size(); ++i) out[i] = static_cast<decltype(element)>(field.Get(i));
    return array;
  };
  switch (tensor.data_type()) {
    case ::onnx::TensorProto::FLOAT:
      return copy(tensor.float_data(), "float_data", float{});
    case ::onnx::TensorProto::DOUBLE:
      return copy(tensor.double_data(), "double_data", double{});
    case ::onnx::TensorProto::INT64:
      return copy(tensor.int64_data(), "int64_data", int64_t{});
    case ::onnx::TensorProto::INT32:
      return copy(tensor.int32_data(), "int32_data", int32_t{});
    case ::onnx::TensorProto::INT16:
      return copy(tensor.int32_data(), "int32_data", int16_t{});
    case ::onnx::TensorProto::INT8:
      return copy(tensor.int32_data(), "int32_data", int8_t{});
    case ::onnx::TensorProto::UINT16:
    case ::onnx::TensorProto::FLOAT16:  // their bits, as ONNX stores them
    case ::onnx::TensorProto::BFLOAT16:
      return copy(tensor.int32_data(), "int32_data", uint16_t{});
    case ::onnx::TensorProto::UINT32:
      return copy(tensor.uint64_data(), "uint64_data", uint32_t{});
    case ::onnx::TensorProto::UINT64:
      return copy(tensor.uint64_data(), "uint64_data", uint64_t{});
    default:  // UINT8 and BOOL: one byte each, stored in int32_data
      return copy(tensor.int32_data(), "int32_data", uint8_t{});
  }
}

std::pair<std::string, std::vector<int64_t>> ParseInputShape(const std::string& text) {
  return runtime::ParseNamedShape(text);
}

runtime::NDArray ReadTensorProtoFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  LOOM_CHECK_USER(file.good()) << "cannot open the tensor file '" << path << "'";
  std::ostringstream bytes;
  bytes << file.rdbuf();
  ::onnx::TensorProto tensor;
  LOOM_CHECK_USER(tensor.ParseFromString(bytes.str()))
      << "cannot parse '" << path << "' as an ONNX TensorProto: the file is corrupt, truncated "
      << "or not a serialized tensor";
  return ArrayOfTensorProto(tensor, "tensor file '" + path + "'");
}

}  // namespace loom::frontend::onnx

namespace loom::frontend::onnx {

Outputs RunTimeLoop(NodeContext& ctx, const std::string& label, graph::Expr trip, graph::Expr cond,
                    std::vector<graph::Var> params, const std::vector<graph::Expr>& initial,
                    const std::vector<graph::Expr>& body_outputs) {
  const size_t carried = initial.size();
  LOOM_ICHECK(params.size() == 2 + carried && body_outputs.size() >= 1 + carried)
      << ctx.Where() << ": RunTimeLoop's parameters and outputs disagree";
  for (size_t k = 0; k < carried; ++k) {
    const graph::Type &before = initial[k].type(), &after = body_outputs[1 + k].type();
    if (!MayKeepType(before, after)) {
      ctx.Fail("loop-carried value " + std::to_string(k) + " ('" + params[2 + k]->name_hint +
               "') is " + before.str() + " before the loop and " + after.str() +
               " after an iteration; a loop run at run time keeps each carried value's dtype and "
               "shape");
    }
  }
  graph::ops::LoopAttrs loop;
  loop.body = ctx.CallName() + "/" + label;
  loop.num_carried = static_cast<int64_t>(carried);
  loop.max_iterations = ctx.max_loop_iterations();
  loop.iterations = graph::ops::DataDependentSize(loop.body + ".iterations");
  for (size_t j = 1 + carried; j < body_outputs.size(); ++j) {
    const graph::Type& slice = body_outputs[j].type();
    if (!slice.is_tensor())
      ctx.Fail("scan output " + std::to_string(j - 1 - carried) + " is no tensor");
    std::vector<int64_t> shape;
    for (const PrimExpr& dim : slice.shape()) {
      int64_t value = 0;
      shape.push_back(IsConstInt(dim, &value) ? value : -1);
    }
    loop.scan_dtypes.push_back(slice.dtype());
    loop.scan_shapes.push_back(shape);
  }
  CaptureOuterValues capture(params, body_outputs);
  std::vector<graph::Expr> results;
  for (const graph::Expr& output : body_outputs) results.push_back(capture.VisitExpr(output));
  params.insert(params.end(), capture.params().begin(), capture.params().end());
  ctx.AddFunction(loop.body, graph::MakeFunction(params, graph::MakeTuple(results)));
  std::vector<graph::Expr> args = {std::move(trip), std::move(cond)};
  args.insert(args.end(), initial.begin(), initial.end());
  args.insert(args.end(), capture.values().begin(), capture.values().end());
  graph::Expr call = ctx.Call("loop", args, graph::ops::LoopCallAttrs(loop));
  Outputs values;
  for (size_t k = 0; k + 1 < body_outputs.size(); ++k) {
    values.push_back(graph::MakeTupleGetItem(call, static_cast<int>(k)));
  }
  return values;
}

}  // namespace loom::frontend::onnx
