#include "loom/topi/schedule.h"

#include <string>

#include "loom/te/operation.h"
#include "topi/topi_util.h"

namespace loom::topi {

namespace {

using detail::IsInjective;
using detail::kVectorLanes;

// The number of elements of `shape`, when *constant says every extent is a constant.
int64_t ConstantElements(const Array<PrimExpr>& shape, bool* constant) {
  int64_t elements = 1;
  *constant = true;
  for (const PrimExpr& extent : shape) {
    int64_t value = 0;
    *constant = *constant && IsConstInt(extent, &value);
    elements *= *constant ? value : 1;
  }
  return elements;
}

void ScheduleInjectiveOutput(te::Stage stage) {
  Array<IterVar> axes = stage->leaf_iter_vars;
  if (axes.empty()) return;  // a 0-d tensor: one element
  IterVar fused = axes[0];
  for (size_t d = 1; d < axes.size(); ++d) fused = stage.fuse(fused, axes[d]);
  bool constant = true;
  int64_t elements = ConstantElements(stage->op->output_shape(0), &constant);
  auto [vectors, lanes] = stage.split(fused, kVectorLanes);
  stage.vectorize(lanes);
  if (!constant || elements >= kParallelMinElements) stage.parallel(vectors);
}

bool IsReduction(const te::Operation& op) { return op->tag == "comm_reduce"; }

void ScheduleReduction(te::Stage stage) {
  const auto* compute = dynamic_cast<const te::ComputeOpNode*>(stage->op.get());
  Array<IterVar> spatial = compute->axis;
  Array<IterVar> reduce = compute->reduce_axis;
  // Work: every (output, reduction) pair.
  bool constant = true;
  int64_t work = ConstantElements(stage->op->output_shape(0), &constant);
  for (const IterVar& r : reduce) {
    int64_t extent = 0;
    constant = constant && IsConstInt(r->dom->extent, &extent);
    work *= constant ? extent : 1;
  }
  bool parallel = !constant || work >= kParallelMinElements;
  if (spatial.empty()) return;
  // The innermost output dimension is kept and contiguous in the input when the reduction
  // does not read along it with stride 1: vectorize it, reductions outside.
  IterVar last = spatial.back();
  int64_t last_extent = 0;
  bool vectorize = IsConstInt(last->dom->extent, &last_extent) && last_extent >= kVectorLanes;
  Array<IterVar> order(spatial.begin(), spatial.end() - 1);
  IterVar lanes;
  if (vectorize) {
    auto [vectors, inner] = stage.split(last, kVectorLanes);
    order.push_back(vectors);
    lanes = inner;
  } else {
    order.push_back(last);
  }
  IterVar outer = order[0];
  for (size_t d = 1; d < order.size(); ++d) outer = stage.fuse(outer, order[d]);
  Array<IterVar> loops{outer};
  loops.insert(loops.end(), reduce.begin(), reduce.end());
  if (vectorize) loops.push_back(lanes);
  stage.reorder(loops);
  if (vectorize) stage.vectorize(lanes);
  if (parallel) stage.parallel(outer);
}

}  // namespace

te::Schedule schedule_reduce(const Array<te::Tensor>& outs) {
  Array<te::Operation> ops;
  for (const te::Tensor& out : outs) ops.push_back(out.op());
  te::Schedule s = te::create_schedule(ops);
  for (const te::Stage& stage : s.stages()) {
    bool is_output = false;
    for (const te::Operation& op : ops) is_output = is_output || op == stage->op;
    te::Stage mutable_stage(stage);
    if (IsReduction(stage->op)) {
      ScheduleReduction(mutable_stage);
    } else if (is_output && IsInjective(stage->op)) {
      ScheduleInjectiveOutput(mutable_stage);
    } else if (IsInjective(stage->op)) {
      mutable_stage.compute_inline();
    }
  }
  return s;
}

te::Schedule schedule_softmax(const te::Tensor& out) {
  const std::string& tag = out.op()->tag;
  const std::string prefix = "softmax_output:";
  LOOM_CHECK_USER(tag.rfind(prefix, 0) == 0)
      << "schedule_softmax: '" << out.name() << "' is not the output of softmax or log_softmax";
  size_t axis = std::stoul(tag.substr(prefix.size()));
  te::Schedule s = te::create_schedule({out.op()});
  te::Stage stage = s[out];
  Array<IterVar> axes = stage->leaf_iter_vars;
  Array<IterVar> rows;
  for (size_t d = 0; d < axes.size(); ++d) {
    if (d != axis) rows.push_back(axes[d]);
  }
  auto [vectors, lanes] = stage.split(axes[axis], kVectorLanes);
  stage.vectorize(lanes);
  IterVar row;
  if (!rows.empty()) {
    Array<IterVar> order = rows;
    order.push_back(vectors);
    order.push_back(lanes);
    stage.reorder(order);
    row = rows[0];
    for (size_t d = 1; d < rows.size(); ++d) row = stage.fuse(row, rows[d]);
    bool constant = true;
    if (ConstantElements(out.shape(), &constant) >= kParallelMinElements || !constant) {
      stage.parallel(row);
    }
  }
  // The row's maximum, exponentials and their sum, computed where the row is.
  for (const te::Stage& producer : s.stages()) {
    te::Stage row_stage(producer);
    bool exponentials = producer->op->tag == "softmax_exp";
    if (row.defined() && (exponentials || IsReduction(producer->op))) {
      row_stage.compute_at(stage, row);
    }
    if (exponentials) {
      IterVar exp_lanes = row_stage.split(row_stage->leaf_iter_vars[axis], kVectorLanes).second;
      row_stage.vectorize(exp_lanes);
    }
  }
  return s;
}

te::Schedule schedule_injective(const Array<te::Tensor>& outs) {
  Array<te::Operation> ops;
  for (const te::Tensor& out : outs) ops.push_back(out.op());
  te::Schedule s = te::create_schedule(ops);
  detail::InlineInjective(s, ops);
  for (const te::Operation& op : ops) ScheduleInjectiveOutput(s[op]);
  return s;
}

}  // namespace loom::topi
