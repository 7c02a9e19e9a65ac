// Generic schedules for operator outputs, for any CPU target. Each takes the target's
// vector width as `vector_lanes`, in 32-bit lanes (topi comes before the target layer: the
// graph's strategy passes Target::VectorLanes(32); AVX-512 is 16, AVX2 8, NEON and SSE 4).
// The default is for direct users of topi, such as its tests.
#pragma once

#include "loom/te/schedule.h"

namespace loom::topi {

// The vector width, in 32-bit lanes, when no target gives one.
inline constexpr int kDefaultVectorLanes = 16;

// Elementwise, broadcast and other injective outputs: every injective intermediate stage
// (tag "elemwise", "broadcast" or "injective") is inlined into its consumer, and each
// output's loops are fused into one, split into vectors of `vector_lanes` and, from
// kParallelMinElements elements on (or when the size is symbolic), run in parallel over the
// vectors.
te::Schedule schedule_injective(const Array<te::Tensor>& outs,
                                int vector_lanes = kDefaultVectorLanes);

// Reductions (tag "comm_reduce") and what follows them: each reduction runs in parallel over
// its output elements; when the innermost input dimension is kept, the reduction loops move
// outside it and it is vectorized (a vector of outputs accumulates at once). Injective outputs (mean's
// division) are scheduled as by schedule_injective, injective intermediates inlined.
//
// A long reduction into few outputs (constant sizes, fewer than kRfactorMaxOutputs outputs
// of at least kRfactorMinLength elements each: a full sum, global pooling of few channels,
// argmax of a long vector) would run on a few threads only, so it is split into partial
// reductions (te::Schedule::rfactor): when the innermost reduction axis is read with stride 1
// and is a multiple of the vector width (else half of it, down to 4) long, that many
// partial results per output
// accumulate as one vector; the other reduction loops, fused, are cut into chunks (about 64
// tasks in all, at least 8192 elements each) reduced in parallel; small serial reductions
// then combine the chunks and the lanes. Floating-point results differ from a serial
// reduction by rounding only.
te::Schedule schedule_reduce(const Array<te::Tensor>& outs, int vector_lanes = kDefaultVectorLanes);

// softmax / log_softmax (loom/topi/reduction.h): rows (every dimension but the axis) in
// parallel; per row the maximum, softmax's exponentials (vectors, each evaluated once, read
// by the sum and the output), their sum, then the vectorized output. A reduction along a
// contiguous axis that is a multiple of the vector width long accumulates a vector at a time.
te::Schedule schedule_softmax(const te::Tensor& out, int vector_lanes = kDefaultVectorLanes);

// layer_norm / instance_norm (loom/topi/nn.h) normalizing the dimensions `first`.. of `out`:
// rows (the dimensions before `first`, fused) in parallel; per row the mean and the variance
// (each accumulating a vector at a time where the innermost normalized dimension is a
// multiple of the vector width), then the normalized, scaled and shifted row in vectors.
// `first` must be in [1, out.ndim()).
te::Schedule schedule_layer_norm(const te::Tensor& out, int first,
                                 int vector_lanes = kDefaultVectorLanes);

// Below this many elements a parallel launch costs more than it saves.
inline constexpr int64_t kParallelMinElements = 1 << 15;
// A reduction of at least this many elements per output into fewer than
// kRfactorMaxOutputs outputs is split into partial reductions by schedule_reduce. 256 is
// 16 lanes x 16 threads: with fewer outputs, 16 threads cannot each get a vector of outputs.
inline constexpr int64_t kRfactorMinLength = 1 << 14;
inline constexpr int64_t kRfactorMaxOutputs = 256;

}  // namespace loom::topi
