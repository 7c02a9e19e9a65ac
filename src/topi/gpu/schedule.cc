// The generic GPU schedule (loom/topi/gpu/schedule.h).
#include "loom/topi/gpu/schedule.h"

#include <algorithm>
#include <vector>

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
  // A copy: scheduling a stage may add stages (rfactor).
  const Array<te::Stage> stages = s.stages();
  for (const te::Stage& stage : stages) {
    if (dynamic_cast<const te::PlaceholderOpNode*>(stage->op.get()) != nullptr) continue;
    if (stage->attach_type != te::AttachType::kRoot) continue;
    visit(stage);
  }
}

bool IsDataParallel(const IterVar& iv) { return iv->iter_type == IterVarType::kDataPar; }

// Why a kernel stage cannot be scheduled, or nothing.
std::optional<std::string> StageUnsupported(const te::Stage& stage) {
  if (dynamic_cast<const te::ComputeOpNode*>(stage->op.get()) == nullptr) {
    return "stage '" + stage->name() + "' is not a te::compute";
  }
  if (stage->leaf_iter_vars.empty()) {
    return "stage '" + stage->name() +
           "' has no loop to spread over threads (a 0-d tensor "
           "that is not a reduction)";
  }
  return std::nullopt;
}

// The product of the constant extents of the leaves of one kind, or nothing when one is not
// constant.
std::optional<int64_t> ConstantProduct(const te::Stage& stage, bool reduction) {
  int64_t product = 1;
  for (const IterVar& leaf : stage->leaf_iter_vars) {
    if (IsDataParallel(leaf) == reduction) continue;
    const auto* extent = leaf->dom->extent.as<IntImmNode>();
    if (extent == nullptr) return std::nullopt;
    product *= extent->value;
  }
  return product;
}

// The threads of one block that share a reduction of `length` iterations: the largest
// power of two not above either.
int ReductionThreads(int64_t length, int threads_per_block) {
  int threads = 1;
  while (threads * 2 <= threads_per_block && threads * 2 <= length) threads *= 2;
  return threads;
}

// The leaves of one kind (data-parallel or reduction) fused into one, or nothing without
// any: a stage not yet scheduled has its data-parallel leaves first, then its reduction
// leaves, so each kind's are adjacent.
std::optional<IterVar> FuseAll(te::Stage& stage, bool reduction) {
  std::vector<IterVar> leaves;
  for (const IterVar& leaf : stage->leaf_iter_vars) {
    if (IsDataParallel(leaf) != reduction) leaves.push_back(leaf);
  }
  if (leaves.empty()) return std::nullopt;
  IterVar fused = leaves[0];
  for (size_t i = 1; i < leaves.size(); ++i) fused = stage.fuse(fused, leaves[i]);
  return fused;
}

// A reduction to a scalar at least this long runs in two kernels: partial results of many
// blocks, then one block combining them (one block alone would leave the device idle).
constexpr int64_t kTwoStageLength = int64_t{1} << 16;

// Whether `stage` is a reduction to a scalar of one value, with no explicit initial value
// (which each partial reduction would apply again), at least kTwoStageLength long.
bool ReducesInTwoStages(const te::Stage& stage, const std::optional<int64_t>& length) {
  const auto* compute = dynamic_cast<const te::ComputeOpNode*>(stage->op.get());
  const auto* reduce = compute->body[0].as<ReduceNode>();
  return compute->axis.empty() && compute->num_outputs() == 1 && reduce != nullptr &&
         reduce->init.empty() && length && *length >= kTwoStageLength;
}

void ScheduleStage(te::Schedule& s, te::Stage stage, const GenericSchedule& options) {
  const std::optional<int64_t> length = ConstantProduct(stage, /*reduction=*/true);
  const std::optional<int64_t> count = ConstantProduct(stage, /*reduction=*/false);
  std::optional<IterVar> outputs = FuseAll(stage, /*reduction=*/false);
  std::optional<IterVar> reduction = FuseAll(stage, /*reduction=*/true);
  if (ReducesInTwoStages(stage, length)) {
    // Up to 1024 blocks, each reducing at least 16 elements per thread into a partial result
    // (an rfactor stage over the blocks); this stage then reduces the partial results.
    const int64_t per_block = int64_t{options.threads_per_block} * 16;
    const int64_t blocks = std::min<int64_t>(1024, (*length + per_block - 1) / per_block);
    auto [block, in_block] =
        stage.split(*reduction, static_cast<int>((*length + blocks - 1) / blocks));
    te::Tensor partial = s.rfactor(te::Tensor(stage->op, 0), block);
    ScheduleStage(s, s[partial], options);
    ScheduleStage(s, stage, options);
    return;
  }
  const bool share_reduction =
      reduction &&
      (!outputs || (length && *length >= 32 && count && *count < options.parallel_threads));
  if (share_reduction) {
    if (outputs) stage.bind(*outputs, te::thread_axis("blockIdx.x"));
    // A reduction of unknown length (only one with no data-parallel loop) gets a full block.
    const int threads =
        ReductionThreads(length.value_or(options.threads_per_block), options.threads_per_block);
    auto [serial, thread] = stage.split(*reduction, threads);
    stage.bind(thread, te::thread_axis("threadIdx.x"));
    return;
  }
  auto [block, thread] = stage.split(*outputs, options.threads_per_block);
  stage.bind(block, te::thread_axis("blockIdx.x"));
  stage.bind(thread, te::thread_axis("threadIdx.x"));
}

}  // namespace

std::optional<std::string> GenericScheduleUnsupported(const Array<te::Tensor>& outs) {
  te::Schedule s = te::create_schedule(OpsOf(outs));
  detail::InlineInjective(s, OpsOf(outs));
  std::optional<std::string> why;
  ForEachKernelStage(s, [&](const te::Stage& stage) {
    if (!why) why = StageUnsupported(stage);
  });
  return why;
}

te::Schedule schedule_generic(const Array<te::Tensor>& outs, const GenericSchedule& options) {
  LOOM_CHECK_USER(options.threads_per_block > 0)
      << "schedule_generic: threads_per_block must be positive";
  te::Schedule s = te::create_schedule(OpsOf(outs));
  detail::InlineInjective(s, OpsOf(outs));
  ForEachKernelStage(s, [&](te::Stage stage) {
    if (std::optional<std::string> why = StageUnsupported(stage)) {
      LOOM_THROW << "schedule_generic: " << *why;
    }
    ScheduleStage(s, stage, options);
  });
  return s;
}

}  // namespace loom::topi::gpu
