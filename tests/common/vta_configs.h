// VTA configurations the tests share. Header-only.
#pragma once

#include "loom/vta/config.h"

namespace loom::testing {

// A non-default core: BATCH 2, BLOCK 8, 16-bit accumulators, a 32 KiB accumulator buffer
// (1024 elements, fewer than the input buffer's 2048) and a 64 KiB weight buffer.
inline vta::VTAConfig Batch2Block8Config() {
  vta::VTAConfig config = vta::VTAConfig::Default();
  config.log_batch = 1;
  config.log_block = 3;
  config.log_acc_width = 4;
  config.log_acc_buff_size = 15;
  config.log_wgt_buff_size = 16;
  config.Validate();
  return config;
}

}  // namespace loom::testing
