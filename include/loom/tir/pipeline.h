// The default TIR lowering pipeline: what te::lower runs on the loop nest a schedule builds.
//
//   PrimFunc flat = tir::DefaultLoweringPipeline()(scheduled);  // under PassContext::Current()
//
// The order and the reason for each position are in src/tir/pipeline.cc, which reads top to
// bottom as the pipeline runs. Every pass in it honours the current PassContext (opt_level,
// disabled_passes, instruments), so LOOM_DUMP_IR and LOOM_TIME_PASSES cover lowering.
#pragma once

#include <vector>

#include "loom/tir/transform.h"

namespace loom::tir {

// StorageFlatten -> InjectDoubleBuffer -> LoopPartition -> VectorizeLoop ->
// [before_virtual_threads] -> InjectVirtualThread -> StorageRewrite -> UnrollLoop -> Simplify
// -> RemoveNoOp -> SplitGathers, as one Sequential named "LoweringPipeline". `before_virtual_threads`: a
// target's passes that work on one thread's program, which InjectVirtualThread then
// replicates (VTA's dependency tokens); none by default.
transform::Pass DefaultLoweringPipeline(std::vector<transform::Pass> before_virtual_threads = {});

}  // namespace loom::tir
