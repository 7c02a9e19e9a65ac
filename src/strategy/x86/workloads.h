// The x86 templates' workloads as the tuning records name them (graph/tuning.h): the integers of a
// conv2d or dense workload, in the order the records keep them.
#pragma once

#include <cstdint>
#include <vector>

#include "loom/graph/tuning.h"
#include "loom/topi/x86/conv2d.h"

namespace loom::strategy::x86 {

inline constexpr char kConv2DTemplate[] = "x86.conv2d";
inline constexpr char kDenseTemplate[] = "x86.dense";

// n, c, h, w, k, r, s, stride (h, w), pads (top, left, bottom, right), dilation (h, w), groups.
graph::TuningWorkload Conv2DTuningWorkload(const topi::x86::Conv2DWorkload& wl);
// The inverse; a loom::Error when `args` is not 16 integers.
topi::x86::Conv2DWorkload Conv2DWorkloadOf(const std::vector<int64_t>& args);

// M, N, K: data [M, K] times weight [N, K].
graph::TuningWorkload DenseTuningWorkload(int64_t m, int64_t n, int64_t k);

}  // namespace loom::strategy::x86
