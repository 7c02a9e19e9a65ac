// For the VTA compiler's tests that run programs: the simulator's hazard check on for the
// test, and the thread's last VTA error cleared after it.
#pragma once

#include <gtest/gtest.h>

#include "loom/vta/runtime.h"

namespace loom::vta::testing {

class HazardCheckedTest : public ::testing::Test {
 protected:
  void SetUp() override { VTASetDebugMode(VTATLSCommandHandle(), VTA_DEBUG_CHECK_HAZARDS); }
  void TearDown() override {
    VTASetDebugMode(VTATLSCommandHandle(), 0);
    VTAClearLastError();
  }
};

}  // namespace loom::vta::testing
