// Matrix products on tensor cores (warp matrix operations on 16x16x16 tiles), for targets
// with the feature "tensor-core-float16" or "tensor-core-bfloat16" (cuda -arch=sm_70 and up,
// sm_80 and up).
//
// The product must multiply float16 or bfloat16 operands and sum in float32 (topi::matmul
// with out_dtype float32, as --precision bf16 makes them). Each block computes a tile of
// block_rows x block_columns of C with warps_m x warps_n warps (threadIdx.y, threadIdx.z;
// threadIdx.x is the warp's 32 lanes), each warp warp_tiles_m x warp_tiles_n 16x16 tiles
// whose accumulators stay in its fragments over the whole reduction. Every step of
// 16 * k_tiles along the reduction:
//   the block's threads copy the A and B tiles into shared memory (rows padded, so that
//   the warps' fragment loads spread over the memory banks);
//   each warp loads its A and B fragments from them (loom_mma_load) and accumulates
//   (loom_mma_sync) into its accumulators.
// At the end each warp stores its accumulators into a shared tile of C (loom_mma_store),
// and the block's threads copy that to the output through the epilogue (bias, activation).
// All four are tensor intrinsics (Stage::tensorize): their computes are checked against the
// stages they replace. The sizes must divide into the tiles (no guards: every lane of a warp
// runs the matrix operations); TensorCoreTilingFits says whether they do.
#pragma once

#include <cstdint>

#include "loom/te/operation.h"
#include "loom/te/schedule.h"
#include "loom/tir/transform.h"

namespace loom::topi::gpu {

struct TensorCoreTiling {
  int warps_m = 2;
  int warps_n = 2;
  int warp_tiles_m = 2;
  int warp_tiles_n = 2;
  // 16x16 tiles along the reduction per shared-memory step.
  int k_tiles = 2;

  int block_rows() const { return warps_m * warp_tiles_m * kTile; }
  int block_columns() const { return warps_n * warp_tiles_n * kTile; }
  int tile_k() const { return k_tiles * kTile; }
  int threads() const { return warps_m * warps_n * kWarpLanes; }
  // The shared memory the block uses: the A and B tiles of a step and the C tile.
  int64_t shared_bytes(int64_t operand_bytes) const;

  static constexpr int kTile = tir::builtin::kMatrixTile;
  static constexpr int kWarpLanes = 32;
};

// Whether a product of rows x columns over `depth` divides into `tiling`'s tiles.
bool TensorCoreTilingFits(int64_t rows, int64_t columns, int64_t depth,
                          const TensorCoreTiling& tiling);

// The schedule of `out`: topi::matmul's output (float16 or bfloat16 operands, out_dtype
// float32; the operands may be injective stages of the inputs, as nn.dense's transposed
// weight), or an elementwise epilogue of it that keeps its shape; batch dimensions (all but
// the last two, fused) are blockIdx.z. A loom::Error says what it expected when the product
// is not such a one or its sizes do not divide into the tiles.
te::Schedule schedule_matmul_tensor_core(const te::Tensor& out, const TensorCoreTiling& tiling);

}  // namespace loom::topi::gpu
