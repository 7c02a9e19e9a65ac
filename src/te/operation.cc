// Placeholders, computes and the checks that make a compute well formed.
#include "loom/te/operation.h"

#include <unordered_set>

#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/ir/printer.h"

namespace loom::te {
namespace {

std::shared_ptr<ComputeOpNode> NewComputeOp(const Array<PrimExpr>& shape, std::string name,
                                            std::string tag) {
  auto op = std::make_shared<ComputeOpNode>(std::move(name), std::move(tag));
  static const char* const kAxisNames[] = {"i", "j", "k", "l"};
  for (size_t d = 0; d < shape.size(); ++d) {
    LOOM_CHECK_USER(shape[d].defined() && shape[d].dtype().is_int() && shape[d].dtype().is_scalar())
        << "compute '" << op->name << "': dimension " << d << " must be a scalar integer";
    std::string axis_name = d < 4 ? kAxisNames[d] : "ax" + std::to_string(d);
    op->axis.push_back(IterVar(Range(make_zero(shape[d].dtype()), shape[d]),
                               Var(axis_name, shape[d].dtype()), IterVarType::kDataPar, ""));
  }
  return op;
}

// A compute's bodies either all reduce, with one combiner and one set of axes (the outputs
// of one tuple reduction), or none does; a Reduce may only be a whole body.
void CheckBodies(ComputeOpNode* op) {
  const ReduceNode* first = op->body.at(0).as<ReduceNode>();
  for (size_t i = 0; i < op->body.size(); ++i) {
    const PrimExpr& body = op->body[i];
    LOOM_CHECK_USER(body.defined()) << "compute '" << op->name << "': body " << i
                                    << " is undefined";
    const ReduceNode* reduce = body.as<ReduceNode>();
    LOOM_CHECK_USER((reduce != nullptr) == (first != nullptr))
        << "compute '" << op->name << "': either every output or none must be a reduction";
    if (reduce) {
      LOOM_CHECK_USER(reduce->combiner.same_as(first->combiner) &&
                      reduce->axis.size() == first->axis.size())
          << "compute '" << op->name
          << "': the outputs of one compute must come from one (tuple) reduction";
      for (size_t a = 0; a < reduce->axis.size(); ++a) {
        LOOM_CHECK_USER(reduce->axis[a].same_as(first->axis[a]))
            << "compute '" << op->name << "': the outputs reduce over different axes";
      }
    }
    PostOrderVisit(reduce ? PrimExpr(reduce->source.at(reduce->value_index)) : body,
                   [&](const ObjectRef& node) {
                     LOOM_CHECK_USER(!node.as<ReduceNode>())
                         << "compute '" << op->name << "': a reduction must be the whole body "
                         << "of an output, not part of an expression (compute it in a stage "
                         << "of its own)";
                   });
  }
  if (first) op->reduce_axis = first->axis;
  for (const IterVar& iv : op->reduce_axis) {
    LOOM_CHECK_USER(iv->iter_type == IterVarType::kCommReduce)
        << "compute '" << op->name << "': axis '" << iv->var.name()
        << "' is reduced over but was not made by reduce_axis";
  }
}

Array<Tensor> Finish(const std::shared_ptr<ComputeOpNode>& op, const Array<PrimExpr>& shape) {
  CheckBodies(op.get());
  op->producers = op->InputTensors();
  Array<Array<PrimExpr>> shapes(op->body.size(), shape);
  Array<DataType> dtypes;
  for (const PrimExpr& body : op->body) dtypes.push_back(body.dtype());
  op->MakeOutputs(shapes, dtypes);
  Array<Tensor> outputs;
  for (int i = 0; i < op->num_outputs(); ++i) outputs.push_back(op->output(i));
  return outputs;
}

Array<Var> AxisVars(const ComputeOpNode& op) {
  Array<Var> vars;
  for (const IterVar& iv : op.axis) vars.push_back(iv->var);
  return vars;
}

}  // namespace

Array<Tensor> ComputeOpNode::InputTensors() const {
  Array<Tensor> inputs;
  std::unordered_set<const Object*> seen;
  for (const PrimExpr& e : body) {
    PostOrderVisit(e, [&](const ObjectRef& node) {
      const auto* load = node.as<BufferLoadNode>();
      if (!load || !seen.insert(load->buffer.get()).second) return;
      std::optional<Tensor> tensor = TensorFromBuffer(load->buffer);
      LOOM_CHECK_USER(tensor.has_value())
          << "compute '" << name << "' reads buffer '" << load->buffer->name
          << "', which is not a tensor; read tensors made by placeholder or compute";
      inputs.push_back(*tensor);
    });
  }
  return inputs;
}

Array<IterVar> ComputeOpNode::root_iter_vars() const {
  Array<IterVar> roots = axis;
  roots.insert(roots.end(), reduce_axis.begin(), reduce_axis.end());
  return roots;
}

Tensor placeholder(Array<PrimExpr> shape, DataType dtype, std::string name) {
  auto op = std::make_shared<PlaceholderOpNode>(std::move(name), "");
  op->MakeOutputs({std::move(shape)}, {dtype});
  return op->output(0);
}

Tensor compute(Array<PrimExpr> shape, const std::function<PrimExpr(const Array<Var>&)>& fcompute,
               std::string name, std::string tag) {
  auto op = NewComputeOp(shape, std::move(name), std::move(tag));
  op->body = {fcompute(AxisVars(*op))};
  return Finish(op, shape).at(0);
}

Array<Tensor> compute(Array<PrimExpr> shape,
                      const std::function<Array<PrimExpr>(const Array<Var>&)>& fcompute,
                      std::string name, std::string tag) {
  auto op = NewComputeOp(shape, std::move(name), std::move(tag));
  op->body = fcompute(AxisVars(*op));
  LOOM_CHECK_USER(!op->body.empty()) << "compute '" << op->name << "' has no outputs";
  return Finish(op, shape);
}

IterVar reduce_axis(Range range, std::string name) {
  LOOM_CHECK_USER(range.defined()) << "reduce_axis '" << name << "': the range is undefined";
  // Range(0, n) has an int32 min whatever n's type: the axis takes the extent's (int64 for a
  // symbolic size).
  const DataType t = range->extent.dtype();
  if (range->min.dtype() != t) range = Range(cast(t, range->min), range->extent);
  return IterVar(range, Var(std::move(name), t), IterVarType::kCommReduce, "");
}

PrimExpr if_then_else(PrimExpr cond, PrimExpr t, PrimExpr f) {
  LOOM_CHECK_USER(t.dtype() == f.dtype())
      << "if_then_else(" << cond << ", " << t << ", " << f << "): the branches' types differ ("
      << t.dtype() << " vs " << f.dtype() << ")";
  DataType dtype = t.dtype();
  return call_intrin(dtype, "if_then_else", {std::move(cond), std::move(t), std::move(f)});
}

}  // namespace loom::te
