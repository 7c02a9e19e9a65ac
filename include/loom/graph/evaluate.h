// Evaluating one graph operator call on concrete arrays with Loom itself: placeholders of
// the inputs, the operator's TE compute, the group schedule of the call (ScheduleGroup),
// te::lower and build for `target`, then the compiled kernel run on the arrays. Constant
// folding computes its constants this way (with the code generator and float semantics of
// the target the model is compiled for); tests use it as the reference interpreter of graphs.
// Kernels are cached per operator, attributes, input types and target, so calls alike
// (every batch norm of one width) compile once per process.
//
//   runtime::NDArray sum = EvaluateCall(*add_call, {a, b}, Target::Parse("llvm"));
#pragma once

#include <vector>

#include "loom/graph/expr.h"
#include "loom/runtime/ndarray.h"
#include "loom/target/target.h"

namespace loom::graph {

// The outputs of `call` (one per field when its type is a tuple) computed from `inputs`,
// one host array per argument. The arrays fix the shapes: an argument of symbolic shape
// takes the array's, and the output shapes follow from the operator's type relation. An
// array whose dtype, rank or constant dimensions differ from its argument's type is a
// loom::Error naming the call, as is an operator without a compute.
std::vector<runtime::NDArray> EvaluateCallOutputs(const CallNode& call,
                                                  const std::vector<runtime::NDArray>& inputs,
                                                  const Target& target);

// The output of `call`, whose type must be a tensor (EvaluateCallOutputs for tuples).
runtime::NDArray EvaluateCall(const CallNode& call, const std::vector<runtime::NDArray>& inputs,
                              const Target& target);

}  // namespace loom::graph
