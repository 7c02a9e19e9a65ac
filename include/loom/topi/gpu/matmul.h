// Matrix products on GPUs (the targets of key "gpu": cuda, opencl): the classic
// shared-memory tiling. Each block computes a tile of C of (threads_y * rows_per_thread) x
// (threads_x * cols_per_thread); each thread accumulates its part in registers: a
// contiguous rows_per_thread x cols_per_thread part, or, `strided`, every threads_y-th row
// and threads_x-th column of the tile, so that neighbouring threads read neighbouring
// elements of the shared tiles and write neighbouring elements of C (the rows and columns
// are virtual threads, each with its own accumulator, interleaved in the thread).
// Every step of tile_k along the reduction, the block's threads copy the A and B tiles it
// needs into shared memory together (each thread a few elements, neighbouring threads
// neighbouring elements), and ThreadSync puts the barriers between the copies and the
// products that read them. Batch dimensions (all but the last two, fused) are blockIdx.z.
// `pad_rows` pads each row of the rows operand's shared tile by one element
// (Stage::storage_align), so that threads reading different rows at one reduction step
// (contiguous parts: rows rows_per_thread apart) fall on different memory banks.
// `double_buffer` allocates each shared tile twice (Stage::double_buffer), so that the next
// step's fetch writes one copy while this step's products read the other.
// `vector_width` (1, 2 or 4) has each thread fetch that many neighbouring elements of a tile
// at once, and, with contiguous parts, accumulate and store that many neighbouring columns
// at once: vector loads and stores (float4) where the code generator proves them aligned
// (the operands' rows a multiple of the width long), scalar ones otherwise.
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
  bool pad_rows = false;
  bool double_buffer = false;
  int vector_width = 1;
};

// A schedule of `out`: topi::matmul's output (tag "matmul": C[..., i, j] = sum_k A[..., i, k]
// * B[..., k, j], operands of at least two dimensions, broadcast batch dimensions), or an
// elementwise epilogue of one that keeps its shape (bias, activation), tiled with `tiling`.
// The operands may be injective stages of the inputs (nn.dense's transposed weight): they
// are inlined into the copies to shared memory. Sizes the tiles do not divide are guarded.
te::Schedule schedule_matmul_shared(const te::Tensor& out, const MatmulTiling& tiling);

}  // namespace loom::topi::gpu
