// The runner on remote devices (MeasureOptions::remote): candidates' kernels, built here,
// checked and timed on a tracker's devices, one worker thread per device.
#pragma once

#include <string>
#include <vector>

#include "loom/autotune/measure.h"

namespace loom::autotune {

struct KernelFiles {
  std::string library, description;  // as the builder wrote them
};

// One result per kernel, in order. A task's default point is run alone with write_reference
// (the results of the others are compared with it). A device that fails
// mid-way (its server died) is given up and its kernel goes to another; when none can be had
// within the request timeout the remaining kernels are runtime errors saying so.
std::vector<MeasureResult> MeasureOnRemoteDevices(const std::vector<KernelFiles>& kernels,
                                                  const std::string& reference,
                                                  bool write_reference,
                                                  const MeasureOptions& options);

}  // namespace loom::autotune
