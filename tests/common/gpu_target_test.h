// For the tests that build kernels for each GPU target (opencl, cuda): the targets as test
// parameters, skipping without the target's compiler, running kernels on the target's device
// and comparing with the host's results.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "gpu_device.h"
#include "gpu_test_kernels.h"
#include "loom/runtime/cuda_module.h"
#include "loom/runtime/opencl_module.h"

namespace loom::testing {

// One GPU target under test: its kind and its device.
struct GpuTarget {
  std::string kind;
  DLDevice device;
};
inline void PrintTo(const GpuTarget& target, std::ostream* os) { *os << target.kind; }

inline const auto kGpuTargets =
    ::testing::Values(GpuTarget{"opencl", kOpenCLDevice}, GpuTarget{"cuda", kCUDADevice});
inline std::string GpuTargetName(const ::testing::TestParamInfo<GpuTarget>& info) {
  return info.param.kind;
}

// What NVRTC needs to compile cuda kernels here; empty when it is there.
inline std::string CompilerMissingFor(const GpuTarget& target) {
  if (target.kind != "cuda") return "";
  try {
    build(Elementwise(32, 32, true), Target::Parse("cuda"));
    return "";
  } catch (const Error& error) {
    const std::string message = error.what();
    if (message.find("NVRTC, which is not installed") == std::string::npos) throw;
    return message;
  }
}

// Runs `module`'s `name` on `device` with `inputs` and a float32 output of `out_shape`
// (copied there and back); the output on the host.
inline NDArray RunOnDevice(DLDevice device, const runtime::Module& module, const std::string& name,
                           const std::vector<NDArray>& inputs,
                           const std::vector<int64_t>& out_shape) {
  return RunOn(device, module, name, inputs, {{out_shape, DataType::Float(32)}})[0];
}

inline void ExpectNear(const NDArray& got, const NDArray& want, int64_t size, float tolerance) {
  for (int64_t i = 0; i < size; ++i) {
    const float g = static_cast<const float*>(got->data)[i];
    const float w = static_cast<const float*>(want->data)[i];
    ASSERT_NEAR(g, w, tolerance * (1 + std::fabs(w))) << "element " << i;
  }
}

// The device code of a module built for a GPU target: OpenCL C, or CUDA's PTX.
inline std::string DeviceCode(const runtime::Module& module) {
  const runtime::Module& device = module->imports().at(0);
  return device->type_key() == "opencl" ? runtime::OpenCLModuleSource(device)
                                        : runtime::CUDAModulePTX(device);
}

}  // namespace loom::testing

#define LOOM_SKIP_WITHOUT_COMPILER(target)                                           \
  if (std::string why = ::loom::testing::CompilerMissingFor(target); !why.empty()) { \
    GTEST_SKIP() << "cannot compile for " << (target).kind << " here: " << why;      \
  }
