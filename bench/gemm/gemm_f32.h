// The float32 GEMM of the benchmark, C[M, N] = A[M, K] x B[K, N] (row-major): the operator
// library's x86 dense layer (loom/topi/x86/dense.h) with B packed inside the timed function,
// as the BLAS baselines get B unpacked. dense.h describes the schedule: B in column panels,
// register tiles of tile_rows x tile_columns accumulators over the whole K, column blocks
// kept in L2, (column block, row tile) pairs in parallel.
#pragma once

#include <cstdint>

#include "loom/ir/module.h"
#include "loom/topi/x86/dense.h"

namespace loom::bench {

// The tiling. Its defaults are the large square GEMM's (DefaultDenseConfig of 1024^3):
// tile 8 x 32 (16 of the 32 zmm registers), blocks of panels filling 1 MiB (half this
// machine's 2 MiB L2: 256 columns at K = 1024, 128 at K = 2048), the k loop unrolled 8 times
// (8 beat 4 by 1-7% at 1000^3 to 2048^3 on 1 and 2 threads against oneDNN in one process,
// and 4 beat 1 and 2).
using GemmF32Params = topi::x86::DenseConfig;

// The lowered function gemm_f32(A, B, C) for these sizes (loom::Error if a size is out of
// [1, 2^24], if M * max(K, N) or the packed weight's K * N (N rounded up to whole panels)
// reaches 2^30 elements, the limit of pack_dense_weight and dense_packed, or if the config
// is invalid: see DenseConfig).
PrimFunc MakeGemmF32(int64_t M, int64_t N, int64_t K, const GemmF32Params& params = {});

}  // namespace loom::bench
