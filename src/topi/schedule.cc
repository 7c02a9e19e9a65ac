#include "loom/topi/schedule.h"

#include <string>

#include "loom/te/operation.h"

namespace loom::topi {

namespace {

constexpr int kVectorLanes = 16;

bool IsInjective(const te::Operation& op) {
  const std::string& tag = op->tag;
  return dynamic_cast<const te::ComputeOpNode*>(op.get()) != nullptr &&
         (tag == "elemwise" || tag == "broadcast" || tag == "injective");
}

void ScheduleInjectiveOutput(te::Stage stage) {
  Array<IterVar> axes = stage->leaf_iter_vars;
  if (axes.empty()) return;  // a 0-d tensor: one element
  IterVar fused = axes[0];
  for (size_t d = 1; d < axes.size(); ++d) fused = stage.fuse(fused, axes[d]);
  int64_t elements = 1;
  bool constant = true;
  for (const PrimExpr& extent : stage->op->output_shape(0)) {
    int64_t value = 0;
    constant = constant && IsConstInt(extent, &value);
    elements *= constant ? value : 1;
  }
  auto [vectors, lanes] = stage.split(fused, kVectorLanes);
  stage.vectorize(lanes);
  if (!constant || elements >= kParallelMinElements) stage.parallel(vectors);
}

}  // namespace

te::Schedule schedule_injective(const Array<te::Tensor>& outs) {
  Array<te::Operation> ops;
  for (const te::Tensor& out : outs) ops.push_back(out.op());
  te::Schedule s = te::create_schedule(ops);
  for (const te::Stage& stage : s.stages()) {
    bool is_output = false;
    for (const te::Operation& op : ops) is_output = is_output || op == stage->op;
    if (!is_output && IsInjective(stage->op)) te::Stage(stage).compute_inline();
  }
  for (const te::Operation& op : ops) ScheduleInjectiveOutput(s[op]);
  return s;
}

}  // namespace loom::topi
