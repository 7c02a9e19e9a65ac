// For the VTA compiler's tests: lowering that keeps the on-chip allocations.
#pragma once

#include "loom/ir/pass_context.h"

namespace loom::vta::testing {

// While it lives, lowering keeps the on-chip allocations (vta.RemoveSramAllocations is off): for
// schedules that leave on-chip buffers to the host, to run in the interpreter or to test a pass.
class KeepSramAllocations {
 public:
  KeepSramAllocations() : scope_(Context()) {}

 private:
  static transform::PassContext Context() {
    transform::PassContext context;
    context.disabled_passes = {"vta.RemoveSramAllocations"};
    return context;
  }
  transform::PassContextScope scope_;
};

}  // namespace loom::vta::testing
