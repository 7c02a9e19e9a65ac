// conv2d (NCHW) on GPUs, with its elementwise epilogue. Direct (any groups): each thread
// computes `channels_per_thread` output channels of one output pixel in registers, so every
// input element it loads feeds that many products; neighbouring threads take neighbouring
// pixels (coalesced loads and stores), blocks of `threads` pixels (blockIdx.y) times groups
// of channels and images (blockIdx.x). Reductions are serial per thread.
//
// A convolution of one group is a matrix product per image (an implicit GEMM): the weight
// (output channels x input channels and their R x S windows) times the data's windows (input
// channels and windows x pixels). The tiled schedule tiles it through shared memory as
// schedule_matmul_shared does (loom/topi/gpu/matmul.h), output channels as rows and pixels
// as columns, each reduction step tile_k input channels with whole windows: the weight's
// tile_k x R x S per output channel and the data's rectangle under the block's pixels (the
// windows are never materialized). Each block takes whole image rows (as many as a tile's
// columns hold, at least one; blockIdx.z with the images), so that the rectangle has one
// size.
#pragma once

#include "loom/te/schedule.h"
#include "loom/topi/gpu/matmul.h"

namespace loom::topi::gpu {

// `out`: a conv2d_nchw (topi::conv2d_nchw, tag "conv2d_nchw"), or an epilogue of its shape
// computed from one through injective stages; a loom::Error otherwise.
te::Schedule schedule_conv2d_nchw_direct(const te::Tensor& out, int threads,
                                         int channels_per_thread);

// `out` as above, its convolution of one group (else a loom::Error), any kernel, strides,
// dilations and padding; `tiling` strided (each thread's pixels strided by the threads:
// contiguous ones could span two rows of the image), else a loom::Error.
te::Schedule schedule_conv2d_nchw_tiled(const te::Tensor& out, const MatmulTiling& tiling);

// `out` as above, its convolution depthwise (one input channel per group, any channel
// multiplier; else a loom::Error): a block per image channel and whole output rows (as many
// as `threads` threads hold, a thread per pixel; or `threads` columns of a longer row), the
// input rectangle under them (one channel, with the window's margins) fetched into shared
// memory by the block's threads together, each thread's window then read from there.
te::Schedule schedule_depthwise_conv2d_nchw_shared(const te::Tensor& out, int threads);

}  // namespace loom::topi::gpu
