// For the tests that run OpenCL kernels: they skip, saying why, on a machine with no OpenCL
// driver (this project's machines run them on PoCL).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "loom/runtime/ndarray.h"
#include "loom/support/error.h"

namespace loom::testing {

inline constexpr DLDevice kOpenCLDevice{kDLOpenCL, 0};

// Empty when opencl:0 is there; why not otherwise (the runtime's error).
inline std::string OpenCLMissing() {
  try {
    runtime::NDArray::Empty({1}, DataType::Float(32), kOpenCLDevice);
    return "";
  } catch (const Error& error) {
    return error.what();
  }
}

}  // namespace loom::testing

#define LOOM_SKIP_WITHOUT_OPENCL()                                        \
  if (std::string why = ::loom::testing::OpenCLMissing(); !why.empty()) { \
    GTEST_SKIP() << "no OpenCL device here: " << why;                     \
  }
