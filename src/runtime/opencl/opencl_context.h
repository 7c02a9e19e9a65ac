// The OpenCL ICD loader's functions (opened with dlopen on first use) and the context of
// the first platform's devices, shared by the device API and the modules. Private to
// src/runtime/opencl.
#pragma once

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <mutex>
#include <string>
#include <vector>

namespace loom::runtime::opencl {

// The OpenCL 1.2 entry points Loom calls, resolved from libOpenCL.so.1.
#define LOOM_OPENCL_FUNCTIONS(X)                                                                  \
  X(clGetPlatformIDs)                                                                             \
  X(clGetPlatformInfo) X(clGetDeviceIDs) X(clGetDeviceInfo) X(clCreateContext)                    \
      X(clCreateCommandQueue) X(clCreateBuffer) X(clReleaseMemObject) X(clEnqueueReadBuffer)      \
          X(clEnqueueWriteBuffer) X(clEnqueueCopyBuffer) X(clFinish) X(clCreateProgramWithSource) \
              X(clBuildProgram) X(clGetProgramBuildInfo) X(clCreateKernel) X(clSetKernelArg)      \
                  X(clEnqueueNDRangeKernel) X(clReleaseKernel) X(clReleaseProgram)

struct Library {
#define LOOM_OPENCL_POINTER(name) decltype(&::name) name = nullptr;
  LOOM_OPENCL_FUNCTIONS(LOOM_OPENCL_POINTER)
#undef LOOM_OPENCL_POINTER
};

// The platform's devices, one context over all of them and an in-order queue each.
struct Context {
  Library cl;
  std::string platform_name;
  std::vector<cl_device_id> devices;
  std::vector<std::string> device_names;
  cl_context context = nullptr;
  std::vector<cl_command_queue> queues;
};

// The process's OpenCL context, made on first use; a loom::Error when the ICD loader, a
// platform or a device is missing (saying what was looked for and what to install).
Context& GlobalContext();

// The queue of opencl:`device_id`; a loom::Error naming the devices there are otherwise.
cl_command_queue QueueOf(int device_id);

// A loom::Error naming `call`, the OpenCL error code and `what` when `status` is not
// CL_SUCCESS.
void Check(cl_int status, const char* call, const std::string& what);

}  // namespace loom::runtime::opencl
