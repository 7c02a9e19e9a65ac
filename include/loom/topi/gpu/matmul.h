// Matrix products on GPUs (the targets of key "gpu": cuda, opencl): the classic
// shared-memory tiling. Each block computes a tile of C of (threads_y * rows_per_thread) x
// (threads_x * cols_per_thread); each thread accumulates its part in registers: a
// contiguous rows_per_thread x cols_per_thread part, or, `strided`, every threads_y-th row
// and threads_x-th column of the tile, so that neighbouring threads read neighbouring
// elements of the shared tiles and write neighbouring elements of C (the rows and columns
// are virtual threads, each with its own accumulator, interleaved in the thread).
// Every step of tile_k along the reduction, the block's threads copy the
// A and B tiles it needs into shared memory together (each thread a few elements,
// neighbouring threads neighbouring elements), and ThreadSync puts the barriers between the
// copies and the products that read them.
#pragma once

#include <cstdint>

#include "loom/te/operation.h"
#include "loom/te/schedule.h"

namespace loom::topi::gpu {

struct MatmulTiling {
  int threads_y = 16;
  int threads_x = 16;
  int rows_per_thread = 8;
  int cols_per_thread = 8;
  int tile_k = 8;
  bool strided = false;
};

// Schedules `c`, a 2-D te::compute of one te::sum over a 1-D reduction axis whose source
// reads exactly two placeholders `a` and `b` (C[i, j] = sum_k A[i, k] * B[k, j] and its
// transposed forms), for a GPU target with `tiling`. Sizes the tiles do not divide are
// guarded.
void ScheduleSharedMatmul(te::Schedule& s, const te::Tensor& c, const te::Tensor& a,
                          const te::Tensor& b, const MatmulTiling& tiling);

}  // namespace loom::topi::gpu
