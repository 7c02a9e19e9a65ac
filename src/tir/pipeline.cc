// The default lowering pipeline, in the order it runs. Each pass states the form it expects;
// the order is the one in which those expectations hold. Passes that only make code faster
// or smaller run from opt_level 1 (LoopPartition, StorageRewrite, UnrollLoop, RemoveNoOp,
// SplitGathers);
// at 0 the pipeline does what correct code needs and no more, which `Compile` at -O0 (and
// its tests, against -O3) exercises.
#include "loom/tir/pipeline.h"

namespace loom::tir {

transform::Pass DefaultLoweringPipeline(std::vector<transform::Pass> before_virtual_threads) {
  using namespace transform;
  std::vector<Pass> passes{
          // First: every later pass reasons about flat, 1-D accesses and single-extent
          // allocations, and buffer_dim_align attributes only make sense while buffers still
          // have dimensions.
          StorageFlatten(),
          // Before LoopPartition: peeling a non-divisible pipelined loop would leave an
          // extent-1 part that is no loop, so its double_buffer_scope could not be pipelined.
          // Before StorageRewrite too, which must plan the doubled allocation's real size.
          InjectDoubleBuffer(),
          // Peels the likely() guards of non-divisible splits before vectorizing, so that the
          // main part of a guarded vectorized loop has no condition on its variable and can
          // become vector code (only the peeled edge stays scalar).
          LoopPartition(),
          // Index arithmetic folds on scalars only: (x // 3) * 3 + x % 3 is x before the
          // loop is vectorized, a gather of 16 lanes after (a padded copy of 3-channel rows).
          Simplify(),
          VectorizeLoop(),
      };
  // A target's passes on one thread's program, in the form they expect: flat, with the loops in
  // their final shape, but not yet replicated per virtual thread.
  passes.insert(passes.end(), before_virtual_threads.begin(), before_virtual_threads.end());
  passes.insert(passes.end(), {
          // Virtual threads are interleaved once the loops inside them have their final
          // shape (pipelined, partitioned, vectorized); their per-thread copies of
          // allocations are flat, so this follows StorageFlatten.
          InjectVirtualThread(),
          // Plans storage once every pass that adds, copies or resizes allocations has run.
          StorageRewrite(),
          // Late: unrolled copies would otherwise multiply the work of every pass above.
          UnrollLoop(),
          // Cleans up what the rewrites leave: index arithmetic of the flattened, partitioned
          // and pipelined loops (folded constants, extent-1 loops), then statements that do
          // nothing.
          Simplify(),
          RemoveNoOp(),
          // Last: it reads the vector indices in their final, simplified form (the unrolled
          // copies' constant offsets folded in), and its Shuffles would hide loads from the
          // passes above.
          SplitGathers(),
      });
  return Sequential(std::move(passes), "LoweringPipeline");
}

}  // namespace loom::tir
