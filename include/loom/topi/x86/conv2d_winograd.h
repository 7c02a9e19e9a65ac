// Winograd F(4x4, 3x3) conv2d for x86 CPUs in the blocked layouts of conv2d.h.
//
// Each output tile of 4x4 positions is computed from a 6x6 tile of the padded input:
//   Y = A^T [ (G g G^T) (.) (B^T d B) ] A
// (.) being the element-wise product over the 36 transform points, which sums over input
// channels: for each point, one GEMM [tiles x C] x [C x K]. The interpolation points are
// 0, +-1, +-2 and infinity (the matrices of Lavin and Gray, "Fast Algorithms for
// Convolutional Neural Networks"), which keep the float32 error near that of direct
// summation for 3x3 kernels.
//
// Stages (tensors in row-major order; T = N * tiles_h * tiles_w tiles, C input and K
// output channels):
//   data_pad   [N, C / ic_bn, 4 * tiles_h + 2, 4 * tiles_w + 2, ic_bn]  zeros around the input
//   winograd_data     [6, 6, T, C]    B^T d B per tile and input channel
//   transformed weight [6, 6, K/16, C, 16]  G g G^T in panels of 16 filters (each GEMM
//                                    step reads whole contiguous panels)
//   winograd_product  [6, 6, T, K]    the 36 GEMMs
//   output     [N, K / oc_bn, P, Q, oc_bn]  A^T m A, the last tiles cut to P x Q
// Channels are innermost everywhere, so every transform and GEMM step is a 16-lane vector.
#pragma once

#include <cstdint>
#include <string>

#include "loom/te/operation.h"
#include "loom/te/schedule.h"
#include "loom/topi/nn.h"
#include "loom/topi/x86/conv2d.h"

namespace loom::topi::x86 {

// The weight [K, C, 3, 3] (float32, K a multiple of 16) transformed to
// [6, 6, K/16, C, 16]: for each filter G g G^T, filters in panels of 16 so that the GEMMs
// stream the weight sequentially. The layout does not depend on the data's or the output's
// channel blocks.
// A compute (tag "winograd_weight_transform") scheduled by schedule_injective.
te::Tensor winograd_weight_transform(const te::Tensor& weight_kcrs);

// ONNX Conv (3x3 kernel, stride 1, dilation 1, groups 1, any pads) on data
// [N, C / ic_bn, H, W, ic_bn] with a weight from winograd_weight_transform, giving
// [N, K / oc_bn, P, Q, oc_bn]. oc_bn must divide K and be a multiple of 16. Tag
// "conv2d_nchwc_winograd".
te::Tensor conv2d_nchwc_winograd(const te::Tensor& data, const te::Tensor& transformed_weight,
                                 const Conv2DAttrs& attrs, int64_t oc_bn);

// The default configuration for a workload (measurements in the .cc).
WinogradConfig DefaultWinogradConfig(const Conv2DWorkload& workload);

// Schedules `out`: a conv2d_nchwc_winograd output, or an elementwise epilogue of one (bias
// add, ReLU, ...: the injective stages between the convolution and `out` are inlined into
// the output transform). With config.fuse_tile_rows (the default where it applies) each
// parallel iteration runs a whole row of tiles through every stage (its padded input rows,
// input transform, GEMMs and output transform); without it each stage runs in parallel over
// its own loops: the padding, the input transform per tile, the GEMMs per transform point,
// the output transform per row of tiles. A config that does not fit the shapes is a
// loom::Error.
te::Schedule schedule_conv2d_nchwc_winograd(const te::Tensor& out, const WinogradConfig& config);

// Whether MakeConv2DKernel compiles `workload` with Winograd: 3x3, stride 1, dilation 1,
// groups 1, K a multiple of 16, C >= 16 and at least 16 output tiles of 4x4 over the batch
// (below that, reading the 4 times larger transformed weight costs more than Winograd
// saves; the measurements are in the .cc). A workload whose kernel does not fit its padded
// input is a loom::Error.
bool PreferWinograd(const Conv2DWorkload& workload);

}  // namespace loom::topi::x86
