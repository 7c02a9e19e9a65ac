// A square convolution of a square image, padded to keep its size at stride 1: the shapes the
// VTA convolution tests use.
#pragma once

#include <cstdint>

#include "loom/vta/compiler/conv2d.h"

namespace loom::vta::testing {

inline Conv2DWorkload Conv(int64_t in, int64_t out, int64_t size, int64_t kernel, int64_t stride) {
  Conv2DWorkload w;
  w.in_channels = in, w.out_channels = out, w.height = w.width = size;
  w.kernel_h = w.kernel_w = kernel, w.stride_h = w.stride_w = stride;
  w.pad_h = w.pad_w = kernel / 2;
  return w;
}

}  // namespace loom::vta::testing
