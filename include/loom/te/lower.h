// Lowering a schedule to loop IR:
//
//   Schedule s = create_schedule({C.op()});
//   ...primitives...
//   PrimFunc f = lower(s, {A, B, C}, "matmul");
//   std::cout << f;                          // reads like tvm.lower(..., simple_mode=True)
//
// lower runs bound inference (the range of every iteration variable of every stage, from
// what the consumers need), builds the loop nest of every stage from its schedule, attaches
// stages at their compute_at points (a non-output stage is allocated there, sized by the
// region bound inference found), and simplifies. Tensors are accessed N-dimensionally:
// flattening buffers to 1-D is a later pass.
#pragma once

#include <string>
#include <unordered_map>

#include "loom/te/schedule.h"

namespace loom::te {

using BoundMap = std::unordered_map<IterVar, Range, ObjectHash, ObjectEqual>;

// The range of every iteration variable (roots and leaves) of every non-inlined stage.
// Ranges of attached stages may mention the loop variables of the loops enclosing them.
BoundMap InferBound(const Schedule& schedule);

// The function computing `args`' outputs from its inputs; args lists every placeholder the
// outputs read and the outputs, in parameter order (loom::Error naming what is missing).
PrimFunc lower(const Schedule& schedule, const Array<Tensor>& args,
               const std::string& name = "main");

}  // namespace loom::te
