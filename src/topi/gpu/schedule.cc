// The generic GPU schedule (loom/topi/gpu/schedule.h).
#include "loom/topi/gpu/schedule.h"

#include "loom/support/error.h"
#include "topi/topi_util.h"

namespace loom::topi::gpu {

namespace {

Array<te::Operation> OpsOf(const Array<te::Tensor>& outs) {
  Array<te::Operation> ops;
  for (const te::Tensor& t : outs) ops.push_back(t.op());
  return ops;
}

// The stages that become kernels: every compute stage left at the root once the injective
// intermediates are inlined.
template <typename Visit>
void ForEachKernelStage(const te::Schedule& s, Visit&& visit) {
  for (const te::Stage& stage : s.stages()) {
    if (dynamic_cast<const te::PlaceholderOpNode*>(stage->op.get()) != nullptr) continue;
    if (stage->attach_type != te::AttachType::kRoot) continue;
    visit(stage);
  }
}

bool IsDataParallel(const IterVar& iv) { return iv->iter_type == IterVarType::kDataPar; }

// Why a kernel stage cannot have a thread per output element, or nothing.
std::optional<std::string> StageUnsupported(const te::Stage& stage) {
  if (dynamic_cast<const te::ComputeOpNode*>(stage->op.get()) == nullptr) {
    return "stage '" + stage->name() + "' is not a te::compute";
  }
  if (stage->leaf_iter_vars.empty() || !IsDataParallel(stage->leaf_iter_vars[0])) {
    return "stage '" + stage->name() + "' has no data-parallel loop to spread over threads";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> ThreadPerElementUnsupported(const Array<te::Tensor>& outs) {
  te::Schedule s = te::create_schedule(OpsOf(outs));
  detail::InlineInjective(s, OpsOf(outs));
  std::optional<std::string> why;
  ForEachKernelStage(s, [&](const te::Stage& stage) {
    if (!why) why = StageUnsupported(stage);
  });
  return why;
}

te::Schedule schedule_thread_per_element(const Array<te::Tensor>& outs, int threads_per_block) {
  LOOM_CHECK_USER(threads_per_block > 0)
      << "schedule_thread_per_element: threads_per_block must be positive";
  te::Schedule s = te::create_schedule(OpsOf(outs));
  detail::InlineInjective(s, OpsOf(outs));
  ForEachKernelStage(s, [&](te::Stage stage) {
    if (std::optional<std::string> why = StageUnsupported(stage)) {
      LOOM_THROW << "schedule_thread_per_element: " << *why;
    }
    IterVar fused = stage->leaf_iter_vars[0];
    while (stage->leaf_iter_vars.size() > 1 && IsDataParallel(stage->leaf_iter_vars[1])) {
      fused = stage.fuse(fused, stage->leaf_iter_vars[1]);
    }
    auto [block, thread] = stage.split(fused, threads_per_block);
    stage.bind(block, te::thread_axis("blockIdx.x"));
    stage.bind(thread, te::thread_axis("threadIdx.x"));
  });
  return s;
}

}  // namespace loom::topi::gpu
