// Dense layers (data x weight, the weight a constant) for x86 CPUs with AVX-512: the weight
// is packed once into column panels, and the product is a blocked GEMM with register tiles.
//
// Layout of the packed weight (panel width nr = DenseConfig::tile_columns):
//   packed [ceil(N / nr), K, nr]   packed[p, k, l] = weight column p * nr + l at row k,
//                                  zero past N
// so the inner loop of the product reads nr consecutive floats per k. An int8 weight (AVX-512
// VNNI) packs 4 consecutive k of each column together, a bfloat16 one (AVX-512 BF16) 2:
//   packed [ceil(N / nr), K / g, nr, g]  packed[p, q, l, k] = column p * nr + l at row gq + k
// so that one 64-byte vector holds the g k of 16 columns, what one vpdpbusd (vdpbf16ps)
// multiplies by 4 broadcast bytes (2 broadcast bfloat16) of a data row.
//
// The schedule is the classic blocked GEMM:
//   - the output is computed in register tiles of tile_rows x nr accumulators (a stage padded
//     to whole panels, attached under the tile loop), the k loop innermost, the tile's rows
//     unrolled and its columns one 16-lane vector each: per k, tile_rows broadcasts of the
//     data and tile_rows * nr / 16 fused multiply-adds on accumulators held in registers;
//   - panels are grouped in column blocks that stay in L2 while every row tile of the data
//     streams past them, and (column block, row tile) pairs run in parallel;
//   - an elementwise epilogue (bias, activation) runs on the tile before it is stored.
#pragma once

#include <cstdint>
#include <string>

#include "loom/te/operation.h"
#include "loom/te/schedule.h"
#include "loom/topi/config_space.h"

namespace loom::topi::x86 {

// The tiling of dense_packed (named for an auto-tuner). tile_columns is also the packed
// weight's panel width, so the weight must be packed with the config it is scheduled with.
struct DenseConfig {
  // The register tile: tile_rows x tile_columns accumulators, tile_rows * tile_columns / 16
  // zmm registers of the 32 (at most 28: the weight vectors and a broadcast need the rest).
  int64_t tile_rows = 8;
  int64_t tile_columns = 32;  // a multiple of 16
  // Columns per block (a multiple of tile_columns); 0 picks as many panels as fit in
  // block_bytes. The panel count of a block is then lowered to a divisor of the panel count
  // (a block past the last panel would need a bound check per element).
  int64_t block_columns = 0;
  int64_t block_bytes = int64_t{1} << 20;
  // Copies of the k loop body per iteration (loop overhead against code size).
  int64_t k_unroll = 8;
  // "tile_rows=8 tile_columns=32 block_columns=0 block_bytes=1048576 k_unroll=8"
  std::string str() const;
};

// The default tiling for data [M, K] x weight [K, N] (see dense.cc for the measurements).
DenseConfig DefaultDenseConfig(int64_t M, int64_t N, int64_t K);

// The tuning space of data [M, K] x weight [K, N] (tuning_spaces.cc). Knobs: tile_rows,
// tile_columns, block_panels (block_columns / tile_columns; 0: by block_bytes) and
// k_unroll. DefaultDenseConfig is a point of it.
ConfigSpace DenseConfigSpace(int64_t M, int64_t N, int64_t K);
Config DenseConfigOf(const DenseConfig& config);
// The tiling a point stands for; a config of another space, or one that breaks a
// constraint, is a loom::Error naming the knob or the constraint.
DenseConfig DenseConfigFrom(int64_t M, int64_t N, int64_t K, const Config& config);

// Panels of config.tile_columns columns (each `panel_bytes` once packed) per column block:
// block_columns / tile_columns when given, else as many as fit in block_bytes; lowered to a
// divisor of the panel count, so that no block reaches past the last panel (a block split
// that did not divide would put a bound check on every element of the tail's tiles). Shared
// by every GEMM schedule that blocks packed panels. A panel count, panel size or
// tile_columns that is not positive, or block_columns that is no multiple of tile_columns,
// is a loom::Error (the register tile is not checked: other GEMMs have their own).
int PanelsPerBlock(int64_t panels, int64_t panel_bytes, const DenseConfig& config);

// The weight in column panels of config.tile_columns: weight is [K, N] (ONNX MatMul's B) or,
// when `transposed`, [N, K] (ONNX Gemm with transB = 1, a Linear layer's weight). float32, or
// int8 with K a multiple of 4, or bfloat16 with K even (the layouts above).
// Tag "dense_pack"; computed once per model when the weight is a constant (schedule it with
// schedule_dense_pack, or let schedule_dense_packed schedule it when it is in the graph).
te::Tensor pack_dense_weight(const te::Tensor& weight, bool transposed, const DenseConfig& config);

// data [..., M, K] x the packed weight -> [..., M, N] (float32; leading dimensions of data
// are fused into the rows); with an int8 packed weight and uint8 data exactly in int32 (the
// k loop tensorized onto vpdpbusd); with a bfloat16 packed weight and bfloat16 data in
// float32, each product exact (onto vdpbf16ps). N is the weight's column count before
// packing. Tag "dense_packed".
te::Tensor dense_packed(const te::Tensor& data, const te::Tensor& packed_weight, int64_t N);

// Schedules `out`: a dense_packed output, or an elementwise epilogue of one (bias add,
// ReLU, ...: the injective stages between are inlined and run on the register tile). A
// pack_dense_weight stage in the graph is scheduled too (panels in parallel). A config that
// does not fit (a tile wider than the registers, panels of another width) is a loom::Error.
te::Schedule schedule_dense_packed(const te::Tensor& out, const DenseConfig& config);

// Schedules a pack_dense_weight output on its own: panels in parallel, lanes vectorized.
te::Schedule schedule_dense_pack(const te::Tensor& packed_weight);

}  // namespace loom::topi::x86
