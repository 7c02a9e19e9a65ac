// Types of graph expressions: a tensor (shape and dtype) or a tuple of types.
//
//   Type t = TensorType({1, 3, 224, 224}, DataType::Float(32));
//   Type s = TensorType({SizeVar("batch"), 768}, DataType::Float(32));   // symbolic
//
// A dimension is a PrimExpr: a constant, or a size variable the user binds before compiling
// (see BindShapes in passes.h). Types are values; Equal compares dimensions structurally.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "loom/ir/node.h"

namespace loom::graph {

class Type {
 public:
  enum class Kind : uint8_t { kTensor, kTuple };

  // An undefined type (no expression has one once built).
  Type() = default;

  Kind kind() const;
  bool defined() const { return impl_ != nullptr; }
  bool is_tensor() const { return defined() && kind() == Kind::kTensor; }
  bool is_tuple() const { return defined() && kind() == Kind::kTuple; }

  // Tensor types only (an internal error otherwise).
  const std::vector<PrimExpr>& shape() const;
  DataType dtype() const;
  int ndim() const { return static_cast<int>(shape().size()); }
  // The shape as integers when every dimension is a constant.
  std::optional<std::vector<int64_t>> ConstShape() const;
  // The element count when the shape is constant.
  std::optional<int64_t> NumElements() const;

  // Tuple types only.
  const std::vector<Type>& fields() const;

  // "Tensor[(1, 3, 224, 224), float32]", "(Tensor[(2,), int64], Tensor[(), float32])".
  std::string str() const;

 private:
  struct Impl;
  explicit Type(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  friend Type TensorType(std::vector<PrimExpr> shape, DataType dtype);
  friend Type TupleType(std::vector<Type> fields);
  std::shared_ptr<const Impl> impl_;
};

Type TensorType(std::vector<PrimExpr> shape, DataType dtype);
Type TensorType(const std::vector<int64_t>& shape, DataType dtype);
// TensorType({1, 3, 224, 224}, f32): constant dimensions.
inline Type TensorType(std::initializer_list<int64_t> shape, DataType dtype) {
  return TensorType(std::vector<int64_t>(shape), dtype);
}
Type TupleType(std::vector<Type> fields);

// Same kind, dtype and structurally equal dimensions (recursively for tuples).
bool Equal(const Type& a, const Type& b);

// "(1, 3, 224, 224)"
std::string ShapeString(const std::vector<PrimExpr>& shape);

}  // namespace loom::graph
