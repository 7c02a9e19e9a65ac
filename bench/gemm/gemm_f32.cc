#include "gemm_f32.h"

#include "loom/te/lower.h"
#include "loom/te/operation.h"
#include "loom/te/schedule.h"

namespace loom::bench {

PrimFunc MakeGemmF32(int64_t rows, int64_t columns, int64_t depth, const GemmF32Params& params) {
  constexpr int64_t kMaxSize = int64_t{1} << 24;  // shapes are int32 expressions
  LOOM_CHECK_USER(rows > 0 && columns > 0 && depth > 0 && rows <= kMaxSize &&
                  columns <= kMaxSize && depth <= kMaxSize)
      << "MakeGemmF32: sizes must be in [1, 2^24], got M=" << rows << " N=" << columns
      << " K=" << depth;
  const DataType f32 = DataType::Float(32);
  te::Tensor A = te::placeholder({static_cast<int>(rows), static_cast<int>(depth)}, f32, "A");
  te::Tensor B = te::placeholder({static_cast<int>(depth), static_cast<int>(columns)}, f32, "B");
  // Packing B is part of the timed function (the baselines take B unpacked), so the packing
  // stage is in the graph and schedule_dense_packed schedules it too.
  te::Tensor packed_b = topi::x86::pack_dense_weight(B, /*transposed=*/false, params);
  te::Tensor C = topi::x86::dense_packed(A, packed_b, columns);
  return te::lower(topi::x86::schedule_dense_packed(C, params), {A, B, C}, "gemm_f32");
}

}  // namespace loom::bench
