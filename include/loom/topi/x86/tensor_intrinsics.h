// Tensor intrinsics of x86 vector units, for `tensorize` in the x86 schedules.
#pragma once

#include <functional>
#include <vector>

#include "loom/te/tensor_intrin.h"

namespace loom::topi::x86 {

// The int32 lanes of one AVX-512 register, and the bytes one vpdpbusd lane sums.
inline constexpr int kVnniLanes = 16;
inline constexpr int kVnniDepth = 4;

// AVX-512 VNNI's vpdpbusd as the computation c[j] += sum_{k < 4} int32(a[k]) * int32(b[j, k])
// for j < 16: a is 4 uint8, b is 16 x 4 int8 (row-major, contiguous: 64 bytes), c is 16
// int32. Its statements broadcast a's 4 bytes as one int32 to every lane and call vpdpbusd
// on c and b's 64 bytes. Exact: each lane adds four products of at most 2^15 in magnitude
// to int32 (wrapping as int32 addition does; vpdpbusds would saturate instead).
te::TensorIntrin VnniDot16x4();

}  // namespace loom::topi::x86

namespace loom::topi::x86 {

// AMX: a tile holds up to 16 rows of 64 bytes; a bf16 product tile multiplies 16 rows of 32
// bfloat16 by 32 x 16 bfloat16 (stored as 16 rows of 16 pairs) into 16 x 16 float32.
inline constexpr int kAmxMaxRows = 16;
inline constexpr int kAmxBf16Depth = 32;
inline constexpr int kAmxColumns = 16;
// The output columns of one register block: two accumulator tiles side by side.
inline constexpr int kAmxBlockColumns = 2 * kAmxColumns;

// One register block of AMX bf16 products over a whole reduction: C[rows * row_tiles, 32]
// (float32) = sum over the reduction of A (bfloat16, row_tiles tiles of `rows` rows) times B
// (bfloat16, two column halves of 16 pairs x 16 columns x 2). The reduction is `steps`
// (outer loops the statements run, each step 32 deep) times 32. The index functions give,
// in the intrinsic's buffers, A's element (row, depth 0) at a step, B's (pair 0, column) of
// a step, and C's (row, column); a tile's row stride is where row 1 lies from row 0.
struct AmxBf16Block {
  int64_t rows = kAmxMaxRows;  // 1..16
  int64_t row_tiles = 2;       // 1 or 2
  std::vector<int64_t> steps;
  std::function<Array<PrimExpr>(const Array<PrimExpr>& step, const PrimExpr& row)> a_index;
  std::function<Array<PrimExpr>(const Array<PrimExpr>& step, const PrimExpr& pair,
                                const PrimExpr& column)>
      b_index;
  std::function<Array<PrimExpr>(const PrimExpr& row, const PrimExpr& column)> c_index;
};

// The intrinsic computing `op` (a compute over two bfloat16 placeholders, A then B, into
// float32; the caller builds it with the same expression as the stage it tensorizes) by AMX
// tiles: tdpbf16ps on tiles 0-3 (accumulators), 4-5 (A) and 6-7 (B), loaded with the
// configuration the block needs (ldtilecfg) and stored once, after the reduction. A
// block that does not fit the tiles is a loom::Error.
te::TensorIntrin AmxBf16Tiles(const te::Operation& op, const AmxBf16Block& block);

}  // namespace loom::topi::x86
