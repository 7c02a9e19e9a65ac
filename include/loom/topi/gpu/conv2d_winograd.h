// Winograd F(4x4, 3x3) conv2d (NCHW) on GPUs, with its elementwise epilogue.
//
// Each output tile of 4x4 pixels comes from a 6x6 tile of the (zero-padded) input:
//   Y = A^T [ (G g G^T) (.) (B^T d B) ] A
// with the matrices of topi/winograd_transforms.h (those of the x86 Winograd), so for each
// of the 36 transform points one matrix product over the input channels. Stages (T = N x
// tiles_h x tiles_w tiles, C input and K output channels):
//   transformed weight U [6, 6, C, K]   G g G^T per filter (folded at compile time when the
//                                        weight is a constant)
//   winograd_data      V [6, 6, C, T]   B^T d B per tile and input channel
//   winograd_product   M [6, 6, K, T]   the 36 products: M[e][n] = U[e][n]^T x V[e][n]
//   output               [N, K, P, Q]   A^T m A per tile, the last tiles cut to P x Q
// Output channels and tiles innermost in U, V and M, so neighbouring threads read and write
// neighbouring elements in every stage.
#pragma once

#include "loom/te/operation.h"
#include "loom/te/schedule.h"
#include "loom/topi/gpu/matmul.h"
#include "loom/topi/nn.h"

namespace loom::topi::gpu {

// The weight [K, C, 3, 3] (float32) as Winograd F(4x4, 3x3)'s [6, 6, C, K]. A compute
// tagged injective (any generic schedule takes it).
te::Tensor winograd_weight_transform_nchw(const te::Tensor& weight);

// ONNX Conv (3x3 kernel, stride 1, dilation 1, groups 1, any pads) on float32 data
// [N, C, H, W] with a weight from winograd_weight_transform_nchw, giving [N, K, P, Q]; tag
// "conv2d_nchw_winograd". Anything else is a loom::Error that says what it expected.
te::Tensor conv2d_nchw_winograd(const te::Tensor& data, const te::Tensor& transformed_weight,
                                const Conv2DAttrs& attrs);

// Schedules `out`, a conv2d_nchw_winograd output or an elementwise epilogue of its shape
// (inlined into the output transform): the input transform a thread per input channel and
// tile (its 6x6 rows in registers), the 36 products tiled through shared memory with
// `tiling` (output channels as rows, tiles as columns, the transform points on blockIdx.z),
// the output transform a thread per output channel and tile, in blocks of `threads`.
te::Schedule schedule_conv2d_nchw_winograd(const te::Tensor& out, const MatmulTiling& tiling,
                                           int threads);

}  // namespace loom::topi::gpu
