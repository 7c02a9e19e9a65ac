// For the VTA compiler's tests: lowering that keeps the on-chip allocations.
#pragma once

#include "loom/ir/pass_context.h"

namespace loom::vta::testing {

// While it lives, lowering leaves parts of a program to the host: no dependency tokens
// (vta.InjectCoprocSync, which refuses host computation among VTA work, is off) and the on-chip
// allocations kept (vta.RemoveSramAllocations is off). For schedules that leave on-chip buffers
// to the host, to run in the interpreter or to test one pass.
class KeepSramAllocations {
 public:
  KeepSramAllocations() : scope_(Context()) {}

 private:
  static transform::PassContext Context() {
    transform::PassContext context;
    context.disabled_passes = {"vta.InjectCoprocSync", "vta.RemoveSramAllocations"};
    return context;
  }
  transform::PassContextScope scope_;
};

}  // namespace loom::vta::testing
