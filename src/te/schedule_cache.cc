// cache_read and cache_write: stages that stage data through a buffer of another storage
// scope. Operations are immutable, so a stage whose reads or body change gets a replacement
// operation writing the same buffers (see StageNode::op).
#include <algorithm>

#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/tir/stmt_functor.h"
#include "te/stage_util.h"

namespace loom::te {
namespace detail {

Stage NewStage(const Operation& op, const std::string& scope) {
  auto node = std::make_shared<StageNode>();
  node->op = op;
  node->origin_op = op;
  node->root_iter_vars = static_cast<const ComputeOpNode&>(*op).root_iter_vars();
  node->all_iter_vars = node->root_iter_vars;
  node->leaf_iter_vars = node->root_iter_vars;
  node->scope = scope;
  return Stage(std::move(node));
}

Array<IterVar> FreshAxes(const Array<IterVar>& axes) {
  Array<IterVar> fresh;
  for (const IterVar& iv : axes) {
    fresh.push_back(IterVar(iv->dom, Var(iv->var.name(), iv->var.dtype()), iv->iter_type,
                            iv->thread_tag));
  }
  return fresh;
}

Operation ReplacementOp(const ComputeOpNode& original, Array<IterVar> reduce_axis,
                        Array<PrimExpr> body) {
  auto op = std::make_shared<ComputeOpNode>(original.name, original.tag);
  op->axis = original.axis;
  op->reduce_axis = std::move(reduce_axis);
  op->body = std::move(body);
  op->output_buffers = original.output_buffers;
  return op;
}

void ResetStage(StageNode* stage, const Operation& op) {
  stage->op = op;
  stage->root_iter_vars = static_cast<const ComputeOpNode&>(*op).root_iter_vars();
  stage->all_iter_vars = stage->root_iter_vars;
  stage->leaf_iter_vars = stage->root_iter_vars;
  stage->relations.clear();
  stage->iter_var_attrs.clear();
}

Operation NewCompute(const std::string& name, const Array<IterVar>& axis,
                     const Array<IterVar>& reduce_axis, const Array<PrimExpr>& body) {
  auto op = std::make_shared<ComputeOpNode>(name, "");
  op->axis = axis;
  op->reduce_axis = reduce_axis;
  op->body = body;
  Array<PrimExpr> shape;
  for (const IterVar& iv : axis) shape.push_back(iv->dom->extent);
  Array<Array<PrimExpr>> shapes(body.size(), shape);
  Array<DataType> dtypes;
  for (const PrimExpr& b : body) dtypes.push_back(b.dtype());
  op->MakeOutputs(shapes, dtypes);
  return op;
}

Array<PrimExpr> VarsOf(const Array<IterVar>& axes) {
  Array<PrimExpr> vars;
  for (const IterVar& iv : axes) vars.push_back(iv->var);
  return vars;
}

size_t StageIndex(const Array<Stage>& stages, const Stage& stage) {
  auto it = std::find_if(stages.begin(), stages.end(),
                         [&](const Stage& s) { return s.same_as(stage); });
  LOOM_ICHECK(it != stages.end()) << "stage '" << stage->name() << "' is not in its schedule";
  return static_cast<size_t>(it - stages.begin());
}

}  // namespace detail

namespace {

// Reads of one buffer redirected to another at the same indices.
class RedirectReads : public ExprMutator {
 public:
  RedirectReads(Buffer from, Buffer to) : from_(std::move(from)), to_(std::move(to)) {}
  using ExprMutator::VisitExpr_;
  PrimExpr VisitExpr_(const BufferLoadNode* op) override {
    PrimExpr load = ExprMutator::VisitExpr_(op);
    const auto* rebuilt = load.as<BufferLoadNode>();
    if (!rebuilt->buffer.same_as(from_)) return load;
    return BufferLoad(to_, rebuilt->indices);
  }

 private:
  Buffer from_, to_;
};

bool BodiesRead(const ComputeOpNode& op, const Buffer& buffer) {
  bool found = false;
  for (const PrimExpr& body : op.body) {
    PostOrderVisit(body, [&](const ObjectRef& node) {
      const auto* load = node.as<BufferLoadNode>();
      found = found || (load && load->buffer.same_as(buffer));
    });
  }
  return found;
}

Array<IterVar> AxesOver(const Array<PrimExpr>& shape) {
  static const char* const kNames[] = {"i", "j", "k", "l"};
  Array<IterVar> axes;
  for (size_t d = 0; d < shape.size(); ++d) {
    std::string name = d < 4 ? kNames[d] : "ax" + std::to_string(d);
    axes.push_back(IterVar(Range(make_zero(shape[d].dtype()), shape[d]),
                           Var(name, shape[d].dtype()), IterVarType::kDataPar, ""));
  }
  return axes;
}

}  // namespace

Tensor Schedule::cache_read(const Tensor& tensor, const std::string& scope,
                            const Array<Operation>& readers) {
  LOOM_CHECK_USER(tensor.defined()) << "cache_read: the tensor is undefined";
  Stage producer = (*this)[tensor];
  std::string what = "cache_read of stage '" + producer->name() + "'";
  LOOM_CHECK_USER(!scope.empty()) << what << ": the scope is empty";
  LOOM_CHECK_USER(!readers.empty())
      << what << ": no readers are given; list the operations that should read the copy";
  Array<Stage> reader_stages;
  for (const Operation& reader_op : readers) {
    LOOM_CHECK_USER(reader_op != nullptr) << what << ": a reader operation is null";
    Stage reader = (*this)[reader_op];
    const auto* compute = dynamic_cast<const ComputeOpNode*>(reader->op.get());
    LOOM_CHECK_USER(compute && BodiesRead(*compute, tensor.buffer()))
        << what << ": reader '" << reader->name() << "' does not read '" << tensor.name() << "'";
    LOOM_CHECK_USER(std::none_of(reader_stages.begin(), reader_stages.end(),
                                 [&](const Stage& s) { return s.same_as(reader); }))
        << what << ": reader '" << reader->name() << "' is listed twice";
    reader_stages.push_back(reader);
  }

  Array<IterVar> axis = AxesOver(tensor.shape());
  Operation cache =
      detail::NewCompute(tensor.name() + "." + scope, axis, {}, {tensor(detail::VarsOf(axis))});
  for (const Stage& reader : reader_stages) {
    const auto& compute = static_cast<const ComputeOpNode&>(*reader->op);
    RedirectReads redirect(tensor.buffer(), cache->output_buffers[0]);
    Array<PrimExpr> bodies;
    for (const PrimExpr& body : compute.body) bodies.push_back(redirect(body));
    reader->op = detail::ReplacementOp(compute, compute.reduce_axis, bodies);
  }
  Array<Stage>& stages = state_->stages;
  size_t at = detail::StageIndex(stages, producer) + 1;
  stages.insert(stages.begin() + static_cast<std::ptrdiff_t>(at), detail::NewStage(cache, scope));
  return cache->output(0);
}

Tensor Schedule::cache_write(const Tensor& tensor, const std::string& scope) {
  LOOM_CHECK_USER(tensor.defined()) << "cache_write: the tensor is undefined";
  Stage stage = (*this)[tensor];
  std::string what = "cache_write of stage '" + stage->name() + "'";
  LOOM_CHECK_USER(!scope.empty()) << what << ": the scope is empty";
  const auto* compute = dynamic_cast<const ComputeOpNode*>(stage->op.get());
  LOOM_CHECK_USER(compute != nullptr)
      << what << ": only a compute can be cached ('" << stage->name() << "' is a placeholder)";
  LOOM_CHECK_USER(stage->attach_type != AttachType::kInline)
      << what << ": the stage is inlined and writes no buffer";
  bool unscheduled = stage->relations.empty() && stage->iter_var_attrs.empty() &&
                     std::equal(stage->leaf_iter_vars.begin(), stage->leaf_iter_vars.end(),
                                stage->root_iter_vars.begin(),
                                [](const IterVar& a, const IterVar& b) { return a.same_as(b); });
  LOOM_CHECK_USER(unscheduled)
      << what << ": its loops were already scheduled; call cache_write first and schedule the "
      << "stage and its cache afterwards";

  // The cache computes the original bodies over axes of its own; the reduction axes move
  // with the bodies, so the caller schedules the reduction on the cache.
  Array<IterVar> cache_axis = detail::FreshAxes(compute->axis);
  tir::VarMap to_cache_axis;
  for (size_t d = 0; d < cache_axis.size(); ++d) {
    to_cache_axis[compute->axis[d]->var] = cache_axis[d]->var;
  }
  Array<PrimExpr> cache_bodies;
  for (const PrimExpr& body : compute->body) {
    cache_bodies.push_back(tir::Substitute(body, to_cache_axis));
  }
  Operation cache = detail::NewCompute(stage->name() + "." + scope, cache_axis,
                                       compute->reduce_axis, cache_bodies);
  Array<PrimExpr> copies;
  for (int k = 0; k < cache->num_outputs(); ++k) {
    copies.push_back(cache->output(k)(detail::VarsOf(compute->axis)));
  }
  detail::ResetStage(stage.operator->(), detail::ReplacementOp(*compute, {}, copies));
  Array<Stage>& stages = state_->stages;
  size_t at = detail::StageIndex(stages, stage);
  stages.insert(stages.begin() + static_cast<std::ptrdiff_t>(at), detail::NewStage(cache, scope));
  return cache->output(tensor.value_index());
}

}  // namespace loom::te
