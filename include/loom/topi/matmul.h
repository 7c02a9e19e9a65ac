// Matrix products with ONNX semantics, and their generic CPU schedule.
#pragma once

#include "loom/te/operation.h"
#include "loom/te/schedule.h"
#include "loom/topi/schedule.h"

namespace loom::topi {

// numpy.matmul / ONNX MatMul: a [..., M, K] x b [..., K, N] -> [..., M, N], the batch
// dimensions broadcasting; a 1-D a is a row [1, K] and a 1-D b a column [K, 1], whose unit
// dimension the result drops. One dtype for both; integers accumulate in that type. A
// K mismatch is a loom::Error naming both shapes. With `out_dtype` given (float32 for
// bfloat16 operands: a mixed-precision product), each operand is cast to it and the sum
// and the result have that type. Tag "matmul".
te::Tensor matmul(const te::Tensor& a, const te::Tensor& b,
                  DataType out_dtype = DataType::Void());

// Output rows (batch and M fused) in parallel; per row group a register tile of
// `tile_rows` rows x 16 columns accumulates over K (the k loop inside the tile loop, the
// rows unrolled, the columns one AVX-512 vector). Inputs computed by injective stages are
// inlined. `out` is the matmul or an elementwise epilogue of it of its shape (a scale, a
// mask, a bias), which runs on each tile as it is stored.
te::Schedule schedule_matmul(const te::Tensor& out, int tile_rows = 4,
                             int vector_lanes = kDefaultVectorLanes);

}  // namespace loom::topi
