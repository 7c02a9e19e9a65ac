// The serialized form of a GPU module, shared by the OpenCL and CUDA loaders: a JSON object
// of its format, its code (OpenCL C, PTX) under a key of the module's and its kernels'
// descriptions. Private to src/runtime.
#pragma once

#include <string>
#include <vector>

#include "loom/runtime/device_kernel.h"

namespace loom::runtime {

struct DeviceModuleParts {
  std::string code;
  std::vector<DeviceKernelInfo> kernels;
};

std::string SerializeDeviceModule(const std::string& format, const std::string& code_key,
                                  const DeviceModuleParts& parts);
// A malformed module, or one of another format, is a loom::Error naming `what` ("a CUDA
// module") and saying the artifact must be compiled again.
DeviceModuleParts ParseDeviceModule(const std::string& bytes, const std::string& format,
                                    const std::string& code_key, const std::string& what);

}  // namespace loom::runtime
