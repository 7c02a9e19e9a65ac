// Products on AMX tiles, tensorized onto AmxTiles: conv2d and dense with bfloat16 operands
// and float32 sums (tdpbf16ps; what a model compiled with --precision bf16 runs on a CPU with
// amx-bf16), and conv2d and dense of uint8 data and int8 weights with int32 sums (tdpbusd;
// what the integer products of a quantized model run on a CPU with amx-int8).
//
// Layouts (32: the depth of a step, kAmxDepth, and the output columns of a register block,
// kAmxBlockColumns; g: 2 for bfloat16, 4 for int8):
//   conv2d data    NCHW32c bfloat16 / uint8        [N, C/32, H, W, 32]
//   conv2d weight  packed bfloat16 / int8          [K/32, C/32, R, S, 32/g, 32, g]
//                  (weight[k, c, r, s] at [k/32, c/32, r, s, (c%32)/g, k%32, c%g])
//   conv2d output  NCHW32c float32 / int32         [N, K/32, P, Q, 32]
//   dense data     [..., M, K] bfloat16 / uint8; weight [N, K] packed as
//                  [N/32, K/d, d/g, 32, g] (the conv2d's packing with R = S = 1 and steps d
//                  deep: 32 bfloat16 or 64 int8, a tile's 64 bytes); output [..., M, N]
//                  float32 / int32
// Each register block is `rows x row_tiles` output positions (columns of a conv2d's output
// row, rows of a dense layer's) by 32 output channels, accumulated over the whole reduction
// in four accumulator tiles and stored once.
#pragma once

#include <cstdint>

#include "loom/te/operation.h"
#include "loom/te/schedule.h"
#include "loom/topi/nn.h"

namespace loom::topi::x86 {

// How a register block covers `extent` output positions: row_tiles tiles of `rows` rows each
// (rows <= 16, row_tiles <= 2), rows * row_tiles dividing extent, as many positions per
// block as divide it (56 -> 2 x 14, 128 -> 2 x 16, 7 -> 1 x 7).
struct AmxRowTiling {
  int64_t rows = 1;
  int64_t row_tiles = 1;
  int64_t block() const { return rows * row_tiles; }
};
AmxRowTiling ChooseAmxRowTiling(int64_t extent);

// A float32 or bfloat16 KCRS weight -> [K/32, C/32, R, S, 16, 32, 2], or a dense weight [N, K]
// -> [N/32, K/32, 16, 32, 2], bfloat16 (rounded to nearest even): the layouts above. The
// first two dimensions must be multiples of 32. Tag "injective"; a model's weight is a
// constant, so FoldConstant packs it at compile time.
te::Tensor pack_weight_bf16(const te::Tensor& weight);
// An int8 KCRS weight -> [K/32, C/32, R, S, 8, 32, 4] int8 (K and C multiples of 32), a dense
// one [N, K] -> [N/32, K/64, 16, 32, 4] (N a multiple of 32, K of 64). Tag "injective".
te::Tensor pack_weight_amx_int8(const te::Tensor& weight);

// ONNX Conv semantics (as topi::conv2d_nchw, groups 1) on the layouts above, products of
// bfloat16 values summed in float32. Tag "conv2d_nchwc_bf16".
te::Tensor conv2d_nchwc_bf16(const te::Tensor& data, const te::Tensor& packed_weight,
                             const Conv2DAttrs& attrs);
// The same of uint8 data and the int8 packed weight, sum(data * weight) exactly in int32, the
// border padded with `pad_value` (the data's zero point). Tag "conv2d_nchwc_amx_int8".
te::Tensor conv2d_nchwc_amx_int8(const te::Tensor& data, const te::Tensor& packed_weight,
                                 const Conv2DAttrs& attrs, int64_t pad_value);

// The input of a convolution of few channels (C * S <= 32, as a network's 3-channel 7x7 stem)
// with its kernel columns unfolded into one block of channels: NCHW data [N, C, H, W] ->
// [N, 1, H + top + bottom, Q, 32] where lane s * C + c of output column q holds the padded
// input at row h, column q * stride_w + s - left, channel c (lanes from C * S on are 0).
// conv2d_nchwc_bf16 of it with the weight laid out [K, S * C, R, 1], strides (stride_h, 1), no
// padding and dilations (dilation_h, 1) is the convolution: the S columns become tile depth. A
// loom::Error when C * S > 32 or the column dilation is not 1. Tag "unfold_columns_nchwc"; it reads
// a stage of the padded rows channels last.
te::Tensor unfold_columns_nchwc(const te::Tensor& data, const Conv2DAttrs& attrs,
                                int64_t kernel_columns);
// Its schedule: the padded rows, then each window one vector copy, both in parallel rows.
te::Schedule schedule_unfold_columns(const te::Tensor& out);

// Schedules `out`: a conv2d_nchwc_bf16 or conv2d_nchwc_amx_int8 output or an elementwise
// epilogue of it of the same shape; `attrs` are the convolution's. Tasks are (image, channel
// block, output row); each register block is one AmxTiles call, copied out through the
// epilogue in 16-lane vectors.
te::Schedule schedule_conv2d_nchwc_amx(const te::Tensor& out, const Conv2DAttrs& attrs);

// data [..., M, K] bfloat16 x the packed weight -> [..., M, N] float32. Tag "dense_bf16".
te::Tensor dense_bf16(const te::Tensor& data, const te::Tensor& packed_weight);
// data [..., M, K] uint8 x the int8 packed weight -> [..., M, N] int32, exactly. Tag
// "dense_amx_int8".
te::Tensor dense_amx_int8(const te::Tensor& data, const te::Tensor& packed_weight);

// Schedules `out`: a dense_bf16 or dense_amx_int8 output or an elementwise epilogue of it of
// the same shape. Tasks are (the leading indices, column block, row block), one AmxTiles call
// each.
te::Schedule schedule_dense_amx(const te::Tensor& out);

}  // namespace loom::topi::x86
