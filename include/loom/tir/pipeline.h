// The default TIR lowering pipeline: what te::lower runs on the loop nest a schedule builds.
//
//   PrimFunc flat = tir::DefaultLoweringPipeline()(scheduled);  // under PassContext::Current()
//
// The order and the reason for each position are in src/tir/pipeline.cc, which reads top to
// bottom as the pipeline runs. Every pass in it honours the current PassContext (opt_level,
// disabled_passes, instruments), so LOOM_DUMP_IR and LOOM_TIME_PASSES cover lowering.
#pragma once

#include "loom/tir/transform.h"

namespace loom::tir {

// StorageFlatten -> InjectDoubleBuffer -> LoopPartition -> VectorizeLoop ->
// InjectVirtualThread -> StorageRewrite -> UnrollLoop -> Simplify -> RemoveNoOp, as one
// Sequential named "LoweringPipeline".
transform::Pass DefaultLoweringPipeline();

}  // namespace loom::tir
