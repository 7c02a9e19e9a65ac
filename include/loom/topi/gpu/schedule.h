// The generic GPU schedule (targets of key "gpu": cuda, opencl), which takes every operator a
// GPU strategy has nothing more specific for: injective stages that are not outputs are
// inlined into their consumers, and every other stage (the outputs, reductions, products,
// convolutions) is a kernel of its own with one thread per output element: its data-parallel
// loops fused and split into blocks of `threads_per_block` threads, its reduction loops
// serial in each thread.
#pragma once

#include <optional>
#include <string>

#include "loom/te/schedule.h"

namespace loom::topi::gpu {

// Why `outs` cannot be scheduled so (a stage of no data-parallel loop, such as a reduction to
// a scalar, or one that is not a te::compute), or nothing when it can.
std::optional<std::string> ThreadPerElementUnsupported(const Array<te::Tensor>& outs);

te::Schedule schedule_thread_per_element(const Array<te::Tensor>& outs, int threads_per_block);

}  // namespace loom::topi::gpu
