// What the primitives that add stages or replace a stage's operation (cache_read,
// cache_write, rfactor) share.
#pragma once

#include <string>

#include "loom/te/schedule.h"

namespace loom::te::detail {

// A stage at the root, its loops the operation's root axes, allocated in `scope`.
Stage NewStage(const Operation& op, const std::string& scope);

// Copies of `axes`: fresh variables of the same names, types and ranges.
Array<IterVar> FreshAxes(const Array<IterVar>& axes);

// A compute writing `original`'s buffers (unregistered: `original` keeps them as its
// tensors) over its axes, with other bodies and reduction axes.
Operation ReplacementOp(const ComputeOpNode& original, Array<IterVar> reduce_axis,
                        Array<PrimExpr> body);

// Points `stage` at `op` and starts its loops over from op's root axes.
void ResetStage(StageNode* stage, const Operation& op);

// A new, registered compute over `axis` (its shape is their extents), one output per body.
Operation NewCompute(const std::string& name, const Array<IterVar>& axis,
                     const Array<IterVar>& reduce_axis, const Array<PrimExpr>& body);

// The variables of `axes`, as indices.
Array<PrimExpr> VarsOf(const Array<IterVar>& axes);

// Where `stage` sits in `stages`.
size_t StageIndex(const Array<Stage>& stages, const Stage& stage);

}  // namespace loom::te::detail
