// The float32 GEMM of the benchmark, C[M, N] = A[M, K] x B[K, N] (row-major), written as a
// tensor expression with an x86 schedule and lowered by Loom; loom::build compiles it.
//
// The schedule is the classic blocked GEMM, expressed with schedule primitives:
//   - B is packed into column panels Bp[N / nr][K][nr] (zero tail past N), so the inner loop
//     reads nr consecutive floats per k;
//   - the output is computed in register tiles of mr rows x nr columns (cache_write-like
//     padded accumulator stage attached under the tile loop), the k loop innermost and the
//     tile's rows unrolled and its columns vectorized: per k, mr broadcasts of A and
//     mr * nr / 16 fused multiply-adds on accumulators that stay in registers;
//   - columns are grouped in blocks of nc (the packed panels of a block stay in L2 while
//     every row tile of A streams past them), and (column block, row tile) pairs run in
//     parallel.
#pragma once

#include <cstdint>

#include "loom/ir/module.h"

namespace loom::bench {

struct GemmF32Params {
  // Register tile: mr rows x nr columns of accumulators (mr * nr / 16 zmm registers of the
  // 32; 8 x 32 leaves room for the B vectors and a broadcast).
  int64_t mr = 8;
  int64_t nr = 32;
  // Columns per block: the packed panels of a block stay in L2 while every row tile of A
  // streams past them. 0 picks as many panels as fit in packed_b_block_bytes (half of this
  // machine's 2 MiB L2: 256 columns at K = 1024, 128 at K = 2048).
  int64_t nc = 0;
  int64_t packed_b_block_bytes = int64_t{1} << 20;
  // Copies of the k loop body per iteration (loop overhead against code size). Measured on
  // this machine against oneDNN in one process: 8 beat 4 by 1-7% at 1000^3 to 2048^3 on 1
  // and 2 threads, and 4 beat 1 and 2.
  int64_t k_unroll = 8;
};

// The lowered function gemm_f32(A, B, C) for these sizes (loom::Error if a parameter is not
// positive or nr is not a multiple of 16).
PrimFunc MakeGemmF32(int64_t M, int64_t N, int64_t K, const GemmF32Params& params = {});

}  // namespace loom::bench
