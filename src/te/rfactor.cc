// rfactor: a reduction split into partial reductions over one of its reduction loops, kept
// apart as a data-parallel axis of a new tensor, and a final reduction over that axis.
#include <algorithm>

#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/tir/stmt_functor.h"
#include "te/schedule_graph.h"
#include "te/stage_util.h"

namespace loom::te {
namespace {

std::string LoopNames(const StageNode& stage) {
  std::string out;
  for (const IterVar& iv : stage.leaf_iter_vars) out += (out.empty() ? "" : ", ") + iv->var.name();
  return out;
}

bool IsDataParallel(const IterVar& iv) { return iv->iter_type == IterVarType::kDataPar; }

// The requests rfactor cannot honour, with the reason; returns the reduction.
const ReduceNode* CheckRfactor(const StageNode& stage, const IterVar& axis, int factor_axis) {
  std::string what = "rfactor of stage '" + stage.name() + "'";
  const auto* compute = dynamic_cast<const ComputeOpNode*>(stage.op.get());
  LOOM_CHECK_USER(compute && !compute->reduce_axis.empty())
      << what << ": the stage is not a reduction";
  LOOM_CHECK_USER(axis.defined()) << what << ": the axis is undefined";
  LOOM_CHECK_USER(stage.IsLeaf(axis))
      << what << ": '" << axis->var.name() << "' is not a loop of the stage (its loops are "
      << LoopNames(stage) << ")";
  LOOM_CHECK_USER(axis->iter_type == IterVarType::kCommReduce)
      << what << ": '" << axis->var.name() << "' is not a reduction axis of the stage";
  int ndim = static_cast<int>(compute->axis.size());
  LOOM_CHECK_USER(factor_axis >= 0 && factor_axis <= ndim)
      << what << ": factor_axis " << factor_axis << " is not a position among the "
      << ndim << " axes of the result (0 to " << ndim << ")";
  for (const IterVarRelation& rel : stage.relations) {
    const IterVar& touched = std::holds_alternative<SplitRelation>(rel)
                                 ? std::get<SplitRelation>(rel).parent
                                 : std::get<FuseRelation>(rel).outer;
    LOOM_CHECK_USER(!IsDataParallel(touched))
        << what << ": data-parallel axis '" << touched->var.name()
        << "' was already split or fused, and rfactor starts the stage's loops over; call "
        << "rfactor before scheduling the data-parallel axes";
  }
  const auto* reduce = compute->body[0].as<ReduceNode>();
  LOOM_CHECK_USER(reduce->init.empty())
      << what << ": the reduction starts from explicit initial values, which every partial "
      << "reduction would apply again";
  return reduce;
}

// Where the reduction leaves would overshoot their root axes (splits that do not divide).
PrimExpr InRange(const StageNode& stage, const detail::IterVarValueMap& values,
                 arith::Analyzer* analyzer) {
  PrimExpr all = const_true();
  for (const IterVar& root : stage.root_iter_vars) {
    if (IsDataParallel(root)) continue;
    PrimExpr in_range = values.at(root) < root->dom->min + root->dom->extent;
    if (!analyzer->CanProve(in_range)) all = all && analyzer->Simplify(in_range);
  }
  return all;
}

// One element of the reduction with no loops left: the source combined with the identity,
// where the condition holds, and the identity elsewhere.
Array<PrimExpr> SingleStep(const ReduceNode& reduce, const Array<PrimExpr>& sources,
                           const PrimExpr& condition) {
  const CommReducer& combiner = reduce.combiner;
  Array<PrimExpr> steps;
  const Array<PrimExpr> combined =
      tir::ApplyCombiner(combiner, combiner->identity_element, sources);
  for (size_t k = 0; k < sources.size(); ++k) {
    PrimExpr step = combined[k];
    if (!is_const_true(condition)) {
      step = if_then_else(condition, step, combiner->identity_element[k]);
    }
    steps.push_back(step);
  }
  return steps;
}

}  // namespace

Tensor Schedule::rfactor(const Tensor& tensor, const IterVar& axis, int factor_axis) {
  LOOM_CHECK_USER(tensor.defined()) << "rfactor: the tensor is undefined";
  Stage stage = (*this)[tensor];
  const ReduceNode* reduce = CheckRfactor(*stage, axis, factor_axis);
  const auto& compute = static_cast<const ComputeOpNode&>(*stage->op);

  // The stage's loops over fresh variables: the data axes of the partial tensor, `axis` as
  // one more data axis, and its other reduction loops as its reduction axes.
  arith::Analyzer analyzer;
  BoundMap ranges;
  for (const IterVar& root : stage->root_iter_vars) ranges[root] = root->dom;
  detail::PassDownDomain(*stage, &analyzer, &ranges);
  Array<IterVar> rf_axis = detail::FreshAxes(compute.axis);
  tir::VarMap to_rf;
  for (size_t d = 0; d < rf_axis.size(); ++d) to_rf[compute.axis[d]->var] = rf_axis[d]->var;
  IterVar factor;
  Array<IterVar> rf_reduce_axis;
  for (const IterVar& leaf : stage->leaf_iter_vars) {
    analyzer.Bind(leaf->var, Range(make_zero(leaf->var.dtype()), ranges.at(leaf)->extent));
    if (IsDataParallel(leaf)) continue;
    IterVarType type = leaf.same_as(axis) ? IterVarType::kDataPar : IterVarType::kCommReduce;
    IterVar fresh(Range(make_zero(leaf->var.dtype()), ranges.at(leaf)->extent),
                  Var(leaf->var.name(), leaf->var.dtype()), type, "");
    to_rf[leaf->var] = fresh->var;
    if (leaf.same_as(axis)) {
      factor = fresh;
    } else {
      rf_reduce_axis.push_back(fresh);
    }
  }
  rf_axis.insert(rf_axis.begin() + factor_axis, factor);

  // Root reduction variables in terms of the leaves, then of the fresh variables.
  detail::IterVarValueMap values = detail::PassUpValues(*stage, ranges, &analyzer);
  tir::VarMap roots;
  for (const IterVar& root : stage->root_iter_vars) {
    roots[root->var] = tir::Substitute(values.at(root), to_rf);
  }
  PrimExpr condition = tir::Substitute(
      tir::Substitute(reduce->condition && InRange(*stage, values, &analyzer), roots), to_rf);
  Array<PrimExpr> sources;
  for (const PrimExpr& source : reduce->source) {
    sources.push_back(tir::Substitute(source, roots));
  }
  Array<PrimExpr> rf_bodies;
  if (rf_reduce_axis.empty()) {
    rf_bodies = SingleStep(*reduce, sources, analyzer.Simplify(condition));
  } else {
    for (size_t k = 0; k < sources.size(); ++k) {
      rf_bodies.push_back(Reduce(reduce->combiner, sources, rf_reduce_axis,
                                 analyzer.Simplify(condition), static_cast<int>(k), {}));
    }
  }
  Operation partial = detail::NewCompute(stage->name() + ".rf", rf_axis, rf_reduce_axis,
                                         rf_bodies);

  // The stage now reduces the partial results over the factor axis.
  IterVar over(factor->dom, Var(axis->var.name() + ".v", axis->var.dtype()),
               IterVarType::kCommReduce, "");
  Array<PrimExpr> indices = detail::VarsOf(compute.axis);
  indices.insert(indices.begin() + factor_axis, over->var);
  Array<PrimExpr> partials;
  for (int k = 0; k < partial->num_outputs(); ++k) partials.push_back(partial->output(k)(indices));
  Array<PrimExpr> bodies;
  for (size_t k = 0; k < partials.size(); ++k) {
    bodies.push_back(Reduce(reduce->combiner, partials, {over}, const_true(),
                            static_cast<int>(k), {}));
  }
  detail::ResetStage(stage.operator->(), detail::ReplacementOp(compute, {over}, bodies));
  Array<Stage>& stages = state_->stages;
  size_t at = detail::StageIndex(stages, stage);
  stages.insert(stages.begin() + static_cast<std::ptrdiff_t>(at),
                detail::NewStage(partial, "global"));
  return partial->output(tensor.value_index());
}

}  // namespace loom::te
