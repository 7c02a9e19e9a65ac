// Direct conv2d (NCHW, any groups) on GPUs, with its elementwise epilogue: each thread
// computes `channels_per_thread` output channels of one output pixel in registers, so every
// input element it loads feeds that many products; neighbouring threads take neighbouring
// pixels (coalesced loads and stores), blocks of `threads` pixels (blockIdx.y) times groups
// of channels and images (blockIdx.x). Reductions are serial per thread.
//
// A 1 x 1 convolution of one group is a matrix product per image: the weight (output
// channels x input channels) times the data (input channels x pixels); the 1x1 schedule
// tiles it through shared memory as schedule_matmul_shared does (loom/topi/gpu/matmul.h),
// output channels as rows and pixels as columns: each block takes whole image rows (as many
// as a tile's columns hold, at least one; blockIdx.z with the images), so that every tile
// reads a rectangle of the data of one size.
#pragma once

#include "loom/te/schedule.h"
#include "loom/topi/gpu/matmul.h"

namespace loom::topi::gpu {

// `out`: a conv2d_nchw (topi::conv2d_nchw, tag "conv2d_nchw"), or an epilogue of its shape
// computed from one through injective stages; a loom::Error otherwise.
te::Schedule schedule_conv2d_nchw_direct(const te::Tensor& out, int threads,
                                         int channels_per_thread);

// `out` as above, its convolution 1 x 1 and of one group (else a loom::Error), any strides;
// `tiling` strided (each thread's pixels strided by the threads: contiguous ones could span
// two rows of the image), else a loom::Error.
te::Schedule schedule_conv2d_nchw_1x1_shared(const te::Tensor& out, const MatmulTiling& tiling);

}  // namespace loom::topi::gpu
