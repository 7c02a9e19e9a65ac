// Tensor intrinsics of x86 vector units, for `tensorize` in the x86 schedules.
#pragma once

#include <functional>
#include <vector>

#include "loom/te/tensor_intrin.h"

namespace loom::topi::x86 {

// The int32 lanes of one AVX-512 register, and the bytes one vpdpbusd lane sums.
inline constexpr int kVnniLanes = 16;
inline constexpr int kVnniDepth = 4;
// The bfloat16 pairs one vdpbf16ps lane (AVX-512 BF16) sums.
inline constexpr int kDpbf16Depth = 2;

// The elements of `dtype` one lane of a dot-product instruction sums: 4 for uint8 and int8
// (vpdpbusd), 2 for bfloat16 (vdpbf16ps); a loom::Error for other types. The kernels built on
// them (conv2d_nchwc_int8 / _dpbf16, dense_packed) group that many reduction elements
// innermost in their packed weights: 64 bytes hold them for 16 outputs either way.
int DotProductDepth(DataType dtype);
// A weight type the dot-product kernels pack (int8 for vpdpbusd, bfloat16 for vdpbf16ps).
bool IsDotProductWeight(DataType dtype);

// AVX-512 VNNI's vpdpbusd as the computation c[j] += sum_{k < 4} int32(a[k]) * int32(b[j, k])
// for j < 16: a is 4 uint8, b is 16 x 4 int8 (row-major, contiguous: 64 bytes), c is 16
// int32. Its statements broadcast a's 4 bytes as one int32 to every lane and call vpdpbusd
// on c and b's 64 bytes. Exact: each lane adds four products of at most 2^15 in magnitude
// to int32 (wrapping as int32 addition does; vpdpbusds would saturate instead).
te::TensorIntrin VnniDot16x4();

// AVX-512 BF16's vdpbf16ps as the computation c[j] += sum_{k < 2} float32(a[k]) *
// float32(b[j, k]) for j < 16: a is 2 bfloat16, b 16 x 2 bfloat16 (row-major, contiguous: 64
// bytes), c 16 float32. Its statements broadcast a's pair as one 32-bit value to every lane
// and call vdpbf16ps on c and b's 64 bytes. Each product of two bfloat16 is exact in float32;
// the instruction adds the two to c one at a time, rounding to nearest even and flushing
// subnormal inputs and results to zero, so a sum differs from a float32 loop's in its last
// bits only.
te::TensorIntrin Dpbf16Dot16x2();
// The intrinsic a dot-product kernel of `dtype` tensorizes its tiles of `lanes` sums onto:
// VnniDot16x4 for uint8 data, Dpbf16Dot16x2 for bfloat16; with lanes = 8 the same on 256-bit
// registers (AVX-512 VL: 8 output channels a block, as 24 filters take without padding).
te::TensorIntrin DotIntrinsicFor(DataType data_dtype, int lanes = kVnniLanes);

// vpdpbusd across kernel taps, for a depthwise convolution (each channel its own filter):
// c[i] += sum_{j < 4} int32(a[j, i]) * int32(b[i, j]) for i < 16. a is 4 taps (input columns)
// of 16 channels, `tap_stride` bytes apart (the data's channel block times the dilation), b
// the 16 channels' 4 taps (row-major, contiguous: 64 bytes), c 16 int32. Its statements load
// a's 64 bytes (one load where the taps are contiguous, tap_stride 16) and transpose them
// into each channel's 4 taps (one byte permutation, vpermb where the CPU has AVX-512 VBMI),
// then vpdpbusd. Exact, as VnniDot16x4.
te::TensorIntrin VnniTapDot16x4(int64_t tap_stride);

}  // namespace loom::topi::x86

namespace loom::topi::x86 {

// AMX: a tile holds up to 16 rows of 64 bytes. The convolutions' blocks reduce 32 elements
// per step (one NCHW32c channel block): a bf16 product (tdpbf16ps) multiplies rows of 32
// bfloat16 by 32 x 16 bfloat16 stored as 16 rows of 16 pairs; an int8 product (tdpbusd) rows
// of 32 uint8 by 32 x 16 int8 stored as 8 rows of 16 quads (half a tile's depth); each into
// 16 x 16 float32 / int32. The dense layers' steps fill the tiles: 64 bytes deep, so 64 int8
// elements (kAmxInt8DenseDepth).
inline constexpr int kAmxMaxRows = 16;
inline constexpr int kAmxDepth = 32;
inline constexpr int kAmxInt8DenseDepth = 64;
inline constexpr int kAmxColumns = 16;
// The output columns of one register block: two accumulator tiles side by side.
inline constexpr int kAmxBlockColumns = 2 * kAmxColumns;

enum class AmxProduct { kBf16, kInt8 };
// The depth elements a B tile row element holds together: 2 bfloat16, 4 int8.
inline int AmxGroup(AmxProduct product) { return product == AmxProduct::kBf16 ? 2 : 4; }

// One register block of AMX products over a whole reduction: C[rows * row_tiles, 32]
// (float32 / int32) = sum over the reduction of A (bfloat16 / uint8, row_tiles tiles of
// `rows` rows) times B (bfloat16 / int8, two column halves of depth / group rows x 16
// columns x group). The reduction is `steps` (outer loops the statements run) times `depth`
// (at most 64 bytes of A's type). The index functions give, in the intrinsic's buffers, A's
// element (row, depth 0) at a step, B's (group 0, column) of a step, and C's (row, column); a
// tile's row stride is where row 1 lies from row 0.
struct AmxBlock {
  AmxProduct product = AmxProduct::kBf16;
  int64_t rows = kAmxMaxRows;  // 1..16
  int64_t row_tiles = 2;       // 1 or 2
  int64_t depth = kAmxDepth;   // elements each step reduces
  std::vector<int64_t> steps;
  std::function<Array<PrimExpr>(const Array<PrimExpr>& step, const PrimExpr& row)> a_index;
  std::function<Array<PrimExpr>(const Array<PrimExpr>& step, const PrimExpr& group,
                                const PrimExpr& column)>
      b_index;
  std::function<Array<PrimExpr>(const PrimExpr& row, const PrimExpr& column)> c_index;
};

// The intrinsic computing `op` (a compute over two placeholders, A then B, of the block's
// product types; the caller builds it with the same expression as the stage it tensorizes)
// by AMX tiles: tdpbf16ps or tdpbusd on tiles 0-3 (accumulators), 4-5 (A) and 6-7 (B),
// loaded with the configuration the block needs (ldtilecfg) and stored once, after the
// reduction. A block that does not fit the tiles, or operands of other types, is a
// loom::Error.
te::TensorIntrin AmxTiles(const te::Operation& op, const AmxBlock& block);

}  // namespace loom::topi::x86
