// Lowering a fused graph to loop IR: every primitive function main calls (a fused group,
// FuseOps) becomes one PrimFunc -- its operators' TE computes chained in dataflow order,
// scheduled as a whole by its master call (ScheduleGroup), lowered by te::lower.
//
//   IRModule fused = RunPasses(module, {FuseOps()});
//   LoweredModel lowered = LowerToTIR(fused, Target::Parse("llvm"));
//   runtime::Module kernels = build(lowered.tir, target);
//   lowered.KernelName(call_of_a_group)   // "fused_nn_conv2d_add_nn_relu"
//
// Kernel parameters are the function's parameters (inputs) then its results (outputs), in
// order: the calling convention of the execution graph (docs/graph_artifact.md).
// Groups that are structurally identical (same operators, attributes and parameter types,
// wired the same way) compile once and share one kernel.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "loom/graph/module.h"
#include "loom/ir/module.h"
#include "loom/target/target.h"

namespace loom::graph {

struct LoweredModel {
  loom::IRModule tir;  // one PrimFunc per distinct group on the host, named as its kernel
  // For a device target, the groups an implementation of the device took (OpImplementation),
  // to be built for the device target; tir's are built for its host.
  loom::IRModule device_tir;
  // The kernel of each primitive function of the fused main (keys are the function nodes;
  // the fused module given to LowerToTIR keeps them alive).
  std::unordered_map<const FunctionNode*, std::string> kernel_of;

  // The kernel a call of a primitive function runs (an internal error for another call).
  const std::string& KernelName(const CallNode& call) const;
};

// `fused`'s main must call only primitive functions (FuseOps' result). Their parameters'
// shapes may hold size variables (a sequence length n): the kernel is then generated with
// symbolic extents, and takes tensors of any size, n bound from the shapes it is given (its
// PackedAPI); such groups get each operator's generic schedule, the targets' kernels of
// other layouts being chosen for constant sizes. With a device target, each group goes to
// the device when an implementation registered under the device's keys takes it, to the
// host otherwise. An operator without a compute is a loom::Error naming it. Kernel names
// start with `kernel_prefix` (a program specialized for a bucket keeps its kernels apart from
// the general program's in one module).
LoweredModel LowerToTIR(const IRModule& fused, const Target& target,
                        const std::string& kernel_prefix = "");

// The calls of main's body in execution order (operands first; not the calls inside the
// fused functions they call).
std::vector<const CallNode*> CallsInOrder(const Function& main);

// A string equal for two primitive functions exactly when they compute the same thing from
// parameters of the same types (names and name hints ignored): what identical groups share.
std::string StructuralKey(const Function& function);

}  // namespace loom::graph
