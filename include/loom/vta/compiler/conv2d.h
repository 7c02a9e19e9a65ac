// 2-D convolution on VTA (libloom_vta_compiler): the compute in VTA's blocked layouts, a tiling
// of its output sized to the configuration's on-chip buffers, and the schedule that runs it
// with its element-wise tail on the ALU.
//
//   Conv2DWorkload w{.in_channels = 64, .out_channels = 64, .height = 56, .width = 56,
//                    .kernel_h = 3, .kernel_w = 3, .pad_h = 1, .pad_w = 1};
//   te::Tensor conv = Conv2DPacked(data, kernel, w, env.acc_dtype());  // blocked
//   te::Tensor out = ...;  // element-wise stages of conv (and of int32 or widened int8
//                          // operands), the last a cast to the output type
//   te::Schedule s = ScheduleConv2DPacked(env, out, DefaultConv2DTiling(env, w, 0));
//   PrimFunc f = vta::lower(env, s, {data, kernel, ..., out}, "conv");
//
// Layouts: data [N/b][C/bi][H][W][b][bi], kernel [O/bo][C/bi][KH][KW][bo][bi], the output
// [N/b][O/bo][OH][OW][b][bo], where b, bi and bo are the configuration's batch and blocks.
#pragma once

#include <cstdint>

#include "loom/te/schedule.h"
#include "loom/vta/compiler/environment.h"

namespace loom::vta {

// A convolution's shape (channels in whole blocks of the configuration, the batch a whole
// number of its batch).
struct Conv2DWorkload {
  int64_t batch = 1, in_channels = 0, out_channels = 0, height = 0, width = 0;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;

  int64_t out_height() const { return (height + 2 * pad_h - kernel_h) / stride_h + 1; }
  int64_t out_width() const { return (width + 2 * pad_w - kernel_w) / stride_w + 1; }
  // A loom::Error naming what does not fit `env` (channels not in whole blocks, a window
  // larger than the padded image, ...).
  void Check(const Environment& env) const;
};

// The convolution of the 8-bit `data` and `kernel`, in the layouts above (the blocks are their
// last dimensions), summed in `acc` (the configuration's accumulator type), named
// "conv2d_packed". The padding, when there is any, is a stage of its own that the schedule
// turns into padded LOADs. Shapes that do not match `workload` are a loom::Error.
te::Tensor Conv2DPacked(const te::Tensor& data, const te::Tensor& kernel,
                        const Conv2DWorkload& workload, DataType acc);

// How the schedule tiles the output: tiles of `rows` output rows by `oc_blocks` blocks of output
// channels (each a divisor of the output's), the channel tiles split between
// `virtual_threads` co-processor threads (1, or 2 when the tiles divide between them), whose
// loads then overlap each other's GEMMs.
struct Conv2DTiling {
  int64_t rows = 1, oc_blocks = 1, virtual_threads = 1;
};

// What one tile of `tiling` holds in each on-chip buffer, in elements, all virtual threads
// together. `acc_operands`: the tail's operands loaded into the accumulator per output element
// (a residual: 1); a per-channel operand (a bias) counts as part of every tail.
struct Conv2DFootprint {
  int64_t inp = 0, wgt = 0, acc = 0;
  // Whether each buffer of `env` holds its part.
  bool FitsIn(const Environment& env) const;
};
Conv2DFootprint FootprintOf(const Conv2DWorkload& workload, const Conv2DTiling& tiling,
                            int64_t acc_operands);

// Among the tilings whose tiles fit the on-chip buffers, the one that loads the fewest bytes
// from DRAM (the input once per channel tile, the weights once per row tile), with
// `max_virtual_threads` (1 or 2) where any tiling allows them, else fewer; a loom::Error
// saying what the smallest tile needs when none fits.
Conv2DTiling DefaultConv2DTiling(const Environment& env, const Conv2DWorkload& workload,
                                 int64_t acc_operands, int64_t max_virtual_threads = 2);

// The schedule of `output`: the last of element-wise stages that start from a Conv2DPacked
// result (int32), ending in a cast to the configuration's output type, which the STORE does.
// Per tile: for each block of input channels, the padded input rows and the tile's weights are
// LOADed and the GEMM intrinsic runs over the window; the other stages run on the ALU in the
// accumulator, their operands LOADed into it by stages that copy an input (x[...], int32) or
// widen one (cast(int32, x[...]), int8: ACC_8BIT). A loom::Error when the tail reads an input
// directly or the output is not of the output type.
te::Schedule ScheduleConv2DPacked(const Environment& env, const te::Tensor& output,
                                  const Conv2DTiling& tiling);

// The number of the tail's LOAD stages of `output` that hold a value per output element (a
// residual), the `acc_operands` of its tiling.
int64_t TailAccOperands(const te::Tensor& output);

}  // namespace loom::vta
