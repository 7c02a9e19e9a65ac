// The shared-memory tiling of a product's loop nest that the GPU matmul and 1x1 convolution
// schedules share (loom/topi/gpu/matmul.h describes it). Private to src/topi/gpu.
#pragma once

#include <vector>

#include "loom/te/schedule.h"
#include "loom/topi/gpu/matmul.h"

namespace loom::topi::gpu::shared_tiling {

// Tiles `output` (a product's stage, or its epilogue's) over its loops `rows` and `columns`,
// its loops `batch` (outside both) fused into blockIdx.z; `local`, the stage of the
// accumulators (scope "local"), is computed in each thread over its whole reduction, split
// by tiling.tile_k at its loop `reduction` (its other reduction loops, a convolution's window,
// run whole inside each step); the
// operands' shared caches `tiles` (the rows operand's first) are fetched at each step of
// tile_k by all the block's threads; with tiling.pad_rows, the rows operand's tile has its
// dimension `row_axis` (an axis of its operation) padded by one element. With
// `columns_in_one_tile` (the columns loop is no longer than a tile's columns), the columns are
// not split into blocks.
void TileThroughSharedMemory(te::Stage output, const std::vector<IterVar>& batch,
                             const IterVar& rows, const IterVar& columns, te::Stage local,
                             const IterVar& reduction, const std::vector<te::Stage>& tiles,
                             const IterVar& row_axis, const MatmulTiling& tiling,
                             bool columns_in_one_tile = false);

// A loom::Error naming `schedule` unless every factor of `tiling` is positive.
void CheckTiling(const MatmulTiling& tiling, const std::string& schedule);

}  // namespace loom::topi::gpu::shared_tiling
