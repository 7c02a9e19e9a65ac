#include "loom/graph/type.h"

#include <sstream>

#include "loom/ir/printer.h"
#include "loom/ir/structural.h"

namespace loom::graph {

struct Type::Impl {
  Kind kind;
  std::vector<PrimExpr> shape;
  DataType dtype;
  std::vector<Type> fields;
};

Type::Kind Type::kind() const {
  LOOM_ICHECK(impl_) << "kind() of an undefined graph type";
  return impl_->kind;
}

const std::vector<PrimExpr>& Type::shape() const {
  LOOM_ICHECK(is_tensor()) << "shape() of the non-tensor type " << str();
  return impl_->shape;
}

DataType Type::dtype() const {
  LOOM_ICHECK(is_tensor()) << "dtype() of the non-tensor type " << str();
  return impl_->dtype;
}

std::optional<std::vector<int64_t>> Type::ConstShape() const {
  std::vector<int64_t> dims;
  for (const PrimExpr& dim : shape()) {
    int64_t value = 0;
    if (!IsConstInt(dim, &value)) return std::nullopt;
    dims.push_back(value);
  }
  return dims;
}

std::optional<int64_t> Type::NumElements() const {
  std::optional<std::vector<int64_t>> dims = ConstShape();
  if (!dims) return std::nullopt;
  int64_t count = 1;
  for (int64_t d : *dims) count *= d;
  return count;
}

const std::vector<Type>& Type::fields() const {
  LOOM_ICHECK(is_tuple()) << "fields() of the non-tuple type " << str();
  return impl_->fields;
}

std::string ShapeString(const std::vector<PrimExpr>& shape) {
  std::ostringstream text;
  text << "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) text << ", ";
    int64_t value = 0;
    if (IsConstInt(shape[i], &value)) text << value;
    else text << shape[i];
  }
  text << (shape.size() == 1 ? ",)" : ")");
  return text.str();
}

std::string Type::str() const {
  if (!defined()) return "<undefined type>";
  if (is_tensor()) return "Tensor[" + ShapeString(shape()) + ", " + dtype().str() + "]";
  std::string text = "(";
  for (size_t i = 0; i < fields().size(); ++i) text += (i ? ", " : "") + fields()[i].str();
  return text + (fields().size() == 1 ? ",)" : ")");
}

Type TensorType(std::vector<PrimExpr> shape, DataType dtype) {
  for (const PrimExpr& dim : shape) {
    LOOM_CHECK_USER(dim.defined() && dim.dtype().is_int() && dim.dtype().is_scalar())
        << "a tensor dimension must be an integer expression, got "
        << (dim.defined() ? dim.dtype().str() : "nothing");
    int64_t value = 0;
    LOOM_CHECK_USER(!IsConstInt(dim, &value) || value >= 0)
        << "tensor dimensions must not be negative, got " << ShapeString(shape);
  }
  return Type(std::make_shared<const Type::Impl>(
      Type::Impl{Type::Kind::kTensor, std::move(shape), dtype, {}}));
}

Type TensorType(const std::vector<int64_t>& shape, DataType dtype) {
  std::vector<PrimExpr> dims;
  for (int64_t d : shape) dims.push_back(IntImm(DataType::Int(64), d));
  return TensorType(std::move(dims), dtype);
}

Type TupleType(std::vector<Type> fields) {
  for (const Type& field : fields) LOOM_ICHECK(field.defined()) << "a tuple field without a type";
  return Type(std::make_shared<const Type::Impl>(
      Type::Impl{Type::Kind::kTuple, {}, DataType(), std::move(fields)}));
}

bool Equal(const Type& a, const Type& b) {
  if (!a.defined() || !b.defined()) return a.defined() == b.defined();
  if (a.kind() != b.kind()) return false;
  if (a.is_tuple()) {
    if (a.fields().size() != b.fields().size()) return false;
    for (size_t i = 0; i < a.fields().size(); ++i) {
      if (!Equal(a.fields()[i], b.fields()[i])) return false;
    }
    return true;
  }
  if (a.dtype() != b.dtype() || a.ndim() != b.ndim()) return false;
  for (int i = 0; i < a.ndim(); ++i) {
    int64_t x = 0, y = 0;
    if (IsConstInt(a.shape()[i], &x) && IsConstInt(b.shape()[i], &y)) {
      if (x != y) return false;
    } else if (!StructuralEqual(a.shape()[i], b.shape()[i])) {
      return false;
    }
  }
  return true;
}

}  // namespace loom::graph
