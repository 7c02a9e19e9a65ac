// The VTA lowering pipeline, in the order it runs: the default TIR pipeline first (its
// StorageRewrite hoists the allocations that live together, which PlanSram relies on), then
// the VTA passes, each stating the form it expects.
#include "loom/tir/pipeline.h"

#include "loom/te/lower.h"
#include "loom/vta/compiler/passes.h"

namespace loom::vta {

tir::transform::Pass LoweringPipeline(const Environment& env) {
  return tir::transform::Sequential(
      {
          // Before the default pipeline: StorageRewrite would otherwise give the ALU stages'
          // tensors shared slots, and the in-place form could no longer be found.
          AluInPlace(),
          // Tokens go into one thread's program, flattened so that consecutive work on one
          // queue shares a co-processor scope; InjectVirtualThread then replicates each scope,
          // tokens included, per thread.
          tir::DefaultLoweringPipeline({LiftAllocToScopeBegin(), InjectCoprocSync()}),
          // Last of all so far: places the on-chip allocations in their final shape (virtual
          // threads' copies and double buffers included) and checks that they fit.
          PlanSram(env),
          // Needs the places; before FoldUopLoop, which reads the micro-ops' indices.
          ResolveSramAddresses(env),
          // Needs every on-chip allocation placed, to give each LOAD and STORE its on-chip
          // element.
          InjectDma(env),
          // Needs the accumulator allocations placed, like InjectDma.
          InjectAlu(env),
          // After every pass that makes micro-op kernels: moves the loops around them inside,
          // then makes the outermost two hardware loops.
          LiftUopScope(env),
          FoldUopLoop(),
          // Last: every on-chip access is an instruction by now, or a user error.
          RemoveSramAllocations(env),
      },
      "vta.LoweringPipeline");
}

PrimFunc lower(const Environment& env, const te::Schedule& schedule, const Array<te::Tensor>& args,
               const std::string& name) {
  return LoweringPipeline(env)(te::ScheduleToPrimFunc(schedule, args, name));
}

}  // namespace loom::vta
