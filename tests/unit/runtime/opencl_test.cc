// The OpenCL device and modules of the runtime, with a kernel written by hand (the opencl
// target's generated kernels are tested in tests/unit/target/). On this project's machines
// PoCL runs OpenCL on the CPU; without a driver the tests say so and skip.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "error_of.h"
#include "loom/runtime/device_api.h"
#include "loom/runtime/ndarray.h"
#include "loom/runtime/opencl_module.h"
#include "loom/support/error.h"
#include "gpu_device.h"

namespace loom::runtime {
namespace {

using testing::ErrorOf;

constexpr DLDevice kOpenCL = testing::kOpenCLDevice;

// out[i] = a[i] * scale + i, one work-item per element, groups of `threadIdx.x` items.
const char* kScaleSource = R"(
__kernel void scale_add(__global const float* a, __global float* out, float scale, int n) {
  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (i < n) out[i] = a[i] * scale + (float)i;
}
)";

DeviceKernelInfo ScaleKernel() {
  return {"scale_add",
          {DataType::Handle(), DataType::Handle(), DataType::Float(32), DataType::Int(32)},
          {"blockIdx.x", "threadIdx.x"}};
}

std::vector<float> RunScale(const Module& module, int n) {
  std::vector<float> a(n);
  for (int i = 0; i < n; ++i) a[i] = 0.5f * static_cast<float>(i) - 3.0f;
  NDArray a_dev = NDArray::Empty({n}, DataType::Float(32), kOpenCL);
  NDArray out_dev = NDArray::Empty({n}, DataType::Float(32), kOpenCL);
  a_dev.CopyFromBytes(a.data(), a.size() * sizeof(float));
  const int threads = 16;
  module->GetFunction("scale_add")(a_dev->data, out_dev->data, 2.0, n,
                                   int64_t{(n + threads - 1) / threads}, int64_t{threads});
  std::vector<float> out(n);
  out_dev.CopyToBytes(out.data(), out.size() * sizeof(float));
  return out;
}

TEST(OpenCLRuntime, RunsAKernelOnTheDevice) {
  LOOM_SKIP_WITHOUT_OPENCL();
  Module module = OpenCLModuleCreate(kScaleSource, {ScaleKernel()});
  const int n = 100;  // not a whole number of groups: the kernel guards
  std::vector<float> out = RunScale(module, n);
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(out[i], (0.5f * static_cast<float>(i) - 3.0f) * 2.0f + static_cast<float>(i)) << i;
  }
  EXPECT_EQ(DeviceName(kDLOpenCL), "opencl");
}

TEST(OpenCLRuntime, AModuleSurvivesItsBytes) {
  LOOM_SKIP_WITHOUT_OPENCL();
  Module module = OpenCLModuleCreate(kScaleSource, {ScaleKernel()});
  Module loaded = LoadModuleFromBytes("opencl", SerializeOpenCLModule(module), "a test");
  EXPECT_EQ(OpenCLModuleSource(loaded), kScaleSource);
  EXPECT_EQ(RunScale(loaded, 40), RunScale(module, 40));
}

TEST(OpenCLRuntime, CopiesBetweenDeviceBuffersAndAtOffsets) {
  LOOM_SKIP_WITHOUT_OPENCL();
  std::vector<int32_t> data = {1, 2, 3, 4, 5, 6};
  NDArray a = NDArray::Empty({6}, DataType::Int(32), kOpenCL);
  NDArray b = NDArray::Empty({6}, DataType::Int(32), kOpenCL);
  a.CopyFromBytes(data.data(), data.size() * sizeof(int32_t));
  a.CopyTo(b);
  std::vector<int32_t> back(6, 0);
  b.CopyToBytes(back.data(), back.size() * sizeof(int32_t));
  EXPECT_EQ(back, data);
  int32_t middle[2] = {0, 0};
  CopyDataFromTo(b->data, 2 * sizeof(int32_t), middle, 0, sizeof(middle), kOpenCL,
                 DLDevice{kDLCPU, 0});
  EXPECT_EQ(middle[0], 3);
  EXPECT_EQ(middle[1], 4);
}

TEST(OpenCLRuntime, BadCallsAndBadSourcesAreErrors) {
  LOOM_SKIP_WITHOUT_OPENCL();
  Module module = OpenCLModuleCreate(kScaleSource, {ScaleKernel()});
  EXPECT_FALSE(module->GetFunction("missing").defined());
  NDArray a = NDArray::Empty({4}, DataType::Float(32), kOpenCL);
  EXPECT_EQ(ErrorOf([&] { module->GetFunction("scale_add")(a->data, a->data, 1.0, 4); }),
            "OpenCL kernel 'scale_add' takes 4 arguments and 2 launch extents, got 4 values");
  Module broken = OpenCLModuleCreate("__kernel void f(__global float* x) { x[0] = y; }",
                                     {{"f", {DataType::Handle()}, {"threadIdx.x"}}});
  std::string message = ErrorOf([&] { broken->GetFunction("f")(a->data, int64_t{1}); });
  EXPECT_NE(message.find("could not compile the module's kernels"), std::string::npos) << message;
  EXPECT_NE(message.find("'y'"), std::string::npos)
      << "the build log names the problem: " << message;
  EXPECT_EQ(ErrorOf([] {
              OpenCLModuleCreate("", {{"f", {}, {"warpIdx.x"}}});
            }),
            "kernel 'f': unknown thread axis 'warpIdx.x' (expected blockIdx.x/y/z or "
            "threadIdx.x/y/z)");
  EXPECT_EQ(ErrorOf([] {
              NDArray::Empty({1}, DataType::Float(32), DLDevice{kDLOpenCL, 7});
            }).rfind("OpenCL: there is no device opencl:7; the platform", 0),
            0u);
  EXPECT_NE(ErrorOf([] {
              LoadModuleFromBytes("opencl", "{\"format\": 2}", "a test");
            }).find("compile the model again"),
            std::string::npos);
}

}  // namespace
}  // namespace loom::runtime
