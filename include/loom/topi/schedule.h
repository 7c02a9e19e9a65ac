// Generic schedules for operator outputs, for any CPU target.
#pragma once

#include "loom/te/schedule.h"

namespace loom::topi {

// Elementwise, broadcast and other injective outputs: every injective intermediate stage
// (tag "elemwise", "broadcast" or "injective") is inlined into its consumer, and each
// output's loops are fused into one, split into 16-lane vectors (one AVX-512 register of
// float32) and, from kParallelMinElements elements on (or when the size is symbolic), run
// in parallel over the vectors.
te::Schedule schedule_injective(const Array<te::Tensor>& outs);

// Below this many elements a parallel launch costs more than it saves.
inline constexpr int64_t kParallelMinElements = 1 << 15;

}  // namespace loom::topi
