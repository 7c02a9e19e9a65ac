// The generic GPU schedule (targets of key "gpu": cuda, opencl), which takes every operator a
// GPU strategy has nothing more specific for. Injective stages that are not outputs are
// inlined into their consumers, and every other stage (the outputs, reductions, products,
// convolutions) is a kernel of its own, in one of two shapes:
//  - one thread per output element: the data-parallel loops fused and split into blocks of
//    `threads_per_block` threads, the reduction loops serial in each thread;
//  - one block per output element, for a reduction with no data-parallel loop (to a scalar)
//    or one long enough (at least 32 iterations, a constant) to share among threads while
//    its outputs are too few to keep the device busy (fewer than `parallel_threads`): the
//    reduction loops fused and split across a power of two of threads (at most
//    `threads_per_block`, at most the reduction's length), which combine their partial
//    results (a cross-thread reduction); consecutive threads read consecutive iterations of
//    the innermost reduction loop. A reduction to a scalar of at least 2^16 iterations runs
//    in two kernels: up to 1024 blocks' partial results (an rfactor stage), then one block
//    combining them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "loom/te/schedule.h"

namespace loom::topi::gpu {

struct GenericSchedule {
  int threads_per_block;
  int64_t parallel_threads;
};

// Why `outs` cannot be scheduled so (a stage that is not a te::compute, or a 0-d one that is
// not a reduction), or nothing when it can.
std::optional<std::string> GenericScheduleUnsupported(const Array<te::Tensor>& outs);

te::Schedule schedule_generic(const Array<te::Tensor>& outs, const GenericSchedule& options);

}  // namespace loom::topi::gpu
