// For the tests that run GPU kernels: they skip, saying why, on a machine without the device
// (this project's machines run OpenCL on PoCL and have no CUDA GPU; scripts/gpu-check.sh runs
// the CUDA tests where one is lent).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "loom/runtime/ndarray.h"
#include "loom/support/error.h"

namespace loom::testing {

inline constexpr DLDevice kOpenCLDevice{kDLOpenCL, 0};
inline constexpr DLDevice kCUDADevice{kDLCUDA, 0};

// Empty when `device` is there; why not otherwise (the runtime's error).
inline std::string DeviceMissing(DLDevice device) {
  try {
    runtime::NDArray::Empty({1}, DataType::Float(32), device);
    return "";
  } catch (const Error& error) {
    return error.what();
  }
}

}  // namespace loom::testing

#define LOOM_SKIP_WITHOUT_DEVICE(device, what)                                    \
  if (std::string why = ::loom::testing::DeviceMissing(device); !why.empty()) { \
    GTEST_SKIP() << "no " << (what) << " device here: " << why;                   \
  }
#define LOOM_SKIP_WITHOUT_OPENCL() \
  LOOM_SKIP_WITHOUT_DEVICE(::loom::testing::kOpenCLDevice, "OpenCL")
