// Building tensor expressions: placeholders (inputs), computes (any rank, one or more
// outputs, reductions), reduction axes and reducers.
//
//   Var n = SizeVar("n");
//   Tensor A = placeholder({n, 64}, DataType::Float(32), "A");
//   IterVar k = reduce_axis(Range(0, 64), "k");
//   Tensor S = compute({n}, [&](Var i) { return sum(A(i, k->var), {k}); }, "S");
//
// Elementwise helpers are the IR's builders (select, cast, min, max in loom/ir/expr_ops.h;
// call_intrin for math intrinsics such as exp); if_then_else is added here.
#pragma once

#include <functional>
#include <string>
#include <utility>

#include "loom/te/tensor.h"

namespace loom::te {

class PlaceholderOpNode final : public OperationNode {
 public:
  using OperationNode::OperationNode;
  Array<Tensor> InputTensors() const override { return {}; }
};

class ComputeOpNode final : public OperationNode {
 public:
  using OperationNode::OperationNode;
  // One data-parallel axis per output dimension (shared by all outputs).
  Array<IterVar> axis;
  // The reduction axes of the bodies (empty unless the bodies are Reduce nodes).
  Array<IterVar> reduce_axis;
  // One expression per output, over axis (and reduce_axis) variables.
  Array<PrimExpr> body;
  // The tensors the body reads when the compute was built, held so that their operations
  // live as long as this one: `relu(add(x, y))` keeps the add, whose tensor the caller never
  // held. (InputTensors() finds the inputs from the body's buffers, through operations alive.)
  Array<Tensor> producers;
  Array<Tensor> InputTensors() const override;
  // axis followed by reduce_axis: the iteration variables a schedule starts from.
  Array<IterVar> root_iter_vars() const;
};

// A call into code outside the compiler (a library routine, a hand-written kernel): its
// outputs are computed whole by `body`, a statement over the inputs' and outputs' buffers.
// Schedules see a stage without loops.
class ExternOpNode final : public OperationNode {
 public:
  using OperationNode::OperationNode;
  Array<Tensor> inputs;
  // Reads the inputs' buffers and writes output_buffers.
  Stmt body;
  Array<Tensor> InputTensors() const override { return inputs; }
};

// Builds an extern operation's body from the input tensors' buffers and the output buffers,
// typically Evaluate(call_extern(...)) passing access_ptr(buffer) (loom/te/tensor_intrin.h)
// and shapes. Pass pointers with access_ptr rather than buffer->data: an intermediate tensor
// is allocated by lowering, and only element accesses follow it there.
using ExternBodyBuilder =
    std::function<Stmt(const Array<Buffer>& inputs, const Array<Buffer>& outputs)>;

// One output per (shape, dtype); loom::Error naming the operation when the builder returns
// no statement or the shapes and dtypes do not pair up.
Array<Tensor> extern_op(const Array<Array<PrimExpr>>& shapes, const Array<DataType>& dtypes,
                        const Array<Tensor>& inputs, const ExternBodyBuilder& body,
                        std::string name = "extern", std::string tag = "");
Tensor extern_op(const Array<PrimExpr>& shape, DataType dtype, const Array<Tensor>& inputs,
                 const ExternBodyBuilder& body, std::string name = "extern",
                 std::string tag = "");

Tensor placeholder(Array<PrimExpr> shape, DataType dtype = DataType::Float(32),
                   std::string name = "placeholder");

// A compute from a function of the axis variables (all outputs share the shape). Bodies that
// reduce must all be Reduce nodes over the same axes and reducer (as a tuple reducer makes
// them); loom::Error otherwise.
Tensor compute(Array<PrimExpr> shape, const std::function<PrimExpr(const Array<Var>&)>& fcompute,
               std::string name = "compute", std::string tag = "");
Array<Tensor> compute(Array<PrimExpr> shape,
                      const std::function<Array<PrimExpr>(const Array<Var>&)>& fcompute,
                      std::string name = "compute", std::string tag = "");

namespace detail {
template <typename F, typename... Vars>
inline constexpr bool kTakesVars = std::is_invocable_v<F, Vars...>;
}  // namespace detail

// The same with a lambda taking one Var per dimension, for up to 4 dimensions (use the
// Array<Var> form beyond): compute({n, m}, [&](Var i, Var j) { ... }). A lambda returning
// Array<PrimExpr> makes a multi-output compute and returns Array<Tensor>.
template <typename F>
auto compute(Array<PrimExpr> shape, F fcompute, std::string name = "compute",
             std::string tag = "")
  requires(!std::is_invocable_v<F, const Array<Var>&>)
{
  using detail::kTakesVars;
  auto call = [fcompute](const Array<Var>& v) {
    if constexpr (kTakesVars<F, Var>) return fcompute(v.at(0));
    else if constexpr (kTakesVars<F, Var, Var>) return fcompute(v.at(0), v.at(1));
    else if constexpr (kTakesVars<F, Var, Var, Var>) return fcompute(v.at(0), v.at(1), v.at(2));
    else return fcompute(v.at(0), v.at(1), v.at(2), v.at(3));
  };
  using Result = decltype(call(Array<Var>{}));
  std::size_t arity = kTakesVars<F, Var>             ? 1
                      : kTakesVars<F, Var, Var>      ? 2
                      : kTakesVars<F, Var, Var, Var> ? 3
                                                     : 4;
  LOOM_CHECK_USER(shape.size() == arity)
      << "compute '" << name << "': the function takes " << arity << " axis variables but the "
      << "shape has " << shape.size() << " dimensions";
  if constexpr (std::is_same_v<Result, Array<PrimExpr>>) {
    return compute(std::move(shape), std::function<Array<PrimExpr>(const Array<Var>&)>(call),
                   std::move(name), std::move(tag));
  } else {
    return compute(std::move(shape),
                   std::function<PrimExpr(const Array<Var>&)>(
                       [call](const Array<Var>& v) { return PrimExpr(call(v)); }),
                   std::move(name), std::move(tag));
  }
}

// A reduction axis over `range` (kCommReduce).
IterVar reduce_axis(Range range, std::string name = "k");

// A commutative reducer over tuples of values: combine(lhs, rhs) gives the combined tuple,
// identity(dtypes) the identity element per position. reducer(sources, axes) gives one Reduce
// per position (all sharing the combiner), to be the bodies of a multi-output compute.
class CommReducerBuilder {
 public:
  using Combine = std::function<Array<PrimExpr>(const Array<Var>& lhs, const Array<Var>& rhs)>;
  using Identity = std::function<Array<PrimExpr>(const Array<DataType>& dtypes)>;
  CommReducerBuilder(Combine combine, Identity identity, std::string name)
      : combine_(std::move(combine)), identity_(std::move(identity)), name_(std::move(name)) {}

  Array<PrimExpr> operator()(const Array<PrimExpr>& sources, const Array<IterVar>& axes,
                             PrimExpr where = PrimExpr()) const;
  // A single-value reduction (the reducer must combine one value).
  PrimExpr operator()(const PrimExpr& source, const Array<IterVar>& axes,
                      PrimExpr where = PrimExpr()) const;

 private:
  Combine combine_;
  Identity identity_;
  std::string name_;
};

CommReducerBuilder comm_reducer(CommReducerBuilder::Combine combine,
                                CommReducerBuilder::Identity identity,
                                std::string name = "reducer");

// Reductions of `source` over `axes`, where `where` holds (all points when undefined).
PrimExpr sum(const PrimExpr& source, const Array<IterVar>& axes, PrimExpr where = PrimExpr());
PrimExpr max(const PrimExpr& source, const Array<IterVar>& axes, PrimExpr where = PrimExpr());
PrimExpr min(const PrimExpr& source, const Array<IterVar>& axes, PrimExpr where = PrimExpr());
PrimExpr prod(const PrimExpr& source, const Array<IterVar>& axes, PrimExpr where = PrimExpr());

// The smallest / largest value of a type (identities of max / min).
PrimExpr min_value(DataType t);
PrimExpr max_value(DataType t);

// cond ? t : f, evaluating only the chosen branch (unlike select).
PrimExpr if_then_else(PrimExpr cond, PrimExpr t, PrimExpr f);

}  // namespace loom::te
