// Tensors and the operations that produce them: the "what" of a tensor expression.
//
//   Tensor A = placeholder({n, m}, DataType::Float(32), "A");
//   Tensor B = compute({n, m}, [&](Var i, Var j) { return A(i, j) * 2.0f; }, "B");
//
// How a tensor read is represented. Every output of an operation owns a Buffer of the
// tensor's shape and dtype (the tensor's storage, named like the tensor), and reading the
// tensor, A(i, j), is a BufferLoad of that buffer. We chose this over a dedicated
// producer-load node because every TIR tool -- the printer, the functors, Substitute, the
// simplifier, the interpreter -- already understands BufferLoad, so a compute body is plain
// TIR and the lowered function uses the very same buffers as its parameters. The buffer is
// tied back to its tensor by a registry (TensorFromBuffer), so schedules can find which
// operations read which.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "loom/ir/node.h"
// Compute bodies are written with operators and math functions on PrimExpr: every TE user
// needs them, so they come with the tensor type.
#include "loom/ir/math.h"

namespace loom::te {

class Tensor;

// An operation: a placeholder, or a compute. Immutable once built; shared by the tensors
// it outputs and by schedules.
class OperationNode : public std::enable_shared_from_this<OperationNode> {
 public:
  OperationNode(std::string name, std::string tag) : name(std::move(name)), tag(std::move(tag)) {}
  virtual ~OperationNode();
  OperationNode(const OperationNode&) = delete;
  OperationNode& operator=(const OperationNode&) = delete;

  std::string name;
  std::string tag;
  // One buffer per output: the storage the output tensor reads and writes.
  Array<Buffer> output_buffers;

  int num_outputs() const { return static_cast<int>(output_buffers.size()); }
  const Array<PrimExpr>& output_shape(int i) const { return output_buffers.at(i)->shape; }
  DataType output_dtype(int i) const { return output_buffers.at(i)->dtype; }
  Tensor output(int i) const;
  // The tensors this operation reads, each once, in order of first use.
  virtual Array<Tensor> InputTensors() const = 0;

  // Creates the output buffers and registers them as this operation's tensors; called once,
  // by the function that builds the operation.
  void MakeOutputs(const Array<Array<PrimExpr>>& shapes, const Array<DataType>& dtypes);
};

using Operation = std::shared_ptr<const OperationNode>;

// One output of an operation. Calling it with indices reads an element.
class Tensor {
 public:
  Tensor() = default;
  Tensor(Operation op, int value_index);

  bool defined() const { return op_ != nullptr; }
  const Operation& op() const { return op_; }
  int value_index() const { return value_index_; }
  const Buffer& buffer() const { return op_->output_buffers.at(value_index_); }
  const Array<PrimExpr>& shape() const { return buffer()->shape; }
  int ndim() const { return static_cast<int>(shape().size()); }
  DataType dtype() const { return buffer()->dtype; }
  const std::string& name() const { return buffer()->name; }

  // A[i, j]: the element as an expression. Indices must be integers, one per dimension
  // (loom::Error naming the tensor otherwise).
  PrimExpr operator()(const Array<PrimExpr>& indices) const;
  PrimExpr operator()(const Array<Var>& indices) const;
  template <typename... Index,
            typename = std::enable_if_t<(std::is_convertible_v<Index, PrimExpr> && ...)>>
  PrimExpr operator()(Index... indices) const {
    return (*this)(Array<PrimExpr>{PrimExpr(indices)...});
  }

  bool operator==(const Tensor& other) const {
    return op_ == other.op_ && value_index_ == other.value_index_;
  }

 private:
  Operation op_;
  int value_index_ = 0;
};

// The tensor whose storage `buffer` is, if it is one.
std::optional<Tensor> TensorFromBuffer(const Buffer& buffer);

}  // namespace loom::te
