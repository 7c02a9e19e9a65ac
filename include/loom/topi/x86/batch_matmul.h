// Batched matrix products (topi::matmul with batch dimensions, as in transformer attention)
// for x86 CPUs with AVX-512: register-tiled, neither operand packed (both are activations).
#pragma once

#include <cstdint>
#include <string>

#include "loom/te/operation.h"
#include "loom/te/schedule.h"

namespace loom::topi::x86 {

// The tiling of schedule_batch_matmul (named for an auto-tuner).
struct BatchMatmulConfig {
  // The register tile: tile_rows x tile_columns accumulators accumulating over the whole K,
  // tile_rows * tile_columns / 16 zmm registers of the 32 (at most 28).
  int64_t tile_rows = 4;
  int64_t tile_columns = 64;  // a multiple of 16
  // Copies of the k loop body per iteration.
  int64_t k_unroll = 4;
  // "tile_rows=4 tile_columns=64 k_unroll=4"
  std::string str() const;
};

// The default tiling for a [..., M, K] x [..., K, N] product (see batch_matmul.cc for the
// measurements).
BatchMatmulConfig DefaultBatchMatmulConfig(int64_t M, int64_t N, int64_t K);

// Schedules `out`: the output of topi::matmul (or batch_matmul_dot) of two operands of at
// least 2 dimensions
// (batch dimensions broadcasting, or none), or an elementwise epilogue of one (a scale, a
// bias, a mask add: injective stages between are inlined and run on the register tile
// before it is stored). (batch, column tile, row tile) triples run in parallel, or (batch,
// row tile) pairs with the column tiles inside when tile_columns does not divide N (the
// partial last tile is then peeled off as scalar code, DefaultBatchMatmulConfig makes it
// one vector wide); within a tile, per k, tile_rows broadcasts of a times tile_columns / 16
// vectors of b. A tile that does not fit the registers is a loom::Error.
// On dot-product instructions (both operands activations, so b is packed when the product
// runs): int8 on AVX-512 VNNI, bfloat16 on AVX-512 BF16 (g: the k one lane sums, 4 / 2):
//   - pack_batch_matmul_dot: b [..., K, N] int8 / bfloat16 as [..., N / 16, ceil(K / g), 16, g],
//     the k past K zero (N must be a multiple of 16): g k of 16 columns are one 64-byte
//     operand.
//   - batch_matmul_dot: sum(a * b) of uint8 / bfloat16 a [..., M, K] (K a multiple of g: the
//     caller pads it with zeros) and b packed as above (the same batch dimensions) ->
//     [..., M, N] int32 / float32. schedule_batch_matmul schedules it: per k group, tile_rows
//     broadcasts of a's g elements times tile_columns / 16 vpdpbusd / vdpbf16ps. int8 is exact
//     (int32 wraps as vpdpbusd does); bfloat16 products are exact, summed in float32.
te::Tensor pack_batch_matmul_dot(const te::Tensor& b);
te::Tensor batch_matmul_dot(const te::Tensor& a, const te::Tensor& packed_b);

te::Schedule schedule_batch_matmul(const te::Tensor& out, const BatchMatmulConfig& config);

}  // namespace loom::topi::x86
