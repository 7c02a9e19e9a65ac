// Tensorize at loop-nest construction: the loops of a stage from a tensorized leaf inward
// become a tensor intrinsic's statements (see Stage::tensorize).
#pragma once

#include "te/schedule_graph.h"

namespace loom::te::detail {

// The leaf of `stage` tensorize was applied to, or -1.
int TensorizedLeaf(const StageNode& stage);

struct TensorizedLoops {
  // Replaces the loops from the tensorized leaf inward.
  Stmt body;
  // Defined when reduction loops lie outside the tensorized ones and the intrinsic has a
  // reduce_init: it belongs just outside the first of those loops.
  Stmt init;
};

// Checks that the loops of `stage` from leaf `first_leaf` inward compute exactly the
// intrinsic's compute and returns its statements bound to the tiles they cover; loom::Error
// naming the stage, the intrinsic and the difference otherwise. `bodies` are the stage's
// bodies over its root variables, `values` every iteration variable over the leaf loops,
// `checks` the bound checks the untensorized loops would need.
TensorizedLoops TensorizeLoops(const StageNode& stage, const Array<PrimExpr>& bodies,
                               const IterVarValueMap& values, const BoundMap& bounds,
                               const Array<PrimExpr>& checks, int first_leaf,
                               arith::Analyzer* analyzer);

// Binds each intrinsic buffer in the statements TensorizeLoops made to the tile it stands
// for, once the tensors' final buffers (allocations included) are in place: its data, element
// offset and strides become the tile's, and its accesses those of the tile.
Stmt BindTensorizedBuffers(const Stmt& stmt);

}  // namespace loom::te::detail
