// Lowering a schedule to loop IR:
//
//   Schedule s = create_schedule({C.op()});
//   ...primitives...
//   PrimFunc f = lower(s, {A, B, C}, "matmul");
//   std::cout << f;                          // reads like tvm.lower(..., simple_mode=True)
//
// ScheduleToPrimFunc runs bound inference (the range of every iteration variable of every
// stage, from what the consumers need), builds the loop nest of every stage from its
// schedule, attaches stages at their compute_at points (a non-output stage is allocated
// there, sized by the region bound inference found), and simplifies: tensors are still
// accessed N-dimensionally, which is what tests of a schedule's loop structure compare.
// lower then runs the TIR lowering pipeline (tir/pipeline.h: flattening, loop partitioning,
// vectorization, virtual threads, double buffering, storage planning, unrolling).
#pragma once

#include <string>
#include <unordered_map>

#include "loom/te/schedule.h"

namespace loom::te {

using BoundMap = std::unordered_map<IterVar, Range, ObjectHash, ObjectEqual>;

// The range of every iteration variable (roots and leaves) of every non-inlined stage.
// Ranges of attached stages may mention the loop variables of the loops enclosing them.
BoundMap InferBound(const Schedule& schedule);

// The function computing `args`' outputs from its inputs as the schedule's loop nest, before
// the TIR pipeline; args lists every placeholder the outputs read and the outputs, in
// parameter order (loom::Error naming what is missing).
PrimFunc ScheduleToPrimFunc(const Schedule& schedule, const Array<Tensor>& args,
                            const std::string& name = "main");

// ScheduleToPrimFunc, then tir::DefaultLoweringPipeline() under the current PassContext:
// flat buffers, vector code, ready for code generation. Parameters keep their N-d buffers.
PrimFunc lower(const Schedule& schedule, const Array<Tensor>& args,
               const std::string& name = "main");

}  // namespace loom::te
