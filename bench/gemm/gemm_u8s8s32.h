// The integer GEMM of the benchmark, C[M, N] = A[M, K] x B[K, N] (row-major; A uint8, B int8,
// C int32, exact), written as a tensor expression whose inner loops tensorize onto AVX-512
// VNNI's vpdpbusd, lowered by Loom; loom::build compiles it (the host needs avx512vnni).
//
// vpdpbusd adds to each of 16 int32 lanes the dot product of 4 unsigned bytes of one operand
// with 4 signed bytes of the other. The schedule:
//   - B is packed into the VNNI layout Bp[N / 16][K / 4][16][4] (zero past K, clamped past
//     N): the 4 consecutive k of 16 consecutive columns are one 64-byte vector, built (when
//     no padding is needed) from 4 16-byte rows of B by a second intrinsic;
//   - the output is computed in register tiles of mr rows x nr columns (a padded accumulator
//     stage in "local" scope attached under the tile loop); per 4 k, each of the mr rows
//     broadcasts its 4 bytes of A to all lanes and does nr / 16 vpdpbusd, the loop of 16
//     columns x 4 k being tensorized onto topi::x86::VnniDot16x4();
//   - columns are grouped in blocks of nc (packed panels of a block stay in L2 while every
//     row tile of A streams past them), and (column block, row tile) pairs run in parallel.
#pragma once

#include <cstdint>

#include "loom/ir/module.h"

namespace loom::bench {

struct GemmU8S8S32Params {
  // Register tile: mr rows x nr columns of int32 accumulators, mr * nr / 16 zmm registers of
  // the 32. 8 x 32 keeps 16 accumulators (enough independent chains to cover vpdpbusd's
  // latency at two per cycle), 2 B vectors and a broadcast in registers, and loads 10 values
  // per 16 vpdpbusd. Against 4 x 64 (as many accumulators, 8 loads) it halves the packed B
  // re-read from L2 per multiply (a 32 x K panel per 8 rows, whose 8 x K bytes of A stay in
  // L1), which measured as fast at 1024^3 and faster at 2048^3. Both divide power-of-two
  // sizes, which then need no partial tiles.
  int64_t mr = 8;
  int64_t nr = 32;
  // Columns per block: the packed panels of a block stay in L2 while every row tile of A
  // streams past them. 0 picks as many panels as fit in packed_b_block_bytes (K x nc bytes
  // of packed B; half of this machine's 2 MiB L2, as in gemm_f32: 1024 columns at K = 1024).
  // Against the former fixed nc = 256 it measured as fast or faster on 1 thread; 2 threads
  // were too noisy to tell the two apart.
  int64_t nc = 0;
  int64_t packed_b_block_bytes = int64_t{1} << 20;
  // Copies of the tile's loop over groups of 4 k per iteration (loop overhead against code
  // size); the largest factor up to this that divides the groups is used (4 at K = 1024,
  // 2 at K = 1000).
  int64_t k_unroll = 4;
};

// The lowered function gemm_u8s8s32(A, B, C) for these sizes (loom::Error if a size or a
// parameter is not positive, or nr is not a multiple of 16 or nc of nr).
PrimFunc MakeGemmU8S8S32(int64_t M, int64_t N, int64_t K, const GemmU8S8S32Params& params = {});

}  // namespace loom::bench
