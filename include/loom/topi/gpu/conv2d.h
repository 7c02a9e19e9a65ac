// Direct conv2d (NCHW, any groups) on GPUs, with its elementwise epilogue: each thread
// computes `channels_per_thread` output channels of one output pixel in registers, so every
// input element it loads feeds that many products; neighbouring threads take neighbouring
// pixels (coalesced loads and stores), blocks of `threads` pixels (blockIdx.y) times groups
// of channels and images (blockIdx.x). Reductions are serial per thread.
#pragma once

#include "loom/te/schedule.h"

namespace loom::topi::gpu {

// `out`: a conv2d_nchw (topi::conv2d_nchw, tag "conv2d_nchw"), or an epilogue of its shape
// computed from one through injective stages; a loom::Error otherwise.
te::Schedule schedule_conv2d_nchw_direct(const te::Tensor& out, int threads,
                                         int channels_per_thread);

}  // namespace loom::topi::gpu
