// The tuning template of VTA's convolution (graph/tuning.h): its tiling as knobs, so that
// `loom tune --target vta` searches it and `loom compile --records` uses the best.
//
//   graph::TuningWorkload w = Conv2DTuningWorkload(env, workload, acc_operands, 2);
//   std::optional<topi::Config> tuned = graph::QueryTunedConfig(target, w);
//   Conv2DTiling tiling = tuned ? TilingOf(env, workload, acc_operands, *tuned)
//                               : DefaultConv2DTiling(env, workload, acc_operands, 2);
//
// Knobs: "rows" (output rows per tile, a divisor of the output's), "oc_blocks" (output-channel
// blocks per tile, a divisor of the output's) and "virtual_threads" (1 to the target's
// -virtual-threads); a point must divide its channel tiles between its threads and fit the
// on-chip buffers (FootprintOf). A point's cost is the simulator's cycles at the
// configuration's clock (runtime::DeviceAPI::TakeSimulatedSeconds): deterministic, and what
// the hardware would take, not the host's time to simulate it.
//
// The workload's integers: the convolution (batch, in and out channels, height, width, kernel
// rows and columns, strides, padding), the tail's per-element accumulator operands, the most
// virtual threads, then the configuration's parameters (VTAConfig::Parameters): records of
// one configuration do not apply to another. The kernel measured for a point is the
// convolution with a representative tail: a per-channel bias, a shift, the residuals, a clip
// to int8.
#pragma once

#include <cstdint>

#include "loom/graph/tuning.h"
#include "loom/vta/compiler/conv2d.h"

namespace loom::vta {

inline constexpr char kConv2DTemplate[] = "vta.conv2d";

graph::TuningWorkload Conv2DTuningWorkload(const Environment& env, const Conv2DWorkload& workload,
                                           int64_t acc_operands, int64_t max_virtual_threads);

// The tiling of a point of that workload's space; a loom::Error naming the constraint a point
// breaks (a record made for another space).
Conv2DTiling TilingOf(const Environment& env, const Conv2DWorkload& workload, int64_t acc_operands,
                      const topi::Config& config);

// The point of the space that stands for `tiling` (its knobs' values).
topi::Config TuningPointOf(const Conv2DTiling& tiling);

// Registers the template (once; RegisterGraphIntegration does).
void RegisterConv2DTuningTemplate();

}  // namespace loom::vta
