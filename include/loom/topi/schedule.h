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

// Reductions (tag "comm_reduce") and what follows them: each reduction runs in parallel over
// its output elements; when the innermost input dimension is kept, the reduction loops move
// outside it and it is vectorized (16 outputs accumulate at once). Injective outputs (mean's
// division) are scheduled as by schedule_injective, injective intermediates inlined.
te::Schedule schedule_reduce(const Array<te::Tensor>& outs);

// softmax / log_softmax (loom/topi/reduction.h): rows (every dimension but the axis) in
// parallel; per row the maximum, softmax's exponentials (16-lane vectors, each evaluated
// once, read by the sum and the output), their sum, then the vectorized output.
te::Schedule schedule_softmax(const te::Tensor& out);

// Below this many elements a parallel launch costs more than it saves.
inline constexpr int64_t kParallelMinElements = 1 << 15;

}  // namespace loom::topi
